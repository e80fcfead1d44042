"""Inferential questions after the game: overall accuracy counts right answers; informed
accuracy also needs the reasoning rated at least 4 of 5 against the reference rationale
(ThinkThrice figure 4 and table 10)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.engine.events import Spoke
from jubensha.llm.base import Request
from jubensha.llm.fake import ScriptedModel
from jubensha.runlog.folder import RunFolder, RunMeta, SeatInfo
from jubensha.scripts import Script
from jubensha.scripts.io import save_script
from jubensha.scripts.model import Character, ChoiceQuestion, Kill, Truth, Victim
from tests.eval.postgame_helpers import evaluate, play, prompt

runner = CliRunner()
OPTIONS = {"a": "Li", "b": "Wang", "c": "Zhou"}
QUESTIONS = [
    ChoiceQuestion(id="q1", question="Who was in the garden at nine?", options=OPTIONS,
                   answer=["a"], set="inferential",
                   rationale="Li buried the knife at nine, so Li was there."),
    ChoiceQuestion(id="q2", question="Who poisoned the tea?", options=OPTIONS, answer=["b"],
                   set="inferential", rationale="Only Wang went near the tea."),
    ChoiceQuestion(id="q3", question="Who slept in the attic?", options=OPTIONS,
                   answer=["c"], set="inferential"),
]
SCRIPT = Script(
    id="garden", title="Garden", language="en", victims=[Victim(name="Zhao")],
    characters=[Character(name="Li", story="Li buried the knife in the garden at nine."),
                Character(name="Wang", side="murderer", killed=["Zhao"],
                          story="Wang poured poison into the tea."),
                Character(name="Zhou", story="Zhou slept in the attic.")],
    truth=Truth(murderers=["Wang"], kills=[Kill(victim="Zhao", killers=["Wang"])]))
SCRIPT = SCRIPT.model_copy(update={"questions": SCRIPT.questions.model_copy(
    update={"choice": QUESTIONS})})
SCORES = {"q1": 5, "q2": 3}


def run_folder(tmp_path: Path) -> Path:
    source = save_script(SCRIPT, tmp_path / "garden.yaml")
    folder = RunFolder(tmp_path / "run", RunMeta(
        script_id="garden", script_source=str(source), language="en", procedure={"name": "t"},
        seed=0, seats={n: SeatInfo(architecture="naive", model="scripted")
                       for n in SCRIPT.names}))
    folder.write_event(Spoke(index=0, speaker="Li", kind="statement", text="Hello."))
    folder.close()
    return tmp_path / "run"


def asked(request: Request) -> ChoiceQuestion:
    return next(q for q in QUESTIONS if f"Question: {q.question}\n" in prompt(request))


def answers(request: Request) -> dict:
    """Li is always right, Zhou only on q1, Wang never."""
    question = asked(request)
    right = request.seat == "Li" or (request.seat == "Zhou" and question.id == "q1")
    wrong = next(k for k in OPTIONS if k not in question.answer)
    return {"reason": f"because of {question.id}", "answer": question.answer[0] if right
            else wrong}


def asked_id(call: object) -> str:
    return next(q.id for q in QUESTIONS if q.question in prompt(call))  # type: ignore[arg-type]


def rating(request: Request) -> dict | str:
    question = next(q for q in QUESTIONS if q.question in prompt(request))
    return {"score": SCORES[question.id]}


async def test_informed_accuracy_needs_a_right_answer_and_reasoning_rated_4(tmp_path: Path
                                                                           ) -> None:
    seats = ScriptedModel(replies={"inferential.answer.dialogue": answers}, name="seats")
    judge = ScriptedModel(replies={"inferential.rationale": rating}, name="judge")
    result, calls = await evaluate("inferential", run_folder(tmp_path), script=SCRIPT,
                                   judge=judge, seat_model=seats)
    assert result.overall == pytest.approx(4 / 9)  # Li 3, Zhou 1, Wang 0 of 3 each
    rated = [c for c in calls if c.purpose == "inferential.rationale"]
    # Only right answers to questions with a reference rationale are rated: Li q1, q2,
    # Zhou q1; q3 has no reference and is not in the informed pool.
    assert sorted((c.subject, asked_id(c)) for c in rated) == [("Li", "q1"), ("Li", "q2"),
                                                             ("Zhou", "q1")]
    assert "Only Wang went near the tea." in prompt(rated[0]) + prompt(rated[1])
    assert result.rated_pool == 6 and result.informed == pytest.approx(2 / 6)
    assert result.seats["Li"].informed == 1 and result.seats["Zhou"].informed == 1
    lenient, _ = await evaluate("inferential", run_folder(tmp_path / "3"), script=SCRIPT,
                                judge=judge, seat_model=seats, options={"threshold": 3})
    assert lenient.informed == pytest.approx(3 / 6)


async def test_a_failed_rating_leaves_the_answer_out_and_no_judge_no_informed_accuracy(
        tmp_path: Path) -> None:
    seats = ScriptedModel(replies={"inferential.answer.dialogue": answers}, name="seats")

    def flaky(request: Request) -> dict | str:
        if request.seat == "Li" and "Who poisoned" in prompt(request):
            return {"score": 9}
        return rating(request)

    judge = ScriptedModel(replies={"inferential.rationale": flaky}, name="flaky")
    result, _ = await evaluate("inferential", run_folder(tmp_path), script=SCRIPT,
                               judge=judge, seat_model=seats)
    assert result.judge_failures == 1 and result.rated_pool == 5
    assert result.informed == pytest.approx(2 / 5)
    alone, calls = await evaluate("inferential", run_folder(tmp_path / "2"), script=SCRIPT,
                                  seat_model=seats)
    assert alone.informed is None and alone.overall == pytest.approx(4 / 9)
    assert {c.purpose for c in calls} == {"inferential.answer.dialogue"}
    assert "needs a judge" in " ".join(alone.notes)


async def test_the_full_script_reader_answers_once_per_question(tmp_path: Path) -> None:
    result, calls = await evaluate("inferential", run_folder(tmp_path), script=SCRIPT,
                                   options={"answerer": "fsa", "samples": 2})
    assert {c.purpose for c in calls} == {"inferential.answer.fsa"}
    assert list(result.seats) == ["FSA"] and result.seats["FSA"].answers == 6
    everything = prompt(calls[0])
    assert all(c.story in everything for c in SCRIPT.characters)


def test_inferential_on_a_played_game_from_the_command_line(tmp_path: Path) -> None:
    run_dir = play(tmp_path / "run")
    result = runner.invoke(app, ["eval", "inferential", str(run_dir), "--judge", "scripted",
                                 "--format", "json"])
    assert result.exit_code == 0, result.output
    saved = json.loads((run_dir / "eval" / "inferential.json").read_text())
    assert saved["questions"] == 8 and len(saved["answers"]) == 4 * 8
    assert saved["judge"] == "scripted" and 0 <= saved["overall"] <= 1
