"""Resuming an interrupted game from its log: the calls the log holds are answered from
it, in order per seat and purpose, and the game goes on live; with a deterministic model
the resumed game is the uninterrupted one, event by event, and no logged call is paid
for twice. A log of another game is refused in one line."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import jubensha.runs.attempt as attempt_module
from jubensha.cli import app
from jubensha.engine.events import Event
from jubensha.engine.procedure import find_procedure
from jubensha.llm.base import Request, Response
from jubensha.llm.fake import ScriptedModel
from jubensha.runlog.folder import read_run
from jubensha.runlog.resume import RESUMED, Resume, ResumeDiverged, ResumeError
from jubensha.runs.batch import Batch
from jubensha.runs.play import PlayConfig, plan_seats, play_game
from jubensha.runs.spec import load_spec
from jubensha.scripts.bundled import find_script

SCRIPT = "lighthouse-keeper"
CLOCKS = ("time", "latency_s", "started")


class Killed(BaseException):
    """The process dying: nothing catches it, nothing after it is written."""


class Counting(ScriptedModel):
    """The scripted fake, counting the calls that reach it (the live ones), optionally
    dying before call ``die_at`` or answering after a random delay (so that concurrent
    decisions reach the model in a random order)."""

    def __init__(self, die_at: int | None = None, jitter: int | None = None) -> None:
        super().__init__(seed=0)
        self.live = 0
        self.die_at = die_at
        self.jitter = random.Random(jitter) if jitter is not None else None

    async def generate(self, request: Request) -> Response:
        if self.die_at is not None and self.live >= self.die_at:
            raise Killed
        self.live += 1
        if self.jitter is not None:
            await asyncio.sleep(self.jitter.random() / 200)
        return await super().generate(request)


def timeless(path: Path) -> list[dict[str, Any]]:
    """A JSONL log without clock readings, resumed calls read as live."""
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for key in CLOCKS:
            record.pop(key, None)
        record.get("usage", {}).pop("latency_s", None)
        if record.get("origin") == RESUMED:
            record["origin"] = "live"
        records.append(record)
    return records


def unordered(path: Path) -> list[str]:
    """The calls of a log, whatever order concurrent decisions reached the model in."""
    records = timeless(path)
    for record in records:
        record.pop("index")
    return sorted(json.dumps(record, sort_keys=True) for record in records)


def game(out: Path, model: ScriptedModel, *, seed: int = 0, procedure: str = "demo",
         architecture: str = "naive", resume: Resume | None = None,
         die_after_events: int | None = None) -> Any:
    script = find_script(SCRIPT)
    plans = plan_seats(script, architecture, "scripted")
    seen: list[Event] = []

    def die(event: Event) -> None:
        seen.append(event)
        if len(seen) == die_after_events:
            raise Killed

    return asyncio.run(play_game(PlayConfig(script=script, procedure=find_procedure(procedure),
                                            plans=plans, seed=seed, resume=resume), out,
                                 models={"scripted": model}, sinks=[die]))


@pytest.fixture(scope="module")
def straight(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """The game played uninterrupted, and its calls."""
    out = tmp_path_factory.mktemp("straight") / "run"
    model = Counting()
    game(out, model)
    return out, model.live


def killed(out: Path, calls: int, **kw: Any) -> Path:
    """The game killed as its model was asked for call ``calls + 1``."""
    with pytest.raises(Killed):
        game(out, Counting(die_at=calls), **kw)
    assert not (out / "result.json").exists()
    return out


@pytest.mark.parametrize("share", [0.05, 0.4, 0.95])
def test_a_game_killed_after_k_calls_resumes_into_the_uninterrupted_game(
        tmp_path: Path, straight: tuple[Path, int], share: float) -> None:
    reference, total = straight
    k = max(1, int(share * total))
    partial = killed(tmp_path / "partial", k)
    resume = Resume.read(partial)
    assert len(resume.records) == k
    model = Counting(jitter=k)
    game(tmp_path / "resumed", model, resume=resume)
    assert model.live == total - k  # the k calls paid before the kill are not paid again
    log = tmp_path / "resumed"
    assert timeless(log / "events.jsonl") == timeless(reference / "events.jsonl")
    assert unordered(log / "calls.jsonl") == unordered(reference / "calls.jsonl")
    calls = read_run(tmp_path / "resumed").calls
    assert sum(c.origin == RESUMED for c in calls) == k
    assert (tmp_path / "resumed" / "transcript.md").read_text(encoding="utf-8") == (
        reference / "transcript.md").read_text(encoding="utf-8")


def test_a_resumed_game_killed_again_resumes_from_the_longest_attempt(
        tmp_path: Path, straight: tuple[Path, int]) -> None:
    reference, total = straight
    first = killed(tmp_path / "first", total // 2)
    second = tmp_path / "second"
    with pytest.raises(Killed):  # killed again while it was still answering from the log
        game(second, Counting(), resume=Resume.read(first), die_after_events=8)
    assert 0 < len(Resume.read(second).records) < total // 2
    chosen = Resume.longest([second, first])
    assert chosen is not None and chosen.source == first
    model = Counting()
    game(tmp_path / "third", model, resume=chosen)
    assert model.live == total - total // 2
    assert timeless(tmp_path / "third" / "events.jsonl") == timeless(reference / "events.jsonl")


@pytest.mark.parametrize(("change", "words"), [
    ({"seed": 1}, "seed 0, not 1"),
    ({"procedure": "thinkthrice"}, "another procedure"),
    ({"architecture": "extractive"}, "seats differ"),
])
def test_a_log_of_another_game_is_refused_in_one_line(
        tmp_path: Path, change: dict[str, Any], words: str) -> None:
    partial = killed(tmp_path / "partial", 3)
    out = tmp_path / "other"
    with pytest.raises(ResumeError) as caught:
        game(out, Counting(), resume=Resume.read(partial), **change)
    message = str(caught.value)
    assert "\n" not in message and words in message and str(partial) in message
    assert not out.exists()  # refused before anything was written


def test_a_log_that_asks_something_else_stops_the_game(tmp_path: Path) -> None:
    partial = killed(tmp_path / "partial", 4)
    lines = (partial / "calls.jsonl").read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[2])
    record["messages"][-1]["content"] = "What another version of the prompt asked."
    lines[2] = json.dumps(record)
    (partial / "calls.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ResumeDiverged, match="call 2 of the log"):
        game(tmp_path / "resumed", Counting(), resume=Resume.read(partial))


def test_a_failed_call_and_what_followed_it_are_asked_again_live(
        tmp_path: Path, straight: tuple[Path, int]) -> None:
    reference, total = straight
    partial = killed(tmp_path / "partial", 6)
    lines = (partial / "calls.jsonl").read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[3])
    record |= {"error": "ModelError: connection refused", "raw": None}
    lines[3] = json.dumps(record)
    (partial / "calls.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    resume = Resume.read(partial)
    assert len(resume.records) == 3
    model = Counting()
    game(tmp_path / "resumed", model, resume=resume)
    assert model.live == total - 3
    assert timeless(tmp_path / "resumed" / "events.jsonl") == timeless(
        reference / "events.jsonl")


def test_a_finished_game_has_nothing_to_resume(straight: tuple[Path, int]) -> None:
    with pytest.raises(ResumeError, match="finished"):
        Resume.read(straight[0])


def test_play_resume_continues_the_killed_game_in_its_own_folder(
        tmp_path: Path, straight: tuple[Path, int]) -> None:
    reference, _ = straight
    out = killed(tmp_path / "run", 5)
    runner = CliRunner()
    done = runner.invoke(app, ["play", "--resume", str(out)])
    assert done.exit_code == 0, done.output
    assert "5 call(s) answered from the log" in done.output
    assert (tmp_path / "run.partial-1" / "calls.jsonl").is_file()  # the attempt, kept
    assert timeless(out / "events.jsonl") == timeless(reference / "events.jsonl")
    again = runner.invoke(app, ["play", "--resume", str(out)])
    assert again.exit_code == 2 and "the game finished" in again.output
    other = runner.invoke(app, ["play", SCRIPT, "--resume", str(out)])
    assert other.exit_code == 2 and "give no script" in other.output


def test_a_batch_game_resumed_pays_each_call_once(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"scripts: [{SCRIPT}]\nmodels: scripted\nseeds: [0]\nembedder: none\n",
                    encoding="utf-8")
    straight_root = tmp_path / "straight"
    asyncio.run(_run(Batch.open(load_spec(spec), straight_root)))
    real, crashed = attempt_module.play_game, []

    async def crash_mid_game(*args: Any, **kwargs: Any) -> Any:
        if not crashed:
            crashed.append(True)
            seen: list[Event] = []

            def explode(event: Event) -> None:
                seen.append(event)
                if len(seen) == 20:
                    raise RuntimeError("the machine caught fire")

            kwargs["sinks"] = [explode]
        return await real(*args, **kwargs)

    monkeypatch.setattr(attempt_module, "play_game", crash_mid_game)
    root = tmp_path / "batch"
    first = asyncio.run(_run(Batch.open(load_spec(spec), root)))
    assert first.failed == 1
    second = asyncio.run(_run(Batch.resume(root)))
    assert second.finished == 1
    want, got = _rows(straight_root)[0], _rows(root)[0]
    assert got.attempts == 2 and got.spent.calls == want.spent.calls == got.usage.calls
    name = got.name
    assert timeless(root / name / "events.jsonl") == timeless(
        straight_root / name / "events.jsonl")
    resumed = [c for c in read_run(root / name).calls if c.origin == RESUMED]
    assert resumed and len(resumed) == len(read_run(root / f"{name}.partial-1").calls)


async def _run(batch: Batch) -> Any:
    try:
        return await batch.run()
    finally:
        batch.close()


def _rows(root: Path) -> list[Any]:
    from jubensha.runs.index import BatchIndex

    with BatchIndex.of(root) as index:
        return index.rows()
