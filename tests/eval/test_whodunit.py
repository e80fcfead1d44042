"""The WhodunitBench metrics: RP, SPC (judge and lexical), CMD (reasoning statements, a
post-game question, lexical), multiple-choice accuracy by reasoning steps, on crafted
runs, on a WhodunitBench game played with the scripted fake, and on an imported
WhodunitBench script."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from jubensha.engine.events import ClueRevealed, Spoke
from jubensha.engine.procedure import find_procedure
from jubensha.eval.registry import MetricContext
from jubensha.eval.whodunit import (
    choice_questions,
    key_points_metric,
    motive_method_metric,
    role_play_metric,
    step_accuracy_metric,
)
from jubensha.llm.base import Request
from jubensha.llm.fake import ScriptedModel
from jubensha.runlog.folder import RunLog, RunMeta, SeatInfo, read_run
from jubensha.runs.play import PlayConfig, SeatPlan, play_game
from jubensha.scripts import find_script
from jubensha.scripts.importers.whodunitbench import import_whodunitbench
from jubensha.scripts.model import (
    Character,
    ChoiceQuestion,
    Clue,
    Kill,
    QuestionSets,
    Script,
    Truth,
    Victim,
)

PRIVATE = "Ann hid the silver key under the third stair."


def question(qid: str, steps: int | None, answer: str, asked_of: str | None = None
             ) -> ChoiceQuestion:
    return ChoiceQuestion(id=qid, question=f"Question {qid}?", options={"a": "x", "b": "y"},
                          answer=[answer], steps=steps, asked_of=asked_of)


SCRIPT = Script(
    id="stair", title="Stair", language="en", victims=[Victim(name="Vic")],
    characters=[Character(name="Ann", story=PRIVATE),
                Character(name="Bo", side="murderer", killed=["Vic"],
                          story="Bo pushed Vic down the stairs for the inheritance.")],
    clues=[Clue(id="k1", holder="Ann", key=True, text="The silver key was under the stair."),
           Clue(id="k2", holder="Ann", key=True, text="Vic argued with Bo at noon."),
           Clue(id="n1", holder="Ann", text="It rained all day."),
           Clue(id="b1", holder="Bo", text="Bo owns a red coat.")],
    truth=Truth(murderers=["Bo"], kills=[Kill(victim="Vic", killers=["Bo"],
                                              method="pushed him down the stairs",
                                              motive="the inheritance")]),
    questions=QuestionSets(choice=[question("q1", 1, "a"), question("q2", 2, "b"),
                                   question("q3", 2, "a"), question("q4", None, "a"),
                                   question("q5", 1, "a", asked_of="Bo")]))
META = RunMeta(script_id="stair", language="en", procedure={"name": "test"}, seed=0,
               seats={"Ann": SeatInfo(architecture="naive", model="scripted"),
                      "Bo": SeatInfo(architecture="naive", model="scripted")},
               order=["Ann", "Bo"])


def run_of(events: list[Any], meta: RunMeta | None = META) -> RunLog:
    return RunLog(Path("crafted"), meta, [e.model_copy(update={"index": i})
                                          for i, e in enumerate(events)], [], None)


def context(events: list[Any], script: Script = SCRIPT, **kwargs: Any) -> MetricContext:
    return MetricContext(script=script, run=run_of(events), **kwargs)


DISCUSSION = [Spoke(speaker="Ann", kind="clue_share",
                    text="I found that the silver key was under the stair."),
              Spoke(speaker="Ann", kind="statement", text="Nothing else to add."),
              Spoke(speaker="Bo", kind="clue_share", text="I wore my coat.")]


def test_lexical_key_point_coverage_by_hand() -> None:
    result = asyncio.run(key_points_metric(context(DISCUSSION)))
    assert result.method == "lexical"
    # Ann's key points are her two key clues (her plain clue is not one); one is stated.
    assert (result.seats["Ann"].points, result.seats["Ann"].covered) == (2, [1])
    # Bo holds no key clue, so all his clues count: "Bo owns a red coat." is not said.
    assert (result.seats["Bo"].points, result.seats["Bo"].covered) == (1, [])
    assert result.spc == pytest.approx((0.5 + 0.0) / 2)
    assert result.table is not None and result.table.points == 2  # the key clues


def test_judged_coverage_validates_point_numbers() -> None:
    judge = ScriptedModel(replies={"judge.whodunit.spc": [
        *[{"explanation": "-", "covered": [1, 7]}] * 3,  # Ann has 2 points: 7 never validates
        {"explanation": "said twice", "covered": [1, 1]},  # Bo
        {"explanation": "both", "covered": [2, 1, 1]}]})  # the whole table
    result = asyncio.run(key_points_metric(context(DISCUSSION, judge=judge)))
    assert result.method == "judge"
    assert [(f.seat, f.item) for f in result.failures] == [("Ann", "spc")]
    assert "Ann" not in result.seats and result.seats["Bo"].covered == [1]
    assert result.table is not None and result.table.covered == [1, 2]
    assert result.spc == 1.0


def test_role_play_is_judged_per_seat_and_out_of_range_fails() -> None:
    judge = ScriptedModel(replies={"judge.whodunit.rp": [{"reason": "-", "score": 11}] * 3
                                   + [{"reason": "natural", "score": 8}]})
    result = asyncio.run(role_play_metric(context(DISCUSSION, judge=judge)))
    assert [f.seat for f in result.failures] == ["Ann"]
    assert result.seats["Bo"].score == 8 and result.rp == 8
    assert "Ann" in judge.requests[0].messages[0].text


def test_cmd_scores_reasoning_statements_and_asks_a_seat_that_made_none() -> None:
    reasoning = Spoke(speaker="Bo", kind="reasoning",
                      text="Modus operandi: pushed him down the stairs. Motive: money.")
    answerer = ScriptedModel(replies={"whodunit.answer.reasoning": [
        "Modus operandi: poison. Motive: jealousy."]})
    judge = ScriptedModel(replies={"judge.whodunit.cmd": lambda r: {
        "reason": "-", "score": 62 if "jealousy" in r.messages[0].text else 90}})
    events = [*DISCUSSION, reasoning,
              ClueRevealed(clue_id="b1", text="Bo owns a red coat.", audience=["Bo"])]
    result = asyncio.run(motive_method_metric(context(events, judge=judge,
                                                      answerer=answerer)))
    assert result.seats["Bo"].source == "reasoning" and result.seats["Bo"].score == 90
    assert result.seats["Ann"].source == "asked" and result.seats["Ann"].score == 62
    assert result.cmd == 76
    assert "pushed him down the stairs" in result.truth and "inheritance" in result.truth
    # Ann's post-game question shows her own script and what she saw, never Bo's.
    asked = answerer.requests[0]
    text = "\n".join(m.text for m in asked.messages)
    assert asked.seat == "Ann" and "third stair" in text
    assert "inheritance" not in text and "red coat" not in text


def test_cmd_without_a_judge_is_rouge_l_against_the_truth() -> None:
    events = [Spoke(speaker="Bo", kind="reasoning", text="Bo killed Vic.")]
    result = asyncio.run(motive_method_metric(context(
        events, options={"whodunit": {"ask_missing": False}})))
    assert result.method == "lexical" and list(result.seats) == ["Bo"]
    assert 0 < result.seats["Bo"].score < 100  # type: ignore[operator]


def letters(answers: dict[str, str]) -> Any:
    """A scripted seat that answers each question with a fixed letter."""
    def reply(request: Request) -> dict[str, str]:
        text = request.messages[-1].text
        qid = next(q for q in answers if f"Question {q}?" in text)
        return {"reason": "because", "answer": answers[qid]}
    return reply


def test_choice_accuracy_is_split_by_reasoning_steps() -> None:
    answerer = ScriptedModel(replies={"whodunit.answer.dialogue": letters(
        {"q1": "a", "q2": "a", "q3": "a", "q4": "b", "q5": "b"})})
    result = asyncio.run(step_accuracy_metric(context([], answerer=answerer, samples=2)))
    # q4 has no number of steps and is left out; q5 is Bo's alone.
    assert [q.id for q in choice_questions(SCRIPT)] == ["q1", "q2", "q3", "q5"]
    one, two = result.by_steps["1"], result.by_steps["2"]
    assert (one.correct, one.answered) == (4, 6)  # q1 right twice per seat, q5 wrong twice
    assert (two.correct, two.answered) == (4, 8)  # q3 right, q2 wrong
    assert list(result.by_steps) == ["1", "2"]
    assert result.by_seat["Bo"].answered == 8 and result.accuracy == pytest.approx(8 / 14)


def test_an_unparsable_answer_counts_as_wrong() -> None:
    answerer = ScriptedModel(replies={"whodunit.answer.dialogue": lambda r: "I cannot say"})
    result = asyncio.run(step_accuracy_metric(context([], answerer=answerer, samples=1)))
    assert result.accuracy == 0 and result.by_seat["Ann"].unparsed == 3


# -- a WhodunitBench game played with the scripted fake --------------------------------------
@pytest.fixture(scope="module")
def whodunit_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    script = find_script("lighthouse-keeper")
    out = tmp_path_factory.mktemp("whodunit") / "run"
    plans = {c.name: SeatPlan(name=c.name, architecture="whodunit", model="scripted")
             for c in script.characters}
    asyncio.run(play_game(PlayConfig(script=script, procedure=find_procedure("whodunit"),
                                     plans=plans, seed=4, script_source="lighthouse-keeper"), out,
                          models={"scripted": ScriptedModel(seed=4)}))
    return out


def test_every_whodunit_metric_scores_a_played_game_with_a_scripted_judge(
        whodunit_run: Path) -> None:
    run = read_run(whodunit_run)
    script = find_script("lighthouse-keeper")
    ctx = MetricContext(script=script, run=run, judge=ScriptedModel(seed=6), samples=1)
    rp = asyncio.run(role_play_metric(ctx))
    spc = asyncio.run(key_points_metric(ctx))
    cmd = asyncio.run(motive_method_metric(ctx))
    mcq = asyncio.run(step_accuracy_metric(ctx))
    assert set(rp.seats) == set(script.names) and 0 <= rp.rp <= 10  # type: ignore[operator]
    assert spc.table is not None and spc.method == "judge"
    assert {a.source for a in cmd.seats.values()} == {"reasoning"}
    assert 0 <= cmd.cmd <= 100  # type: ignore[operator]
    stepped = [q for q in script.questions.choice if q.steps]
    assert sum(t.answered for t in mcq.by_steps.values()) == len(stepped) * len(script.names)


def test_choice_accuracy_on_an_imported_whodunitbench_script(datasets: Path) -> None:
    script = import_whodunitbench(datasets / "whodunitbench" / "BOLIWU")
    seats = script.names[:2]
    meta = RunMeta(script_id=script.id, language="zh", procedure={"name": "none"}, seed=0,
                   seats={n: SeatInfo(architecture="naive", model="scripted") for n in seats},
                   order=seats)
    ctx = MetricContext(script=script, run=run_of([], meta), samples=1)
    result = asyncio.run(step_accuracy_metric(ctx))
    stepped = [q for q in script.questions.choice if q.steps and q.answer
               and q.asked_of in (None, *seats)]
    assert sum(t.answered for t in result.by_steps.values()) == len(stepped) * len(seats)
    assert {"1", "2"} <= set(result.by_steps)
