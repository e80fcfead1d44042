"""No number from failure (``eval.failure``): a value computed from answers most of which
failed — replies that did not parse, empty answers, ballots the table filled in, a judge
that never answered — is no value. The metric fails with the count (exit 4 alone), under
every grading and reading; a rule's leniency applies only to answers that were given."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.eval.failure import AnswerTally, check_max_failed, note, note_judge, tallied
from jubensha.eval.wellplay import is_correct
from jubensha.llm.base import Request
from jubensha.llm.fake import ScriptedModel
from tests.eval.postgame_helpers import evaluate, play

runner = CliRunner()


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return play(tmp_path_factory.mktemp("failure") / "run")


@pytest.fixture
def run_dir(finished: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(finished, tmp_path / "run"))


def test_the_rule_holds_per_kind_of_answer() -> None:
    tally = AnswerTally()
    tally.add("seat", failed=False, count=8)
    tally.add("judge", failed=True, count=2)
    assert tally.asked == 10 and tally.failed == 2
    # 2 of 10 answers in all, but every judge answer: the seats cannot hide a dead judge.
    assert tally.problem() == "2 of 2 judge answers failed"
    half = AnswerTally()
    half.add("ballot", failed=True, count=2)
    half.add("ballot", failed=False, count=2)
    assert half.problem() is None  # half is not most
    assert half.problem(max_failed=0.25) == "2 of 4 ballots failed"
    assert AnswerTally().problem(max_failed=0) is None  # no answer read, nothing failed


def test_notes_reach_only_the_tally_open_around_them() -> None:
    note("seat", failed=True)  # no tally open: nothing happens
    note_judge("outside")
    with tallied() as tally:
        note("rating", failed=True, count=3)
        note("rating", failed=False, count=0)
        note("seat", failed=True)  # one answer unless told how many
        note("seat", failed=False)
    assert tally.kinds == {"rating": [3, 3], "seat": [2, 1]}
    assert tally.judges == set()


def test_the_judges_a_metric_asked_are_noted_once_each() -> None:
    with tallied() as tally:
        for name in ("openai:judge", "scripted", "openai:judge"):
            note_judge(name)
    assert tally.judges == {"openai:judge", "scripted"}


@pytest.mark.parametrize("value", [-0.1, 1.0, 2.0])
def test_a_threshold_must_be_a_share_below_one(value: float) -> None:
    with pytest.raises(ValueError) as raised:
        check_max_failed(value)
    assert str(raised.value) == (f"max_failed {value}: give a share from 0 (any failed answer "
                                 "fails the metric) up to, not including, 1")


@pytest.mark.parametrize("value", [0.0, 0.5, 0.99])
def test_a_share_below_one_is_the_threshold(value: float) -> None:
    assert check_max_failed(value) == value


def test_the_authors_rule_is_lenient_with_an_empty_answer() -> None:
    # The release's quirk stays available: "" is a substring of every truth ...
    assert is_correct("", "a", multiple=False, rule="authors")
    assert not is_correct("", "a", multiple=False, rule="sets")


@pytest.mark.parametrize("grading", ["authors", "sets", "exact"])
def test_a_game_whose_every_wellplay_answer_failed_has_no_wellplay_score(
        run_dir: Path, tmp_path: Path, grading: str) -> None:
    """... but not with answers that were never given: an endpoint returning no JSON."""
    from tests.llm.fake_server import FakeOpenAIServer, completion

    options = tmp_path / "options.yaml"
    options.write_text(f"wellplay: {{grading: {grading}}}\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch, FakeOpenAIServer(
            respond=lambda body: completion("I would rather not say.")) as server:
        patch.setenv("OPENAI_API_KEY", "sk-test")
        patch.setenv("OPENAI_BASE_URL", server.base_url)
        result = runner.invoke(app, ["eval", "wellplay", str(run_dir), "--seat-model",
                                     "openai:fake", "--samples", "1", "--options",
                                     str(options)])
    assert result.exit_code == 4, result.output
    last = result.output.strip().splitlines()[-1]
    asked = int(last.split(" of ")[1].split()[0])
    assert last == (f"{run_dir}: wellplay: failed: {asked} of {asked} post-game answers "
                    "failed: no score")
    assert asked >= 10
    assert not (run_dir / "eval" / "wellplay.json").exists()


def unparsed_for(question_text: str):
    """A seat model that answers one question with no JSON, the others as the fake does."""
    def reply(request: Request) -> str | None:
        return "no idea" if any(question_text in m.text for m in request.messages) else None
    return reply


async def test_a_failed_answer_is_wrong_under_every_rule_and_counted(run_dir: Path) -> None:
    from jubensha.scripts import find_script

    script = find_script("lighthouse-keeper")
    question = next(q for q in script.questions.choice if q.set == "wellplay"
                    and not q.multiple)
    seat_model = ScriptedModel(replies={"*": unparsed_for(f"Question: {question.question}\n")})
    result, _ = await evaluate("wellplay", run_dir, seat_model=seat_model, samples=1,
                               options={"grading": "authors"})
    failed = [a for a in result.answers if a.error is not None]
    texts = {q.id: q.question for q in script.questions.choice}
    assert failed and {texts[a.question] for a in failed} == {question.question}
    assert all(a.answer == "" and not a.correct for a in failed)  # not "right" for being empty
    assert result.failures == len(failed) < len(result.answers) / 2


def test_eval_all_marks_the_failed_metric_and_the_share_of_failed_answers(
        run_dir: Path) -> None:
    seat_model = "scripted"
    result = runner.invoke(app, ["eval", "all", str(run_dir), "--metric", "wellplay",
                                 "--metric", "identification", "--seat-model", seat_model,
                                 "--samples", "1", "--max-failed", "0", "--embedder", "none",
                                 "--format", "json"])
    assert result.exit_code == 0, result.output
    statuses = {s["metric"]: s for s in json.loads(result.output)["summary"]["statuses"]}
    assert statuses["identification"]["answers"] == 4  # the four final ballots
    assert statuses["identification"]["failed_answers"] == 0
    assert statuses["wellplay"]["status"] == "scored"
    assert statuses["wellplay"]["answers"] > 10
    written = json.loads((run_dir / "eval" / "wellplay.json").read_text(encoding="utf-8"))
    scoring = written["scoring"]
    assert (scoring["judge"], scoring["grading"], scoring["reading"]) == ("none", "authors", "")
    assert scoring["answers"] == statuses["wellplay"]["answers"]
    assert scoring["failed_answers"] == statuses["wellplay"]["failed_answers"]


def ballots_fail(request: Request) -> str | None:
    return "I cannot decide." if request.purpose == "vote" else None


def test_ballots_the_table_filled_in_are_no_identification(tmp_path: Path) -> None:
    from jubensha.engine.procedure import find_procedure
    from jubensha.runs.play import PlayConfig, plan_seats, play_game
    from jubensha.scripts import find_script

    script = find_script("lighthouse-keeper")
    out = tmp_path / "run"
    config = PlayConfig(script=script, procedure=find_procedure("demo"),
                        plans=plan_seats(script, "naive", "scripted"), seed=3)
    result = asyncio.run(play_game(
        config, out, models={"scripted": ScriptedModel(replies={"vote": ballots_fail})}))
    assert result.degraded and result.winner == "none"  # no result: nobody won
    answer = runner.invoke(app, ["eval", "identification", str(out)])
    assert answer.exit_code == 4, answer.output
    assert answer.output.strip().splitlines()[-1] == (
        f"{out}: identification: failed: 4 of 4 ballots failed: no score")
    ranks = runner.invoke(app, ["eval", "culprit-rank", str(out), "--max-failed", "0.99"])
    assert ranks.exit_code == 4, ranks.output


def test_a_game_played_well_scores_its_ballots(run_dir: Path) -> None:
    answer = runner.invoke(app, ["eval", "identification", str(run_dir), "--max-failed", "0"])
    assert answer.exit_code == 0, answer.output


@pytest.mark.parametrize("command", ["wellplay", "all"])
def test_a_failed_re_score_leaves_no_earlier_score_on_disk(run_dir: Path,
                                                           command: str) -> None:
    """The earlier ``eval/wellplay.json`` stayed, unmarked, after a re-score failed."""
    from tests.llm.fake_server import FakeOpenAIServer, completion

    first = runner.invoke(app, ["eval", "wellplay", str(run_dir), "--seat-model", "scripted",
                                "--samples", "1"])
    assert first.exit_code == 0, first.output
    assert (run_dir / "eval" / "wellplay.json").is_file()
    extra = ["--metric", "wellplay", "--embedder", "none"] if command == "all" else []
    with pytest.MonkeyPatch.context() as patch, FakeOpenAIServer(
            respond=lambda body: completion("I would rather not say.")) as server:
        patch.setenv("OPENAI_API_KEY", "sk-test")
        patch.setenv("OPENAI_BASE_URL", server.base_url)
        again = runner.invoke(app, ["eval", command, str(run_dir), *extra, "--seat-model",
                                    "openai:fake", "--samples", "1"])
    assert again.exit_code == 4, again.output
    assert not (run_dir / "eval" / "wellplay.json").exists()
    if command == "all":
        summary = json.loads((run_dir / "eval" / "all.json").read_text(encoding="utf-8"))
        assert summary["statuses"][0]["status"] == "failed"
