"""The Ray executor: a batch played on a local Ray cluster (started here) writes the same run
folders and index as the local executor; a stopped Ray batch resumes with no game lost or
repeated; a per-endpoint limit holds across workers; a worker's files never land outside
the game's folder. Skipped where Ray is not installed (pip install -e '.[ray]')."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from jubensha.runs.attempt import read_error
from jubensha.runs.batch import Batch, Update
from jubensha.runs.index import BatchIndex, GameRow
from jubensha.runs.spec import load_spec

ray = pytest.importorskip("ray", reason="the ray executor needs Ray: pip install -e '.[ray]'")

from jubensha.runs.ray_executor import EndpointGate, pack, unpack

TINY = str(Path(__file__).parents[1] / "engine" / "tiny_script.yaml")
SPEC = f"""
scripts: [{TINY}, lighthouse-keeper]
architectures: [naive, extractive]
models: scripted
seeds: [0, 1]
embedder: none
concurrency: 2
"""
CLOCK = {"time", "latency_s", "started", "finished", "duration_s"}


@pytest.fixture(scope="module")
def cluster() -> Any:
    """A local Ray cluster of two worker CPUs, for this module's tests."""
    ray.init(num_cpus=2, namespace="jubensha-tests", include_dashboard=False,
             log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


def timeless(value: Any) -> Any:
    """A JSON value without its clock readings."""
    if isinstance(value, dict):
        return {k: timeless(v) for k, v in value.items() if k not in CLOCK}
    if isinstance(value, list):
        return [timeless(v) for v in value]
    return value


def folder_contents(folder: Path) -> dict[str, Any]:
    contents: dict[str, Any] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            name = path.relative_to(folder).as_posix()
            if path.suffix == ".sqlite":  # a cache of the post-game metrics: present in both
                contents[name] = "sqlite"
                continue
            # metric results name the run folder, which is where the batch is
            text = path.read_text(encoding="utf-8").replace(str(folder.parent), "BATCH")
            if path.suffix == ".jsonl":
                contents[name] = [timeless(json.loads(line)) for line in text.splitlines()]
            elif path.suffix == ".json":
                contents[name] = timeless(json.loads(text))
            else:
                contents[name] = text
    return contents


def index_of(root: Path) -> list[dict[str, Any]]:
    with BatchIndex.of(root) as index:
        return [timeless(row.model_dump(mode="json")) for row in index.rows()]


def run(spec_text: str, root: Path, **kw: Any) -> Any:
    spec_path = root.parent / f"{root.name}.yaml"
    spec_path.write_text(spec_text, encoding="utf-8")
    batch = Batch.open(load_spec(spec_path), root)
    try:
        return asyncio.run(batch.run(**kw))
    finally:
        batch.close()


def test_a_ray_batch_writes_the_folders_and_index_of_a_local_one(cluster: Any,
                                                                   tmp_path: Path) -> None:
    extra = "metrics: [culprit-rank]\nendpoints: {scripted: {max_concurrency: 2}}\n"
    local = run(SPEC + extra, tmp_path / "local")
    remote = run(SPEC + extra + "executor: {kind: ray}\n", tmp_path / "ray")
    assert (local.finished, remote.finished, remote.failed) == (8, 8, 0)
    names = sorted(p.name for p in (tmp_path / "local").iterdir() if p.is_dir())
    assert names == sorted(p.name for p in (tmp_path / "ray").iterdir() if p.is_dir())
    for name in names:
        mine, theirs = (folder_contents(tmp_path / side / name) for side in ("local", "ray"))
        assert mine.keys() == theirs.keys() and "eval/culprit-rank.json" in mine
        for file in mine:
            assert mine[file] == theirs[file], (name, file)
    assert index_of(tmp_path / "local") == index_of(tmp_path / "ray")


def test_a_stopped_ray_batch_resumes_with_no_game_lost_or_repeated(cluster: Any,
                                                                    tmp_path: Path) -> None:
    spec_path = tmp_path / "spec.yaml"
    spec_path.write_text(SPEC.replace("[0, 1]", "[0, 1, 2]") + "executor: {kind: ray}\n"
                         "model_options: {latency_s: 0.02}\n", encoding="utf-8")
    root = tmp_path / "batch"
    batch = Batch.open(load_spec(spec_path), root)

    async def stop_when_the_fifth_game_starts() -> None:
        task = asyncio.current_task()
        started: list[str] = []

        def on_update(update: Update) -> None:
            if update.row.status == "running":
                started.append(update.row.name)
                if len(started) == 5 and task is not None:
                    task.cancel()

        await batch.run(on_update=on_update)

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(stop_when_the_fifth_game_starts())
    rows: list[GameRow] = batch.index.rows()
    batch.close()
    finished = {r.name for r in rows if r.status == "finished"}
    stopped = {r.name for r in rows if r.status == "failed"}
    assert len(finished) >= 2 and stopped and len(finished) + len(stopped) <= 5
    assert all(read_error(root / n).kind == "cancelled" for n in stopped)  # type: ignore[union-attr]
    before = {n: (root / n / "calls.jsonl").read_bytes() for n in finished}

    resumed = Batch.resume(root)
    summary = asyncio.run(resumed.run())
    resumed.close()
    assert (summary.finished, summary.failed, summary.played) == (12, 0, 12 - len(finished))
    assert all((root / n / "calls.jsonl").read_bytes() == data for n, data in before.items())
    assert sorted(p.name for p in root.glob("*.partial-*")) == sorted(
        f"{n}.partial-1" for n in stopped)
    with BatchIndex.of(root) as index:
        attempts = {r.name: r.attempts for r in index.rows()}
    assert all(attempts[n] == 1 for n in finished) and all(attempts[n] == 2 for n in stopped)


DYING = """
import os

target, marker = os.environ.get("JUBENSHA_TEST_DIE_ON"), os.environ.get("JUBENSHA_TEST_MARKER")
if target and marker:
    import jubensha.runs.attempt as batch

    real = batch.play_attempt

    async def dying(job, folder, **kw):
        if job.name == target and not os.path.exists(marker):
            open(marker, "w").close()
            os._exit(1)
        return await real(job, folder, **kw)

    batch.play_attempt = dying
"""


@pytest.mark.parametrize("retries", [1, 0])
def test_a_dead_worker_fails_one_game_which_is_retried_per_policy(
        cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, retries: int) -> None:
    """The worker playing one game dies (its process exits) the first time; the variables
    named in executor.env (which the user's settings allow) reach the workers, and a
    sitecustomize there does the killing."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "settings.yaml").write_text(
        "worker_env: [PYTHONPATH, JUBENSHA_TEST_DIE_ON, JUBENSHA_TEST_MARKER]\n",
        encoding="utf-8")
    monkeypatch.setenv("JUBENSHA_CONFIG", str(tmp_path / "config"))
    (hook / "sitecustomize.py").write_text(DYING, encoding="utf-8")
    spec_path = tmp_path / "spec.yaml"
    spec_path.write_text(SPEC + f"executor: {{kind: ray, retries: {retries}, env: "
                         "[PYTHONPATH, JUBENSHA_TEST_DIE_ON, JUBENSHA_TEST_MARKER]}\n",
                         encoding="utf-8")
    batch = Batch.open(load_spec(spec_path), tmp_path / "batch")
    victim = batch.games[1].name
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(hook), *filter(None, [os.environ.get("PYTHONPATH")])]))
    monkeypatch.setenv("JUBENSHA_TEST_DIE_ON", victim)
    monkeypatch.setenv("JUBENSHA_TEST_MARKER", str(tmp_path / "died"))
    try:
        summary = asyncio.run(batch.run())
    finally:
        batch.close()
    assert (tmp_path / "died").exists()
    if retries:
        assert (summary.finished, summary.failed) == (8, 0)
    else:
        assert (summary.finished, summary.failed) == (7, 1)
        error = read_error(tmp_path / "batch" / victim)
        assert error is not None and "the Ray worker playing this game died" in error.message


def test_an_endpoint_limit_holds_across_workers(cluster: Any) -> None:
    gate = EndpointGate.remote(2)  # type: ignore[attr-defined]

    @ray.remote(num_cpus=0)
    def call(actor: Any, hold_s: float) -> tuple[float, float]:
        import time

        ray.get(actor.acquire.remote())
        start = time.monotonic()
        time.sleep(hold_s)
        end = time.monotonic()  # before the slot is given back
        actor.release.remote(False)
        return start, end

    spans = ray.get([call.remote(gate, 0.3) for _ in range(4)])
    events = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    running = peak = 0
    for _, step in events:
        running += step
        peak = max(peak, running)
    assert peak == 2
    ray.kill(gate)


def test_files_from_a_worker_stay_inside_the_game_folder(tmp_path: Path) -> None:
    source = tmp_path / "source"
    (source / "eval").mkdir(parents=True)
    (source / "events.jsonl").write_text("{}\n", encoding="utf-8")
    (source / "eval" / "x.json").write_text("{}", encoding="utf-8")
    unpack(pack(source), tmp_path / "copy")
    assert (tmp_path / "copy" / "eval" / "x.json").read_text(encoding="utf-8") == "{}"
    for bad in ("../escape.txt", "/etc/escape.txt", "a/../../escape.txt"):
        with pytest.raises(ValueError, match="outside its run folder"):
            unpack({bad: b"x"}, tmp_path / "copy")
    assert not (tmp_path / "escape.txt").exists()


def test_the_command_line_picks_the_ray_executor(cluster: Any, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from jubensha.cli import app

    spec_path = tmp_path / "spec.yaml"
    spec_path.write_text(SPEC.replace("[0, 1]", "0"), encoding="utf-8")
    runner = CliRunner()
    done = runner.invoke(app, ["runs", "batch", str(spec_path), "--out", str(tmp_path / "b"),
                               "--executor", "ray", "--address", "auto"])
    assert done.exit_code == 0, done.output
    assert "4/4 finished" in done.output
    again = runner.invoke(app, ["runs", "resume", str(tmp_path / "b"), "--executor", "ray"])
    assert again.exit_code == 0 and "0 played now" in again.output


@pytest.mark.skipif(not os.environ.get("JUBENSHA_SLOW_TESTS"),
                    reason="about 30 s: set JUBENSHA_SLOW_TESTS=1 to run")
def test_a_driver_killed_outright_resumes_with_no_game_lost_or_repeated(tmp_path: Path) -> None:
    """``runs batch --executor ray`` (its own local cluster) killed with SIGKILL, then
    ``runs resume``: every game ends finished once; the ones finished before are untouched."""
    import signal
    import sqlite3
    import subprocess
    import sys
    import time

    from jubensha.llm.calls import read_calls
    from jubensha.runlog.resume import replayable

    spec_path = tmp_path / "spec.yaml"
    spec_path.write_text(SPEC.replace("[naive, extractive]", "naive").replace(
        "[0, 1]", "{start: 0, count: 6}") + "model_options: {latency_s: 0.2}\n"
        "executor: {kind: ray}\n", encoding="utf-8")
    root = tmp_path / "batch"
    command = [sys.executable, "-m", "jubensha.cli", "runs"]
    driver = subprocess.Popen([*command, "batch", str(spec_path), "--out", str(root)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)

    def finished() -> set[str]:
        try:
            with sqlite3.connect(f"file:{root / 'batch.sqlite'}?mode=ro", uri=True) as db:
                return {name for (name,) in db.execute(
                    "SELECT name FROM games WHERE status = 'finished'")}
        except sqlite3.Error:
            return set()

    deadline = time.monotonic() + 180
    while len(finished()) < 3 and time.monotonic() < deadline and driver.poll() is None:
        time.sleep(0.2)
    os.killpg(driver.pid, signal.SIGKILL)  # the driver and the cluster it started
    driver.wait()
    before = finished()
    assert 3 <= len(before) < 12
    calls = {n: (root / n / "calls.jsonl").read_bytes() for n in before}

    done = subprocess.run([*command, "resume", str(root)], capture_output=True, text=True,
                          check=False,
                          timeout=300, start_new_session=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert f"{12 - len(before)} played now" in " ".join(done.stdout.split())
    assert finished() == {p.name for p in root.iterdir() if p.is_dir() and ".partial-" not in
                          p.name} and len(finished()) == 12
    assert all((root / n / "calls.jsonl").read_bytes() == data for n, data in calls.items())
    # games in flight at the kill were played in the batch folder (same machine): their
    # calls count as spent, and the resume answered them from the log instead of paying again
    with sqlite3.connect(f"file:{root / 'batch.sqlite'}?mode=ro", uri=True) as db:
        spends = list(db.execute("SELECT name, calls, spent_calls FROM games"))
    assert all(spent == calls for _, calls, spent in spends), spends
    for partial in root.glob("*.partial-*"):
        game = partial.name.rsplit(".partial-", 1)[0]
        logged = len(replayable(read_calls(partial / "calls.jsonl")))
        resumed = (root / game / "calls.jsonl").read_text(encoding="utf-8").count(
            '"origin":"resumed"')
        assert resumed == logged
