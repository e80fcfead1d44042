"""Batches: every game of a spec played into its own run folder, the index kept as games
progress, crashes recorded without stopping the batch, and resuming without repeating a
finished game."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import jubensha.runs.attempt as attempt_module
import jubensha.runs.batch_runner as runner_module
from jubensha.cli import app
from jubensha.engine.events import Event
from jubensha.runlog.folder import read_run
from jubensha.runs.attempt import read_error, spend_of
from jubensha.runs.batch import Batch, BatchError, Update
from jubensha.runs.index import INDEX_FILE, BatchIndex
from jubensha.runs.play import PlayConfig
from jubensha.runs.spec import load_spec
from jubensha.runs.spec_schema import BatchSpec

TINY = str(Path(__file__).parents[1] / "engine" / "tiny_script.yaml")
SPEC = f"""
scripts: [{TINY}, lighthouse-keeper]
architectures: [naive, extractive]
models: scripted
seeds: [0, 1]
embedder: none
"""


def spec_file(tmp_path: Path, extra: str = "", base: str = SPEC) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(base + extra, encoding="utf-8")
    return path


def open_batch(tmp_path: Path, extra: str = "", **kw: Any) -> Batch:
    return Batch.open(load_spec(spec_file(tmp_path, extra)), tmp_path / "batch", **kw)


def play(batch: Batch, **kw: Any) -> Any:
    try:
        return asyncio.run(batch.run(**kw))
    finally:
        batch.close()


def timeless(path: Path) -> list[dict[str, Any]]:
    """A JSONL log without its clock readings."""
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for key in ("time", "latency_s"):
            record.pop(key, None)
        record.get("usage", {}).pop("latency_s", None)
        records.append(record)
    return records


def call_counts(root: Path) -> dict[str, int]:
    return {p.parent.name: len(p.read_text(encoding="utf-8").splitlines())
            for p in root.glob("*/calls.jsonl")}


def test_a_batch_plays_every_game_into_its_own_run_folder(tmp_path: Path) -> None:
    batch = open_batch(tmp_path)
    updates: list[Update] = []
    summary = play(batch, on_update=updates.append)
    root = tmp_path / "batch"
    assert (summary.games, summary.finished, summary.failed, summary.played) == (8, 8, 0, 8)
    for game in batch.games:
        run = read_run(root / game.name)
        assert run.finished and run.meta is not None
        assert (run.meta.seed, run.meta.script_id) == (game.settings.seed, game.script.id)
        assert {s.architecture for s in run.meta.seats.values()} == {game.settings.architecture}
    assert [u.row.status for u in updates].count("running") == 8
    assert (root / "spec.yaml").is_file() and (root / INDEX_FILE).is_file()
    naive = [g for g in batch.games if g.settings.architecture == "naive"]
    assert summary.spent.calls == sum(call_counts(root)[g.name] for g in naive) > 0


def test_a_batch_game_is_the_game_jubensha_play_plays(tmp_path: Path) -> None:
    batch = open_batch(tmp_path)
    play(batch)
    game = next(g for g in batch.games if g.settings.script_id == "lighthouse-keeper"
                and g.settings.architecture == "naive" and g.settings.seed == 1)
    result = CliRunner().invoke(app, ["play", "lighthouse-keeper", "--agents", "naive",
                                      "--model", "scripted", "--seed", "1", "--embedder", "none",
                                      "--out", str(tmp_path / "alone")])
    assert result.exit_code == 0, result.output
    folder = tmp_path / "batch" / game.name
    for log in ("events.jsonl", "calls.jsonl"):
        assert timeless(folder / log) == timeless(tmp_path / "alone" / log)
    assert (folder / "transcript.md").read_text(encoding="utf-8") == \
        (tmp_path / "alone" / "transcript.md").read_text(encoding="utf-8")


def test_results_do_not_depend_on_concurrency(tmp_path: Path) -> None:
    extra = "model_options: {latency_s: 0.002}\n"
    serial = Batch.open(load_spec(spec_file(tmp_path, extra)), tmp_path / "one")
    play(serial, concurrency=1)
    parallel = Batch.open(load_spec(spec_file(tmp_path, extra)), tmp_path / "four")
    play(parallel, concurrency=4)
    for game in serial.games:
        for log in ("events.jsonl", "calls.jsonl"):
            assert timeless(tmp_path / "one" / game.name / log) == \
                timeless(tmp_path / "four" / game.name / log), (game.name, log)
        one = json.loads((tmp_path / "one" / game.name / "result.json").read_text())
        four = json.loads((tmp_path / "four" / game.name / "result.json").read_text())
        for result in (one, four):
            result.pop("duration_s")
            result["usage"]["total"].pop("latency_s")
            result["usage"]["seats"] = result["usage"]["purposes"] = None
        assert one == four


def crash_once(monkeypatch: pytest.MonkeyPatch, names: set[str], after: int = 5) -> set[str]:
    """Make the first attempt at each game in ``names`` raise after ``after`` events."""
    real = attempt_module.play_game
    crashed: set[str] = set()

    async def flaky(config: PlayConfig, out: Path, **kwargs: Any) -> Any:
        name = out.name
        if name in names and name not in crashed:
            crashed.add(name)
            seen = []

            def explode(event: Event) -> None:
                seen.append(event)
                if len(seen) == after:
                    raise RuntimeError("the machine caught fire")

            kwargs["sinks"] = [explode]
        return await real(config, out, **kwargs)

    monkeypatch.setattr(attempt_module, "play_game", flaky)
    return crashed


def test_a_crashing_game_is_recorded_and_the_others_finish(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    batch = open_batch(tmp_path)
    victim = batch.games[2].name
    crash_once(monkeypatch, {victim})
    summary = play(batch)
    assert (summary.finished, summary.failed) == (7, 1)
    folder = tmp_path / "batch" / victim
    error = read_error(folder)
    assert error is not None and error.kind == "error"
    assert "RuntimeError: the machine caught fire" in error.message
    assert "Traceback" in error.traceback
    assert not read_run(folder).finished and len(read_run(folder).events) == 5
    with BatchIndex.of(tmp_path / "batch") as index:
        row = index.get(batch.games[2].id)
    assert row is not None and row.status == "failed" and row.attempts == 1
    assert "the machine caught fire" in (row.error or "")


def test_resume_replays_only_unfinished_games_and_keeps_the_partial_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    batch = open_batch(tmp_path)
    victims = {batch.games[1].name, batch.games[6].name}
    crash_once(monkeypatch, victims)
    play(batch)
    root = tmp_path / "batch"
    finished = {g.name: (root / g.name / "result.json").stat().st_mtime_ns
                for g in batch.games if g.name not in victims}
    calls_before = call_counts(root)

    again = Batch.resume(root)
    summary = play(again)
    assert (summary.finished, summary.failed, summary.played) == (8, 0, 2)
    for name, mtime in finished.items():
        assert (root / name / "result.json").stat().st_mtime_ns == mtime
        assert call_counts(root)[name] == calls_before[name]
    for name in victims:
        assert read_run(root / name).finished
        partial = root / f"{name}.partial-1"
        assert partial.is_dir() and read_error(partial) is not None
    with BatchIndex.of(root) as index:
        rows = {row.name: row for row in index.rows()}
    assert all(rows[n].attempts == 2 for n in victims)
    assert all(rows[n].attempts == 1 for n in finished)
    third = play(open_batch(tmp_path))  # the same spec again: nothing left to do
    assert (third.finished, third.played) == (8, 0)


def test_a_cancelled_batch_resumes_without_losing_or_repeating_games(tmp_path: Path) -> None:
    naive_only = SPEC.replace("[naive, extractive]", "naive").replace("[0, 1]", "[0, 1, 2, 3]")
    path = spec_file(tmp_path, "model_options: {latency_s: 0.005}\n", naive_only)
    batch = Batch.open(load_spec(path), tmp_path / "batch")
    root = tmp_path / "batch"

    async def stop_when_the_fifth_game_starts() -> None:
        task = asyncio.current_task()
        assert task is not None
        started: list[str] = []

        def on_update(update: Update) -> None:
            if update.row.status == "running":
                started.append(update.row.name)
                if len(started) == 5:
                    task.cancel()

        await batch.run(concurrency=2, on_update=on_update)

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(stop_when_the_fifth_game_starts())
    statuses = {row.name: row.status for row in batch.index.rows()}
    batch.close()
    finished = {n for n, s in statuses.items() if s == "finished"}
    stopped = {n for n, s in statuses.items() if s == "failed"}
    assert len(finished) >= 3 and stopped and "running" not in statuses.values()
    assert all(read_error(root / n).kind == "cancelled" for n in stopped)  # type: ignore[union-attr]
    mtimes = {n: (root / n / "result.json").stat().st_mtime_ns for n in finished}

    summary = play(Batch.resume(root))
    assert (summary.finished, summary.played) == (8, 8 - len(finished))
    assert all((root / n / "result.json").stat().st_mtime_ns == m for n, m in mtimes.items())
    assert all((root / f"{n}.partial-1").is_dir() for n in stopped)
    assert len(list(root.glob("*.partial-*"))) == len(stopped)


def test_the_index_matches_the_folders_and_can_be_rebuilt(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    batch = open_batch(tmp_path, "metrics: [similarity]\n")
    crash_once(monkeypatch, {batch.games[0].name})
    play(batch)
    root = tmp_path / "batch"
    with BatchIndex.of(root) as index:
        live = index.rows()
    for row in live:
        folder = root / row.name
        assert (row.status == "finished") == (folder / "result.json").is_file()
        if row.status == "finished":
            result = json.loads((folder / "result.json").read_text(encoding="utf-8"))
            assert row.winner == result["winner"] and row.usage.calls == result["usage"]["calls"]
            assert set(row.metrics) == {"similarity"} and 0 <= row.metrics["similarity"]["tfidf"]
    (root / INDEX_FILE).unlink()
    rebuilt = Batch.rebuild(root)
    rows = asyncio.run(rebuilt.reindex())
    rebuilt.close()
    assert [r.model_dump() for r in rows] == [r.model_dump() for r in live]
    result = CliRunner().invoke(app, ["runs", "reindex", str(root)])
    assert result.exit_code == 0 and "7 finished, 1 failed, 0 pending" in result.output


def test_a_spent_game_budget_ends_that_game(tmp_path: Path) -> None:
    batch = open_batch(tmp_path, "wrappers: {budget_per_game: {max_calls: 5}}\n")
    summary = play(batch)
    naive = [g for g in batch.games if g.settings.architecture == "naive"]
    assert (summary.finished, summary.failed) == (4, 4)  # extractive makes no model calls
    for game in naive:
        folder = tmp_path / "batch" / game.name
        error = read_error(folder)
        assert error is not None and error.kind == "budget"
        assert "game budget spent (5 calls of 5)" in error.message
        calls = read_run(folder).calls  # the refused call recorded, costing nothing
        assert len(calls) == 6 and spend_of(calls).calls == 5
        assert (calls[-1].error or "").startswith("BudgetExceeded: game budget spent")


def test_a_spent_batch_budget_stops_starting_games(tmp_path: Path) -> None:
    base = f"scripts: [{TINY}]\nmodels: scripted\nseeds: [0, 1, 2, 3]\nembedder: none\n"
    path = spec_file(tmp_path, "wrappers: {budget_per_batch: {max_calls: 40}}\n", base)
    batch = Batch.open(load_spec(path), tmp_path / "batch")
    summary = play(batch, concurrency=1)
    assert (summary.finished, summary.failed, summary.pending, summary.skipped) == (1, 1, 2, 2)
    assert summary.spent.calls == 40  # a two-act game of the tiny manor makes 28
    failed = next(r for r in Batch.open(load_spec(path), tmp_path / "batch").index.rows()
                  if r.status == "failed")
    assert "batch budget spent (40 calls of 40)" in (failed.error or "")


def test_a_game_past_its_timeout_fails(tmp_path: Path) -> None:
    batch = open_batch(tmp_path, "model_options: {latency_s: 0.05}\ntimeout_s: 0.3\n")
    summary = play(batch)
    naive = {g.name for g in batch.games if g.settings.architecture == "naive"}
    errors = {n: read_error(tmp_path / "batch" / n) for n in naive}
    assert summary.failed == 4
    assert all(e is not None and e.kind == "timeout" for e in errors.values())


def test_a_game_whose_model_cannot_be_built_fails_alone(tmp_path: Path) -> None:
    spec = load_spec(spec_file(tmp_path, "", SPEC.replace(
        "models: scripted", f"models: [scripted, 'replay:{tmp_path / 'none.json'}']")))
    batch = Batch.open(spec, tmp_path / "batch")
    summary = play(batch)
    # the model-free extractive plays its games once, with the first model named
    assert (summary.finished, summary.failed) == (8, 4)
    failed = [g for g in batch.games if g.settings.model != "scripted"]
    assert {g.settings.architecture for g in failed} == {"naive"}
    assert all("none.json" in read_error(tmp_path / "batch" / g.name).message  # type: ignore[union-attr]
               for g in failed)


def test_a_changed_game_list_is_explained_and_refused(tmp_path: Path) -> None:
    play(open_batch(tmp_path))
    with pytest.raises(BatchError) as caught:
        open_batch(tmp_path, "rounds: 2\n")
    message = str(caught.value)
    assert "8 game(s) added" in message and "8 game(s) of the batch no longer in the spec" in message
    assert "--out" in message and "a batch never drops games" in message
    open_batch(tmp_path, "concurrency: 3\ntimeout_s: 100\n").close()  # same games: fine


def test_extend_adds_games_and_plays_only_those(tmp_path: Path) -> None:
    play(open_batch(tmp_path))
    grown = SPEC.replace("seeds: [0, 1]", "seeds: [0, 1, 2]")
    path = spec_file(tmp_path, "", grown)
    with pytest.raises(BatchError, match="4 game\\(s\\) added.*pass --extend"):
        Batch.open(load_spec(path), tmp_path / "batch")
    summary = play(Batch.open(load_spec(path), tmp_path / "batch", extend=True))
    assert (summary.games, summary.finished, summary.played) == (12, 12, 4)
    stored = load_spec(tmp_path / "batch" / "spec.yaml")
    assert isinstance(stored, BatchSpec) and stored.seeds == [0, 1, 2]
    with BatchIndex.of(tmp_path / "batch") as index:
        assert [r.seed for r in index.rows()[:3]] == [0, 1, 2]  # the new spec's order


def test_metrics_added_later_are_computed_for_finished_games(tmp_path: Path) -> None:
    play(open_batch(tmp_path))
    summary = play(open_batch(tmp_path, "metrics: [culprit-rank, mirage-trust]\n"))
    assert summary.played == 0
    with BatchIndex.of(tmp_path / "batch") as index:
        rows = index.rows()
    assert all("reciprocal_rank" in row.metrics["culprit-rank"] for row in rows)
    assert all("skipped" in row.metrics["mirage-trust"] for row in rows)  # no trust ratings
    evaluation = tmp_path / "batch" / rows[0].name / "eval"
    data = json.loads((evaluation / "culprit-rank.json").read_text(encoding="utf-8"))
    assert data["metric"] == "culprit-rank" and "ranks" in data  # as `jubensha eval` writes it
    statuses = json.loads((evaluation / "all.json").read_text(encoding="utf-8"))["statuses"]
    assert [(s["metric"], s["status"]) for s in statuses] == [("culprit-rank", "scored"),
                                                              ("mirage-trust", "skipped")]


def test_a_failing_metric_is_recorded_and_the_game_stays_finished(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = runner_module.get_metric

    async def boom(context: Any) -> Any:
        raise ValueError("no chat to compare")

    def patched(name: str) -> Any:
        spec = real(name)
        return dataclasses.replace(spec, compute=boom) if name == "similarity" else spec

    monkeypatch.setattr(runner_module, "get_metric", patched)
    summary = play(open_batch(tmp_path, "metrics: [similarity, culprit-rank]\n"))
    assert summary.finished == 8
    with BatchIndex.of(tmp_path / "batch") as index:
        row = index.rows()[0]
    assert row.metrics["similarity"] == {"error": "ValueError: no chat to compare",
                                         "answers": 0, "failed_answers": 0}
    assert "reciprocal_rank" in row.metrics["culprit-rank"]


def test_the_commands_run_resume_and_report_a_batch(tmp_path: Path) -> None:
    path = spec_file(tmp_path)
    runner = CliRunner()
    first = runner.invoke(app, ["runs", "batch", str(path), "--out", str(tmp_path / "b"),
                                "--concurrency", "2"])
    assert first.exit_code == 0, first.output
    output = " ".join(first.output.split())
    assert "8/8 finished · 0 failed · 0 pending · 8 played now" in output
    assert "report: jubensha runs report" in output
    again = runner.invoke(app, ["runs", "resume", str(tmp_path / "b")])
    assert again.exit_code == 0 and "0 played now" in " ".join(again.output.split())
    missing = runner.invoke(app, ["runs", "resume", str(tmp_path)])
    assert missing.exit_code == 2 and "not a batch folder" in missing.output


def test_prices_cost_every_game_and_a_shared_cache_answers_a_repeated_batch(
        tmp_path: Path) -> None:
    (tmp_path / "prices.yaml").write_text(
        "scripted: {input_per_1m: 1.0, output_per_1m: 2.0}\n", encoding="utf-8")
    (tmp_path / "cache").mkdir()
    extra = "wrappers: {prices: prices.yaml, cache: cache/}\n"
    first = open_batch(tmp_path, extra)
    play(first)
    game = next(g for g in first.games if g.settings.architecture == "naive")
    records = timeless(tmp_path / "batch" / game.name / "calls.jsonl")
    expected = sum(r["usage"]["prompt_tokens"] * 1.0 + r["usage"]["completion_tokens"] * 2.0
                   for r in records) / 1_000_000
    with BatchIndex.of(tmp_path / "batch") as index:
        row = index.get(game.id)
    assert row is not None and row.usage.cost_usd == pytest.approx(expected) and expected > 0
    assert (tmp_path / "cache" / "replies.sqlite").is_file()

    second = Batch.open(load_spec(spec_file(tmp_path, extra)), tmp_path / "again")
    play(second)
    again = timeless(tmp_path / "again" / game.name / "calls.jsonl")
    assert {r["origin"] for r in again} == {"cache"}
    assert [r["raw"] for r in again] == [r["raw"] for r in records]
    with BatchIndex.of(tmp_path / "again") as index:
        repeated = index.get(game.id)
    assert repeated is not None and repeated.usage.cost_usd == 0.0


@pytest.mark.datasets
def test_a_wellplay_batch_with_a_fixed_murderer_and_the_wellplay_metric(
        tmp_path: Path, datasets: Path) -> None:
    folder = datasets / "wellplay" / "english" / "Deadly Fountain (4 people closed)"
    spec = spec_file(tmp_path, "", f"""
scripts: [{{path: "{folder}", format: wellplay}}]
procedures: [player]
architectures: [naive, extractive]
models: scripted
murderer: {{architecture: extractive}}
embedder: none
metrics: [wellplay]
metric_samples: 1
""")
    batch = Batch.open(load_spec(spec), tmp_path / "batch")
    summary = play(batch)
    assert summary.finished == 2
    for game in batch.games:
        meta = read_run(tmp_path / "batch" / game.name).meta
        assert meta is not None and Path(meta.script_source).resolve() == folder.resolve()
        assert {meta.seats[m].architecture for m in game.script.murderers} == {"extractive"}
    with BatchIndex.of(tmp_path / "batch") as index:
        numbers = [row.metrics["wellplay"] for row in index.rows()]
    assert all(0 <= n["score.overall.mean"] <= 1 and n["questions"] > 0 for n in numbers)


def test_a_judge_that_cannot_answer_stops_the_batch_and_keeps_its_games(
        tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")  # a cassette that holds no call: a fatal miss
    spec = spec_file(tmp_path, f'metrics: [mirage-llm-score]\njudge: "replay:{empty}"\n',
                     base="scripts: [lighthouse-keeper]\narchitectures: [naive]\n"
                          "models: scripted\nseeds: [0]\nembedder: none\n")
    result = CliRunner().invoke(app, ["runs", "batch", str(spec), "--out",
                                      str(tmp_path / "b")])
    assert result.exit_code == 3, result.output
    assert "stopped: the model" in result.output and "Traceback" not in result.output
    assert f"jubensha runs resume {tmp_path / 'b'}" in " ".join(result.output.split())
    with BatchIndex.of(tmp_path / "b") as index:
        [row] = index.rows()
    assert row.status == "finished" and "mirage-llm-score" not in row.metrics
