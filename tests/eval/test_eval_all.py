"""`jubensha eval all`: every registered metric that applies to a finished run and whose
models are given, the reasons for the others, each result written to RUN_DIR/eval/, and
judge calls logged and cached there."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.engine.procedure import find_procedure
from jubensha.eval.registry import load_metrics
from jubensha.llm.calls import read_calls
from jubensha.llm.fake import ScriptedModel
from jubensha.runs.play import PlayConfig, SeatPlan, play_game
from jubensha.scripts import find_script

MINE = ("mirage", "mirage-cic", "mirage-llm-score", "mirage-rouge", "mirage-trust",
        "whodunit-cmd", "whodunit-mcq", "whodunit-rp", "whodunit-spc")


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    script = find_script("lighthouse-keeper")
    out = tmp_path_factory.mktemp("all") / "run"
    plans = {c.name: SeatPlan(name=c.name, architecture="mirage", model="scripted")
             for c in script.characters}
    asyncio.run(play_game(PlayConfig(script=script,
                                     procedure=find_procedure("mirage").with_options(rounds=1),
                                     plans=plans, seed=7, script_source="lighthouse-keeper"), out,
                          models={"scripted": ScriptedModel(seed=7)}))
    return out


@pytest.fixture
def run_dir(finished: Path, tmp_path: Path) -> Path:
    """A fresh copy of the finished run for each test (evaluation writes into it)."""
    return Path(shutil.copytree(finished, tmp_path / "run"))


def summary(run_dir: Path) -> dict[str, dict[str, str]]:
    data = json.loads((run_dir / "eval" / "all.json").read_text(encoding="utf-8"))
    return {s["metric"]: s for s in data["statuses"]}


def test_without_a_judge_the_judge_metrics_are_skipped_and_say_why(run_dir: Path) -> None:
    result = CliRunner().invoke(app, ["eval", "all", str(run_dir), "--embedder", "none",
                                      "--samples", "1"])
    assert result.exit_code == 0, result.output
    statuses = summary(run_dir)
    assert set(statuses) == set(load_metrics())
    for name in ("mirage-llm-score", "whodunit-rp"):
        assert statuses[name]["status"] == "skipped"
        assert statuses[name]["note"] == "needs --judge MODEL"
    for name in ("mirage", "mirage-trust", "mirage-cic", "mirage-rouge", "whodunit-spc",
                 "whodunit-cmd", "whodunit-mcq"):
        assert statuses[name]["status"] == "scored", statuses[name]
        assert (run_dir / "eval" / f"{name}.json").is_file()
    rouge = json.loads((run_dir / "eval" / "mirage-rouge.json").read_text(encoding="utf-8"))
    assert rouge["method"] == "extractive"
    assert "skipped" in result.output and "needs --judge MODEL" in result.output


def test_with_a_judge_every_metric_of_mine_scores_and_calls_are_logged_and_cached(
        run_dir: Path) -> None:
    args = ["eval", "all", str(run_dir), "--judge", "scripted", "--embedder", "none",
            "--samples", "1", *(x for name in MINE for x in ("--metric", name))]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    assert {s["status"] for s in summary(run_dir).values()} == {"scored"}
    calls = read_calls(run_dir / "eval" / "calls.jsonl")
    purposes = {c.purpose for c in calls}
    assert {"judge.mirage.score", "judge.mirage.reconstruct", "judge.whodunit.rp",
            "judge.whodunit.cmd", "judge.whodunit.spc"} <= purposes
    scores = json.loads((run_dir / "eval" / "mirage.json").read_text(encoding="utf-8"))
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    both = read_calls(run_dir / "eval" / "calls.jsonl")
    assert [c.index for c in both] == list(range(len(both)))
    assert {c.origin for c in both[len(calls):]} == {"cache"}
    summary_data = json.loads((run_dir / "eval" / "all.json").read_text(encoding="utf-8"))
    assert summary_data["cached"] == sum(summary_data["calls"].values()) == len(calls)
    assert json.loads((run_dir / "eval" / "mirage.json").read_text(encoding="utf-8")) \
        == scores


def test_a_metric_that_does_not_apply_is_skipped_with_its_reason(run_dir: Path) -> None:
    events = run_dir / "events.jsonl"
    kept = [line for line in events.read_text(encoding="utf-8").splitlines()
            if json.loads(line)["type"] != "rated"]
    events.write_text("\n".join(kept) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["eval", "all", str(run_dir), "--embedder", "none",
                                      "--metric", "mirage-trust", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["results"] == {}
    assert data["summary"]["statuses"] == [{
        "metric": "mirage-trust", "status": "skipped",
        "note": "no trust/doubt ratings in the run (MIRAGE procedure only)",
        "answers": 0, "failed_answers": 0}]


def test_unknown_metrics_and_bad_options_are_one_line_errors(run_dir: Path,
                                                               tmp_path: Path) -> None:
    unknown = CliRunner().invoke(app, ["eval", "all", str(run_dir), "--metric", "nope"])
    assert unknown.exit_code == 2 and "unknown metric(s) nope" in unknown.output
    options = tmp_path / "options.yaml"
    options.write_text("- not a mapping\n", encoding="utf-8")
    bad = CliRunner().invoke(app, ["eval", "all", str(run_dir), "--options", str(options)])
    assert bad.exit_code == 2 and "options must map metric names" in bad.output
    options.write_text("culprit-rank: {bogus_option: 7}\n", encoding="utf-8")
    bogus = CliRunner().invoke(app, ["eval", "all", str(run_dir), "--options", str(options)])
    assert bogus.exit_code == 2, bogus.output
    assert "culprit-rank.bogus_option: metric culprit-rank takes no options" in bogus.output


def test_options_reach_the_metrics(run_dir: Path, tmp_path: Path) -> None:
    options = tmp_path / "options.yaml"
    options.write_text("mirage:\n  reconstruction: extractive\n  per_part: false\n",
                       encoding="utf-8")
    result = CliRunner().invoke(app, ["eval", "mirage-rouge", str(run_dir), "--judge",
                                      "scripted", "--options", str(options), "--format",
                                      "json"])
    assert result.exit_code == 0, result.output
    seats = json.loads(result.output)["seats"]
    assert all(list(seat["parts"]) == ["whole"] for seat in seats.values())
    assert not (run_dir / "eval" / "calls.jsonl").exists() or \
        not read_calls(run_dir / "eval" / "calls.jsonl")


def test_before_scoring_with_a_slow_model_it_says_how_many_calls(
        run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from jubensha.eval import commands

    monkeypatch.setattr(commands, "takes_time", lambda model: True)  # the fake, as if slow
    result = CliRunner().invoke(app, ["eval", "all", str(run_dir), "--judge", "scripted",
                                      "--embedder", "none", "--samples", "1"])
    assert result.exit_code == 0, result.output
    made = json.loads((run_dir / "eval" / "all.json").read_text(encoding="utf-8"))["calls"]
    assert sum(made.values()) > 0
    assert f"about {sum(made.values()):,} model calls" in result.output
    assert not list(run_dir.parent.glob("jubensha-estimate-*"))  # the dry run left nothing


def test_a_judge_that_cannot_answer_stops_the_evaluation_with_exit_3(
        run_dir: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")  # a cassette that holds no call: a fatal miss
    result = CliRunner().invoke(app, ["eval", "all", str(run_dir), "--judge",
                                      f"replay:{empty}", "--seat-model", f"replay:{empty}",
                                      "--embedder", "none", "--samples", "1"])
    assert result.exit_code == 3, result.output
    assert "stopped: the model" in result.output and "cannot be reached" in result.output
    assert not (run_dir / "eval" / "all.json").exists()  # no result from a dead judge
    failed = read_calls(run_dir / "eval" / "calls.jsonl")
    # It stopped with the calls already in flight (a few dozen of hundreds), all failed.
    assert 0 < len(failed) < 50 and all(record.error for record in failed)


def test_several_runs_end_with_one_table_across_them(finished: Path, tmp_path: Path) -> None:
    runs = []
    for name in ("first", "second"):
        shutil.copytree(finished, tmp_path / name)
        runs.append(str(tmp_path / name))
    result = CliRunner().invoke(app, ["eval", "all", *runs, "--metric", "similarity",
                                      "--metric", "culprit-rank", "--embedder", "none",
                                      "--format", "markdown"])
    assert result.exit_code == 0, result.output
    across = result.output[result.output.rindex("Across 2 runs"):]
    header = next(line for line in across.splitlines() if line.startswith("| run |"))
    assert header == ("| run | similarity.tfidf | similarity.ngram | similarity.chat_tokens "
                      "| culprit-rank.reciprocal_rank |")  # settings (n, script tokens) left out
    rows = [line for line in across.splitlines() if line.startswith(("| first", "| second"))]
    assert len(rows) == 2 and rows[0].split("|")[2:] == rows[1].split("|")[2:]


def test_a_judge_whose_every_answer_is_unusable_fails_its_metrics_with_the_count(
        run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.llm.fake_server import FakeOpenAIServer, completion

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAIServer(respond=lambda body: completion('{"zzz": 1}')) as judge:
        monkeypatch.setenv("OPENAI_BASE_URL", judge.base_url)
        result = CliRunner().invoke(app, ["eval", "all", str(run_dir), "--judge",
                                          "openai:fake", "--seat-model", "scripted",
                                          "--embedder", "none", "--samples", "1"])
    assert result.exit_code == 4, result.output
    statuses = summary(run_dir)
    for name in ("mirage-llm-score", "whodunit-rp", "whodunit-cmd"):
        note = statuses[name]["note"]
        assert statuses[name]["status"] == "failed", statuses[name]
        asked = int(note.split(" of ")[1].split()[0])
        assert note == f"{asked} of {asked} judge answers failed: no score"
        assert not (run_dir / "eval" / f"{name}.json").exists()
    assert statuses["identification"]["status"] == "scored"
    assert statuses["mirage-trust"]["status"] == "scored"


def test_one_metric_whose_judge_answers_are_unusable_says_so_in_one_line(
        run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.llm.fake_server import FakeOpenAIServer, completion

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAIServer(respond=lambda body: completion("no idea")) as judge:
        monkeypatch.setenv("OPENAI_BASE_URL", judge.base_url)
        result = CliRunner().invoke(app, ["eval", "whodunit-rp", str(run_dir), "--judge",
                                          "openai:fake"])
    assert result.exit_code == 4
    last = result.output.strip().splitlines()[-1]  # after the line counting the calls
    assert last == f"{run_dir}: whodunit-rp: failed: 4 of 4 judge answers failed: no score"
    assert not (run_dir / "eval" / "whodunit-rp.json").exists()


@pytest.mark.parametrize("metric", ["identification", "culprit-rank"])
def test_a_run_with_no_vote_has_no_score_in_one_line(run_dir: Path, metric: str) -> None:
    events = run_dir / "events.jsonl"
    kept = [line for line in events.read_text(encoding="utf-8").splitlines()
            if json.loads(line)["type"] not in ("vote_cast", "game_ended")]
    events.write_text("\n".join(kept) + "\n", encoding="utf-8")
    (run_dir / "result.json").unlink()  # as a game stopped before its vote leaves it
    result = CliRunner().invoke(app, ["eval", metric, str(run_dir)])
    assert result.exit_code == 4
    assert result.output.strip() == (f"{run_dir}: {metric}: no score: no vote was cast in "
                                      "this run (it stopped before the vote)")
