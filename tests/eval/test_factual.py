"""Factual questions after the game: every seat answers every character's questions, the
answers are judged (a model or the lexical judge), and accuracy splits into Own Q and
Other's Q, CQ (civilians' scripts) and MQ (the murderer's), as in ThinkThrice table 6."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.engine.events import Spoke
from jubensha.eval.factual import (
    QUESTIONS_FILE,
    FactualOptions,
    lexical_verdict,
    with_generated,
)
from jubensha.eval.judge import EvalError
from jubensha.llm.base import Request
from jubensha.llm.fake import ScriptedModel
from jubensha.runlog.folder import RunFolder, RunMeta, SeatInfo
from jubensha.scripts import Script, load_script
from jubensha.scripts.io import save_script
from jubensha.scripts.model import Character, FactualQuestion, Kill, TimelineEntry, Truth, Victim
from tests.eval.postgame_helpers import evaluate, play, prompt

runner = CliRunner()
QUESTION = re.compile(r"^Question (\d+): (.*)$", re.MULTILINE)


def question(id_: str, owner: str, text: str, answer: str) -> FactualQuestion:
    return FactualQuestion(id=id_, question=text, answer=answer, character=owner)


QUESTIONS = [
    question("li-1", "Li", "Where did Li bury the knife?", "in the garden"),
    question("li-2", "Li", "When did Li walk to the shed?", "at 21:00"),
    question("wang-1", "Wang", "What did Wang put in the tea?", "poison"),
    question("wang-2", "Wang", "Whose debt did Wang hide?", "his brother's"),
    question("zhou-1", "Zhou", "What did Zhou sleep through?", "the storm"),
]
SCRIPT = Script(
    id="garden", title="Garden", language="en", background="Zhao died after dinner.",
    victims=[Victim(name="Zhao")],
    characters=[
        Character(name="Li", story="Li buried the knife in the garden under the old pear tree.",
                  timeline=[TimelineEntry(time="21:00", text="Li walked to the shed.")]),
        Character(name="Wang", side="murderer", killed=["Zhao"],
                  story="Wang poured poison into the tea at dinner. Wang hid his brother's "
                        "gambling debt from everyone."),
        Character(name="Zhou", story="Zhou slept through the storm in the attic room."),
    ],
    truth=Truth(murderers=["Wang"], kills=[Kill(victim="Zhao", killers=["Wang"])]))
SCRIPT = SCRIPT.model_copy(update={"questions": SCRIPT.questions.model_copy(
    update={"factual": QUESTIONS})})


def run_folder(tmp_path: Path, script: Script = SCRIPT) -> Path:
    source = save_script(script, tmp_path / "garden.yaml")
    folder = RunFolder(tmp_path / "run", RunMeta(
        script_id=script.id, script_source=str(source), language="en",
        procedure={"name": "test"}, seed=0,
        seats={n: SeatInfo(architecture="naive", model="scripted") for n in script.names}))
    folder.write_event(Spoke(index=0, speaker="Li", kind="statement", text="I saw Zhou."))
    folder.close()
    return tmp_path / "run"


def knows(request: Request) -> dict[str, str]:
    """Li knows every answer, Zhou only its own, Wang nothing."""
    seat = request.seat
    owners = {q.question: q for q in QUESTIONS}
    answers = {}
    for number, text in QUESTION.findall(prompt(request)):
        q = owners[text]
        right = seat == "Li" or (seat == "Zhou" and q.character == "Zhou")
        answers[f"a{number}"] = q.answer if right else "no idea"
    return answers


def test_the_lexical_judge_wants_the_reference_answers_key_tokens() -> None:
    assert lexical_verdict("How long has Tom been keeper?", "Three years",
                           "He has served three years.")
    assert not lexical_verdict("How long has Tom been keeper?", "Three years", "Two years")
    assert lexical_verdict("张三把刀藏在哪里？", "花园的井里", "他把刀藏在花园的井里")
    assert not lexical_verdict("张三把刀藏在哪里？", "花园的井里", "厨房")
    # Every token of the answer is already in the question: all of them are needed.
    assert lexical_verdict("Did Tom see Nora or Agnes?", "Nora", "yes, Nora")
    assert not lexical_verdict("Did Tom see Nora or Agnes?", "Nora", "")


async def test_own_q_cq_and_mq_pool_every_seats_judged_answers(tmp_path: Path) -> None:
    model = ScriptedModel(replies={"factual.answer": knows}, name="knows")
    result, calls = await evaluate("factual", run_folder(tmp_path), script=SCRIPT,
                                   seat_model=model, options={"batch": 2})
    assert result.judge == "lexical" and result.questions == 5
    # 3 seats x 5 questions in batches of 2: 3 calls each; the lexical judge calls nothing.
    assert [c.purpose for c in calls] == ["factual.answer"] * 9
    assert (result.own.correct, result.own.judged) == (3, 5)    # Li 2/2, Zhou 1/1, Wang 0/2
    assert (result.cq.correct, result.cq.judged) == (1, 6)      # Li 1/1, Zhou 0/2, Wang 0/3
    assert (result.mq.correct, result.mq.judged) == (2, 4)      # Li 2/2, Zhou 0/2
    assert result.other.accuracy == pytest.approx(3 / 10)
    assert result.seats["Wang"]["mq"].accuracy is None
    assert result.seats["Li"]["other"].accuracy == 1.0
    assert {a.kind for a in result.answers if a.seat == "Wang"} == {"own", "cq"}


async def test_a_judge_model_rules_and_its_failures_are_left_out(tmp_path: Path) -> None:
    answers = ScriptedModel(replies={"factual.answer": knows}, name="knows")

    def rule(request: Request) -> str | dict:
        text = prompt(request)
        if "Whose debt" in text:
            return "not JSON at all"
        reference = re.search(r"Reference answer: (.*)", text).group(1)
        reply = re.search(r"Player's answer: (.*)", text).group(1)
        return {"verdict": "Correct" if reply == reference else "Incorrect"}

    judge = ScriptedModel(replies={"factual.judge": rule}, name="judge")
    result, calls = await evaluate("factual", run_folder(tmp_path), script=SCRIPT,
                                   judge=judge, seat_model=answers)
    assert result.judge == "judge"
    judged = [c for c in calls if c.purpose == "factual.judge"]
    assert all(c.config.temperature == 0.0 for c in judged)
    # Wang-2 ("Whose debt") never gets a verdict: two seats' answers to it are dropped
    # (the third, Wang's own "no idea", is judged too and dropped as well).
    assert result.judge_failures == 3
    assert (result.own.correct, result.own.judged) == (3, 4)
    assert (result.mq.correct, result.mq.judged) == (1, 2)
    assert (result.cq.correct, result.cq.judged) == (1, 6)


async def test_questions_are_generated_once_grounded_and_cached(tmp_path: Path) -> None:
    bare = SCRIPT.model_copy(update={"questions": SCRIPT.questions.model_copy(
        update={"factual": [q for q in QUESTIONS if q.character != "Zhou"]})})
    made = {"questions": [
        {"question": "Where did Zhou sleep?", "answer": "in the attic room",
         "source": "Zhou slept through the storm in the attic room."},
        {"question": "Where did Zhou fly?", "answer": "to the moon",
         "source": "Zhou flew to the moon in a silver rocket."}]}
    judge = ScriptedModel(replies={"factual.generate": lambda r: made}, name="writer")
    run_dir = run_folder(tmp_path, bare)
    result, calls = await evaluate("factual", run_dir, script=bare, judge=judge,
                                   options={"judge": "lexical"})
    generate = [c for c in calls if c.purpose == "factual.generate"]
    assert [c.subject for c in generate] == ["Zhou"]  # only Zhou has no questions; no timeline
    assert "Zhou slept through the storm" in prompt(generate[0])
    assert result.generated == 1 and result.questions == 5  # the invented one is dropped
    cached = yaml.safe_load((run_dir / "eval" / QUESTIONS_FILE).read_text())
    assert [q["question"] for q in cached["questions"]] == ["Where did Zhou sleep?"]
    again, calls = await evaluate("factual", run_dir, script=bare, judge=judge,
                                  options={"judge": "lexical"})
    assert not [c for c in calls if c.purpose == "factual.generate"]
    assert again.questions == 5 and again.generated == 1
    with pytest.raises(EvalError, match="no factual questions"):
        empty = bare.model_copy(update={"questions": bare.questions.model_copy(
            update={"factual": []})})
        await evaluate("factual", run_folder(tmp_path / "2", empty), script=empty)


async def test_a_generated_copy_of_the_script_carries_the_questions(tmp_path: Path) -> None:
    bare = SCRIPT.model_copy(update={"questions": SCRIPT.questions.model_copy(
        update={"factual": []})})
    judge = ScriptedModel(replies={"factual.generate": lambda r: {"questions": [
        {"question": "What is in the story?", "answer": "it",
         "source": prompt(r).split("The text:\n")[1].split("\n")[0]}]}})
    copy = await with_generated(bare, judge, FactualOptions(per_part=3))
    # Li has a story and a timeline, Wang and Zhou a story: one call each part.
    assert [q.character for q in copy.questions.factual] == ["Li", "Li", "Wang", "Zhou"]
    assert len({q.id for q in copy.questions.factual}) == 4


def test_the_factual_questions_command_saves_a_copy_of_the_script(tmp_path: Path) -> None:
    bare = SCRIPT.model_copy(update={"questions": SCRIPT.questions.model_copy(
        update={"factual": []})})
    source = save_script(bare, tmp_path / "bare.yaml")
    out = tmp_path / "with-questions.yaml"
    result = runner.invoke(app, ["eval", "factual-questions", str(source), "--judge",
                                 "scripted", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "factual questions generated" in result.output
    assert load_script(out).title == "Garden"


def test_factual_on_a_played_game_from_the_command_line(tmp_path: Path) -> None:
    run_dir = play(tmp_path / "run")
    result = runner.invoke(app, ["eval", "factual", str(run_dir), "--judge", "scripted",
                                 "--format", "markdown"])
    assert result.exit_code == 0, result.output
    assert "| Own Q | CQ | MQ | Other's Q |" in result.output
    saved = yaml.safe_load((run_dir / "eval" / "factual.json").read_text())
    assert saved["judge"] == "scripted" and saved["questions"] == 44
    assert len(saved["answers"]) == 4 * 44
