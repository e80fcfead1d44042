"""Ctrl-C stops a model job within a second or two, keeps what is done and prints the
command to continue, even while a generation runs in a thread (as the embedded model's
does); the progress bar counts every model call."""

from __future__ import annotations

import asyncio
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from jubensha import jobs
from jubensha.jobs import (
    CallBar,
    CallCount,
    Interrupted,
    estimate_line,
    measured_speed,
    run_job,
)
from jubensha.llm.base import GenerateConfig
from jubensha.llm.calls import NOT_A_CALL, CallLog, CallRecord

ROOT = Path(__file__).parents[1]
TINY = ROOT / "tests" / "engine" / "tiny_script.yaml"
SLOW_THREAD_MODEL = """
import asyncio, sys, time
from jubensha.llm import fake
answer = fake.ScriptedModel.generate
async def slow(self, request):
    await asyncio.to_thread(time.sleep, 30)  # one generation in a thread, like the local model
    return await answer(self, request)
fake.ScriptedModel.generate = slow
from jubensha.cli import app
app(sys.argv[1:])
"""


def started(process: subprocess.Popen[str], words: str, limit: float = 60) -> str:
    seen = ""
    deadline = time.monotonic() + limit
    assert process.stdout is not None
    while words not in seen and time.monotonic() < deadline:
        seen += process.stdout.readline()
    return seen


@pytest.mark.skipif(os.name != "posix", reason="SIGINT to a subprocess needs POSIX")
def test_ctrl_c_stops_a_game_waiting_on_a_thread_and_says_how_to_go_on(tmp_path: Path) -> None:
    out = tmp_path / "run"
    process = subprocess.Popen(
        [sys.executable, "-c", SLOW_THREAD_MODEL, "play", str(TINY), "--model", "scripted",
         "--embedder", "none", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "200"})
    try:
        header = started(process, "→")
        assert "→" in header
        time.sleep(1.0)  # the first generation is running in its thread now
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=15)
        took = time.monotonic() - sent
    finally:
        process.kill()
    assert took < 3, f"took {took:.1f} s to stop"
    assert process.returncode == 130
    assert f"Continue with: jubensha play --resume {out}" in " ".join(rest.split())
    assert (out / "meta.json").is_file() and not (out / "result.json").exists()


def test_run_job_turns_a_cancel_by_ctrl_c_into_interrupted() -> None:
    async def job() -> None:
        os.kill(os.getpid(), signal.SIGINT)
        await asyncio.sleep(5)

    began = time.monotonic()
    with pytest.raises(Interrupted):
        run_job(job)
    assert time.monotonic() - began < 2
    assert run_job(lambda: asyncio.sleep(0, result=7)) == 7  # the loop is fresh each time


def test_the_bar_counts_every_logged_call() -> None:
    bar = CallBar(Console(file=open(os.devnull, "w")), "test", expected=3)  # noqa: SIM115
    log = CallLog(on_call=bar.on_call)
    record = CallRecord(model="m", messages=[], config=GenerateConfig())
    with bar.shown():
        log.append(record.model_copy())
        log.append(record.model_copy())
    log.append(record.model_copy())  # after the bar closed: not counted
    assert bar.done == 2


def _record(model: str, origin: str = "live") -> CallRecord:
    return CallRecord(model=model, messages=[], config=GenerateConfig(), origin=origin)


def test_a_job_speed_measured_by_one_command_estimates_the_next(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert measured_speed("local") is None
    clock = [100.0]  # read as often as the bar likes (each call it counts reads it)
    monkeypatch.setattr(jobs.time, "perf_counter", lambda: clock[0])
    bar = CallBar(Console(file=open(os.devnull, "w")), "test")  # noqa: SIM115
    log = CallLog(on_call=bar.on_call)
    with bar.shown():
        for _ in range(3):
            log.append(_record("local"))
        log.append(_record("local", origin="cache"))  # answered by no model
        clock[0] = 121.0  # the job ran 21 s
    assert measured_speed("local") == 7.0  # wall-clock seconds per live call
    assert estimate_line(1258, ["local"]) == (
        "about 1,258 model calls; at 7.0 s a call (measured here before) about 2.4 h")


def test_too_few_calls_say_nothing_of_a_speed() -> None:
    bar = CallBar(Console(file=open(os.devnull, "w")), "test")  # noqa: SIM115
    with bar.shown():
        CallLog(on_call=bar.on_call).append(_record("openai:x"))
    assert measured_speed("openai:x") is None


def test_without_a_measured_speed_the_estimate_gives_the_count_only() -> None:
    line = estimate_line(282, ["openai:never-seen"])
    assert line.startswith("about 282 model calls (")
    assert " h" not in line and "min" not in line


def shown_count(bar: CallBar) -> str:
    return CallCount(bar).render(bar.progress.tasks[0]).plain


def test_the_count_never_passes_its_total_nor_goes_back_and_ends_at_n_of_n() -> None:
    out = Console(record=True, force_terminal=True, width=120, file=io.StringIO())
    bar = CallBar(out, "playing", expected=3)
    counts = []
    with bar.shown():
        for _ in range(5):
            bar.advance()
            counts.append(shown_count(bar))
    assert counts == ["1/3", "2/3", "3/3", "4", "5"]  # past the estimate: no total
    assert shown_count(bar) == "5/5"  # it ended: all done
    last = out.export_text().split("playing")[-1]  # the frame the terminal keeps
    assert "5/5 calls" in last and not last.split("ETA")[-1].strip()  # no time left shown


def test_notes_rewrites_and_second_attempts_are_not_counted() -> None:
    bar = CallBar(Console(file=io.StringIO()), "playing", expected=2)
    log = CallLog(on_call=bar.on_call)
    with bar.shown():
        log.append(_record("local"))
        log.append(_record("local").model_copy(update={"attempt": 2}))  # a retry of it
        log.append(_record(NOT_A_CALL))  # a guard.trim, a detective's plan
        log.append(_record("local").model_copy(update={"purpose": "guard"}))
        log.append(_record("local").model_copy(update={"attempt": 1}))
    assert bar.done == 2


def test_the_time_left_comes_from_the_pace_after_the_first_calls(
        monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr(jobs.time, "perf_counter", lambda: now[0])
    bar = CallBar(Console(file=io.StringIO()), "playing", expected=10)
    with bar.shown():
        assert bar.seconds_left() is None  # nothing measured yet
        now[0] += 60
        bar.advance()  # the first call loads the model: a minute
        now[0] += 10
        bar.advance()
        assert bar.seconds_left() is None  # too few calls to say
        now[0] += 10
        bar.advance()  # 10 s a call since the first, 7 to go
        assert bar.seconds_left() == 70
        now[0] += 4
        assert bar.seconds_left() == 66  # the running call counts down
        now[0] += 60
        assert bar.seconds_left() == 60  # a slow call takes off at most one call's time


def test_a_draft_shows_above_the_bar_until_it_is_cleared() -> None:
    from rich.text import Text

    out = Console(record=True, force_terminal=True, width=80)
    bar = CallBar(out, "playing", expected=2)
    with bar.shown():
        bar.draft(Text("Agnes Pike is saying: I was in the kitchen."))
        rendered = list(bar.progress.get_renderables())
        assert "I was in the kitchen" in str(rendered[0])
        bar.draft(None)
        assert len(list(bar.progress.get_renderables())) == 1
