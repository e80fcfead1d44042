"""Crash soak: a batch killed with SIGKILL at random moments (seeded), resumed each time,
ends with the same games, results, metrics, logs and index as a batch never interrupted;
and run folders whose logs were torn mid-line, even inside a UTF-8 character, are read,
replayed, reindexed and resumed.

``--long`` (or ``JUBENSHA_LONG_TESTS=1``) runs more series with more kills each;
``JUBENSHA_COUNTS=FILE`` appends each series' kills to FILE."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.llm.calls import drop_torn_tail, read_calls
from jubensha.runs.batch import Batch
from jubensha.runs.index import BatchIndex
from jubensha.runs.spec_trust import MARK

ROOT = Path(__file__).parents[2]
LONG = os.environ.get("JUBENSHA_LONG_TESTS") == "1"
SERIES = [11, 12, 13] if LONG else [11]
KILLS = 8 if LONG else 4
SPEC = """
scripts: [lighthouse-keeper, tingsong-tea-estate]
architectures: [naive, extractive]
models: scripted
seeds: [0, 1]
embedder: none
concurrency: 2
model_options: {latency_s: 0.005}
metrics: [identification, culprit-rank, revote]
"""
CLOCK_KEYS = {"time", "latency_s", "duration_s", "started", "finished"}
"""Clock readings: they differ between any two runs, interrupted or not."""


def jubensha(*args: str) -> subprocess.Popen[bytes]:
    """The command line in a child process of its own (its own session, so that the kill
    reaches only it)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "120"}
    return subprocess.Popen([sys.executable, "-c", "from jubensha.cli import app; app()",
                             *args], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)


def finish(process: subprocess.Popen[bytes]) -> int:
    _, err = process.communicate(timeout=300)
    assert b"Traceback" not in err, err.decode("utf-8", "replace")
    return process.returncode


def timeless(value: Any) -> Any:
    """``value`` without clock readings, at any depth."""
    if isinstance(value, dict):
        return {k: timeless(v) for k, v in value.items() if k not in CLOCK_KEYS}
    if isinstance(value, list):
        return [timeless(v) for v in value]
    return value


def jsonl(path: Path) -> list[Any]:
    return [timeless(json.loads(line)) for line in
            path.read_text(encoding="utf-8").splitlines() if line.strip()]


def document(path: Path, root: Path) -> Any:
    """A JSON file, its clock readings left out and the batch folder's path replaced."""
    return timeless(json.loads(path.read_text(encoding="utf-8").replace(
        json.dumps(str(root))[1:-1], "BATCH")))


def unresumed(calls: list[Any]) -> list[Any]:
    """Calls with those answered from an earlier attempt's log read as live."""
    return [{**call, "origin": "live"} if call["origin"] == "resumed" else call
            for call in calls]


def without_resume(meta: Any) -> Any:
    meta["options"].pop("resumed_calls", None)
    return meta


def snapshot(root: Path) -> dict[str, Any]:
    """What a batch produced, minus clocks and minus what only says how many attempts it
    took (attempts, spend over all attempts, set-aside folders, the metrics' call logs,
    which calls a resumed attempt answered from an earlier one's log)."""
    found: dict[str, Any] = {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and ".partial-" not in p.name):
        game: dict[str, Any] = {
            "events": jsonl(folder / "events.jsonl"),
            "calls": unresumed(jsonl(folder / "calls.jsonl")),
            "result": document(folder / "result.json", root),
            "meta": without_resume(document(folder / "meta.json", root)),
            "transcript": (folder / "transcript.md").read_text(encoding="utf-8")}
        for metric in sorted((folder / "eval").glob("*.json")):
            data = document(metric, root)
            game[f"eval/{metric.name}"] = data["statuses"] if metric.stem == "all" else data
        found[folder.name] = game
    with BatchIndex.of(root) as index:
        found["index"] = [timeless(row.model_dump(exclude={"attempts", "spent"}))
                          for row in index.rows()]
    # the spec as stored, without the signature of whoever ran the batch (the baseline is
    # made before any one test's settings folder, so with another batch.key)
    found["spec"] = (root / "spec.yaml").read_text(encoding="utf-8").partition(MARK)[0]
    return found


def leftovers(root: Path) -> list[str]:
    """Files a finished batch should not hold: half-written temporaries."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.tmp"))


def written(root: Path, games_only: bool = False) -> int:
    """Bytes of the batch's run folders (the index left out), or of the games alone (the
    metrics' logs left out too): how far the batch has come, counting every attempt."""
    while True:
        try:
            return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()
                       and "sqlite" not in p.name
                       and not (games_only and p.parent.name == "eval"))
        except FileNotFoundError:  # a folder set aside (renamed) while we looked
            if not root.is_dir():
                return 0


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The batch played once, uninterrupted."""
    folder = tmp_path_factory.mktemp("soak")
    (folder / "spec.yaml").write_text(SPEC, encoding="utf-8")
    assert finish(jubensha("runs", "batch", str(folder / "spec.yaml"),
                           "--out", str(folder / "batch"))) == 0
    return folder / "batch"


def kill_after(process: subprocess.Popen[bytes], root: Path, more: int,
               games_only: bool) -> bool:
    """SIGKILL ``process`` once ``more`` bytes more have been written under ``root`` (a
    random moment of the batch's own progress, whatever the machine's speed); False if it
    ended first."""
    target = written(root, games_only) + more
    deadline = time.monotonic() + 120
    while process.poll() is None:
        if written(root, games_only) >= target:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=60)
            return True
        assert time.monotonic() < deadline, "the batch made no progress in 120 s"
        time.sleep(0.01)
    return False


@pytest.mark.parametrize("seed", SERIES)
def test_a_batch_killed_at_random_moments_ends_as_if_never_killed(tmp_path, baseline, seed):
    """Each run is killed after a random share of the batch's output (seeded, at most
    1.2 / KILLS of it, so the kills spread over the batch), then resumed. The metrics'
    logs are most of the output, so every other kill counts the games' logs alone (a kill
    mid-game rather than mid-metric)."""
    (tmp_path / "spec.yaml").write_text(SPEC, encoding="utf-8")
    out = tmp_path / "batch"
    chance = random.Random(seed)
    totals = {False: written(baseline), True: written(baseline, games_only=True)}
    kills = 0
    command = ["runs", "batch", str(tmp_path / "spec.yaml"), "--out", str(out)]
    while kills < KILLS:
        process = jubensha(*command)
        games_only = kills % 2 == 0
        share = chance.uniform(0.01, 1.2 / KILLS)
        if not kill_after(process, out, int(share * totals[games_only]), games_only):
            assert finish(process) == 0
            break
        kills += 1
        command = ["runs", "resume", str(out)]
    else:
        assert finish(jubensha(*command)) == 0
    assert kills >= KILLS - 1, "the batch ended before the kills"
    assert differences(snapshot(out), snapshot(baseline)) == []
    assert leftovers(out) == []
    record({"suite": "crash soak", "seed": seed, "kills": kills,
            "games": len(snapshot(out)) - 2,
            "set_aside": len(list(out.glob("*.partial-*")))})


def copy_batch(source: Path, target: Path) -> None:
    """A copy of a batch folder, the paths its results record moved with it."""
    subprocess.run(["cp", "-r", str(source), str(target)], check=True)
    for path in target.rglob("*.json"):
        path.write_text(path.read_text(encoding="utf-8").replace(
            json.dumps(str(source))[1:-1], json.dumps(str(target))[1:-1]), encoding="utf-8")


def record(counts: dict[str, Any]) -> None:
    """Append the figures of a series to ``JUBENSHA_COUNTS`` (docs/reliability.md)."""
    target = os.environ.get("JUBENSHA_COUNTS")
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(counts) + "\n")


def torn(path: Path, inside_character: bool) -> None:
    """Cut ``path`` inside its last line: at a byte in the middle of a multi-byte UTF-8
    character, or just after a whole character."""
    data = path.read_bytes()
    start = data.rstrip(b"\n").rfind(b"\n") + 1
    line = data[start:]
    for offset in [*range(len(line) // 2, len(line)), *range(1, len(line) // 2)]:
        lead = line[offset]
        if lead >= 0xE0 if inside_character else lead < 0x80:
            path.write_bytes(data[:start + offset + (1 if inside_character else 0)])
            return
    raise AssertionError(f"{path}: no place to tear")


def test_torn_logs_are_read_replayed_reindexed_and_resumed(tmp_path, baseline):
    """A Chinese game whose result was never written, its events torn inside a character
    and its calls mid-line, and a finished one whose metric log was torn inside a
    character: replay shows the partial game, reindex counts it as interrupted, resume
    plays it again and appends to the torn metric log, and the batch ends as the
    uninterrupted one."""
    expected = baseline
    out = tmp_path / "batch"
    copy_batch(expected, out)
    chinese, scored = sorted(out.glob("tingsong-tea-estate.demo.naive.*"))
    for name in ("result.json", "transcript.md"):
        (chinese / name).unlink()
    torn(chinese / "events.jsonl", inside_character=True)
    torn(chinese / "calls.jsonl", inside_character=False)
    (scored / "eval" / "revote.json").unlink()
    torn(scored / "eval" / "calls.jsonl", inside_character=True)
    kept = len(read_calls(scored / "eval" / "calls.jsonl"))

    assert finish(jubensha("replay", str(chinese))) == 0
    assert finish(jubensha("runs", "reindex", str(out))) == 0
    with BatchIndex.of(out) as index:
        rows = {row.name: row for row in index.rows()}
    assert rows[chinese.name].status == "failed"
    assert "interrupted" in (rows[chinese.name].error or "")
    assert finish(jubensha("runs", "resume", str(out))) == 0
    assert differences(snapshot(out), snapshot(expected)) == []
    assert len(read_calls(scored / "eval" / "calls.jsonl")) > kept


def shown(value: Any) -> str:
    """A part of a snapshot, short enough for a failure message."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 600 else text[:600] + "…"


def differences(got: dict[str, Any], want: dict[str, Any]) -> list[str]:
    """Where two snapshots differ (game and part), for a readable failure."""
    found = []
    for name in sorted(set(got) | set(want)):
        if got.get(name) == want.get(name):
            continue
        if isinstance(got.get(name), dict) and isinstance(want.get(name), dict):
            found += [f"{name}: {part}: {shown(got[name].get(part))} != "
                      f"{shown(want[name].get(part))}"
                      for part in sorted(set(got[name]) | set(want[name]))
                      if got[name].get(part) != want[name].get(part)]
        else:
            found.append(name)
    return found


@pytest.mark.parametrize("lost", [("all.json", "revote.json"), ("all.json",)])
def test_a_kill_between_a_metric_and_the_summary_loses_no_status(tmp_path, baseline, lost):
    """Killed after writing identification and culprit-rank (or all three) but before
    eval/all.json: the resumed batch scores what is missing and the summary lists all
    three, in the spec's order."""
    expected = baseline
    out = tmp_path / "batch"
    copy_batch(expected, out)
    game = next(out.glob("lighthouse-keeper.demo.naive.*"))
    for name in lost:
        (game / "eval" / name).unlink()
    with BatchIndex.of(out) as index:  # as the kill left it
        row = next(r for r in index.rows() if r.name == game.name)
        index.put(row.model_copy(update={"status": "running"}))
    batch = Batch.resume(out)
    try:
        asyncio.run(batch.run())
    finally:
        batch.close()
    summary = json.loads((game / "eval" / "all.json").read_text(encoding="utf-8"))
    assert [(s["metric"], s["status"]) for s in summary["statuses"]] == [
        ("identification", "scored"), ("culprit-rank", "scored"), ("revote", "scored")]
    assert not list(game.rglob("*.tmp"))


def test_a_game_killed_while_writing_a_document_is_set_aside_without_the_temporary(
        tmp_path, baseline):
    """Killed while meta.json was written whole (its temporary half-written beside it) and
    before the result: resume sets the attempt aside without the temporary and plays the
    game again, and the batch ends as the uninterrupted one."""
    out = tmp_path / "batch"
    copy_batch(baseline, out)
    game = next(out.glob("tingsong-tea-estate.demo.naive.*"))
    for name in ("result.json", "transcript.md"):
        (game / name).unlink()
    meta = (game / "meta.json").read_text(encoding="utf-8")
    (game / "meta.json.tmp").write_text(meta[:len(meta) // 2], encoding="utf-8")
    assert finish(jubensha("runs", "resume", str(out))) == 0
    assert differences(snapshot(out), snapshot(baseline)) == []
    assert leftovers(out) == [] and (out / f"{game.name}.partial-1" / "meta.json").is_file()


def test_the_result_is_written_last(tmp_path, monkeypatch):
    """result.json says a game is finished, so it comes after the transcript: a kill
    between the two leaves a game that resume plays again, not one without a transcript."""
    written: list[str] = []
    real = Path.write_text

    def noting(path: Path, *args: Any, **kwargs: Any) -> int:
        written.append(path.name)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", noting)
    assert CliRunner().invoke(app, ["play", "lighthouse-keeper", "--model", "scripted",
                                    "--embedder", "none", "--out", str(tmp_path / "run")]
                              ).exit_code == 0
    assert written.index("transcript.md") < written.index("result.json.tmp")


def test_a_torn_tail_is_dropped_before_appending(tmp_path):
    log = tmp_path / "calls.jsonl"
    drop_torn_tail(log)  # no file: nothing to do
    assert not log.exists()
    log.write_bytes(b'{"a": 1}\n{"b": "\xe8\x8c')
    drop_torn_tail(log, chunk=4)
    assert log.read_bytes() == b'{"a": 1}\n'
    drop_torn_tail(log, chunk=4)  # a whole last line is kept
    assert log.read_bytes() == b'{"a": 1}\n'
    log.write_bytes('{"茶": '.encode())  # one torn line and nothing else
    drop_torn_tail(log, chunk=4)
    assert log.read_bytes() == b""
