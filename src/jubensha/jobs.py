"""Long model jobs on the command line: a live count of model calls, and Ctrl-C that stops
within a second, keeping what is done and saying how to continue.

``asyncio.run`` is not enough for that: on Ctrl-C it cancels the job and then waits for the
default executor's threads, where the embedded model generates (``asyncio.to_thread``),
running every generation already queued there. ``run_job`` gives the loop its own executor,
cancels queued work on Ctrl-C, and when a generation is still running in a thread it
abandons it: the logs were flushed line by line, so the process exits at once
(``os._exit``) after printing how to continue.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from rich.console import Console, RenderableType
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.progress_bar import ProgressBar
from rich.text import Text

from jubensha.llm.calls import CallRecord, OnCall, is_note
from jubensha.llm.health import ModelUnreachable
from jubensha.prompts import message
from jubensha.terminal import Terminal
from jubensha.userdirs import cache_dir

T = TypeVar("T")
EXIT_INTERRUPTED = 130
EXIT_STOPPED = 3
"""The job stopped early: its model could not be reached, or its calls kept failing."""


class Interrupted(Exception):
    """The person pressed Ctrl-C; the job was cancelled and what it finished is kept."""


def run_job(job: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run ``job()`` in a fresh event loop; Ctrl-C cancels it at once (``Interrupted``)."""
    loop = asyncio.new_event_loop()
    executor = ThreadPoolExecutor(thread_name_prefix="jubensha-job")
    loop.set_default_executor(executor)
    task = loop.create_task(job())
    stopped = threading.Event()

    def on_sigint() -> None:
        stopped.set()
        task.cancel()

    handled = _add_handler(loop, on_sigint)
    try:
        return loop.run_until_complete(task)
    except asyncio.CancelledError:
        if stopped.is_set():
            raise Interrupted from None
        raise
    except KeyboardInterrupt:  # no handler could be installed (not the main thread)
        raise Interrupted from None
    finally:
        if handled:
            loop.remove_signal_handler(signal.SIGINT)
        executor.shutdown(wait=False, cancel_futures=True)
        _close(loop)


def _add_handler(loop: asyncio.AbstractEventLoop, handler: Callable[[], None]) -> bool:
    try:
        loop.add_signal_handler(signal.SIGINT, handler)
    except (NotImplementedError, RuntimeError, ValueError):
        return False
    return True


def _close(loop: asyncio.AbstractEventLoop) -> None:
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for leftover in pending:
        leftover.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()


def busy_threads() -> bool:
    """Whether a job's thread is still working (a generation that cannot be cancelled)."""
    return any(t.name.startswith("jubensha-job") and t.is_alive() for t in threading.enumerate())


def stop_here(errors: Console, what: str, again: str | None, lang: str = "en") -> None:
    """Say what was kept and how to continue, then end the process (at once when a model
    thread is still generating: waiting for it is what made Ctrl-C take half a minute)."""
    line = Text(message(lang, "stopped"), style="bold yellow") + Text(what)
    if again:
        line += Text(message(lang, "continue_with", command=again))
    errors.print(line, soft_wrap=True)
    if busy_threads():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_INTERRUPTED)
    raise SystemExit(EXIT_INTERRUPTED)


def stop_unreachable(errors: Console, error: ModelUnreachable, kept: str,
                     lang: str = "en") -> NoReturn:
    """Say in one line which model could not answer and what is kept, then exit 3."""
    errors.print(Text(message(lang, "stopped"), style="bold red") + Text(error.say(lang)),
                 soft_wrap=True)
    errors.print(kept, soft_wrap=True)
    raise SystemExit(EXIT_STOPPED)


def speed_file() -> Path:
    """Where the measured seconds per model call are kept between commands."""
    return cache_dir() / "speed.json"


INSTANT_MODELS = ("scripted", "replay", "none")
"""Model kinds that answer at once: counting their calls ahead is not worth a dry run."""


def takes_time(model: str) -> bool:
    """Whether a model spec names a model that takes real time per call."""
    return model.split(":")[0].strip().lower() not in INSTANT_MODELS


MIN_MEASURED_CALLS = 3
"""Fewer live calls than this say too little about a job's speed to keep."""


def measured_speed(model: str) -> float | None:
    """Seconds per live call of ``model`` measured by an earlier command on this machine."""
    try:
        book = json.loads(speed_file().read_text(encoding="utf-8"))
        return float(book[model])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def keep_speed(live: dict[str, int], elapsed_s: float) -> None:
    """Remember the job's wall-clock seconds per live call for each model it called: what
    one more call costs a job like it, concurrency included (the sum of call latencies
    overstates it when seats wait on one local model together). Best effort: a read-only
    home only loses the estimate."""
    calls = sum(live.values())
    if calls < MIN_MEASURED_CALLS:
        return
    measured = {model: elapsed_s / calls for model in live}
    path = speed_file()
    try:
        book = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        book = book if isinstance(book, dict) else {}
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**book, **measured}, indent=1), encoding="utf-8")
    except (OSError, ValueError):
        pass


def estimate_line(calls: int, models: list[str], lang: str = "en", *, bar: bool = True,
                  parallel: int = 1) -> str:
    """'about N model calls' and, when every model's speed was measured here before, the
    time they take at that speed, ``parallel`` jobs at once (else, where a progress ``bar``
    is drawn, that it will show the time left), in ``lang``."""
    text = message(lang, "estimate_call" if calls == 1 else "estimate_calls", calls=calls)
    speeds = [measured_speed(model) for model in models]
    known = [speed for speed in speeds if speed is not None]
    if not models or len(known) < len(speeds):
        return text + (message(lang, "estimate_unknown") if bar else "")
    slowest = max(known)
    key = "estimate_known_parallel" if parallel > 1 else "estimate_known"
    return text + message(lang, key, speed=slowest, parallel=parallel,
                          duration=duration(calls * slowest / parallel, lang))


def duration(seconds: float, lang: str = "en") -> str:
    if seconds < 90:
        return message(lang, "seconds", n=seconds)
    if seconds < 5400:
        return message(lang, "minutes", n=seconds / 60)
    return message(lang, "hours", n=seconds / 3600)


class MovingETA(ProgressColumn):
    """Time left that moves while a call runs: the calls still expected at the job's own
    seconds per call, less the time the current call has already taken. Rich's own column
    holds still between finished calls (minutes, when calls are slow). Nothing once the
    job has ended."""

    def __init__(self, bar: CallBar) -> None:
        super().__init__()
        self.bar = bar

    def render(self, task: Task) -> Text:
        if self.bar.ended:
            return Text("")
        left = self.bar.seconds_left()
        if left is None:
            return Text("-:--:--", style="progress.remaining")
        hours, rest = divmod(int(left), 3600)
        return Text(f"{hours}:{rest // 60:02d}:{rest % 60:02d}", style="progress.remaining")


class CallCount(ProgressColumn):
    """``done/expected``, or ``done`` alone once the count has reached an estimate that
    the job outran: never past its total, never backwards."""

    def __init__(self, bar: CallBar) -> None:
        super().__init__()
        self.bar = bar

    def render(self, task: Task) -> Text:
        total = self.bar.expected
        shown = f"{self.bar.done}/{total}" if total is not None else f"{self.bar.done}"
        return Text(shown, style="progress.download")


class CallBarColumn(BarColumn):
    """The bar of ``CallBar``'s own count: full at its total, pulsing without one."""

    def __init__(self, bar: CallBar) -> None:
        super().__init__()
        self.bar = bar

    def render(self, task: Task) -> ProgressBar:
        total = self.bar.expected
        return ProgressBar(total=total, completed=min(self.bar.done, total or 0),
                           width=None if self.bar_width is None else max(1, self.bar_width),
                           pulse=total is None and not self.bar.ended,
                           animation_time=task.get_time(), style=self.style,
                           complete_style=self.complete_style,
                           finished_style=self.finished_style, pulse_style=self.pulse_style)


class _DraftProgress(Progress):
    """A progress display with the speech being written, when there is one, above it."""

    def __init__(self, *columns: Any, draft: Callable[[], Text | None], **options: Any) -> None:
        self._draft = draft  # first: rich renders once while it starts
        super().__init__(*columns, **options)

    def get_renderables(self) -> Iterable[RenderableType]:
        shown = self._draft()
        if shown is not None:
            yield shown
        yield from super().get_renderables()


MIN_ETA_CALLS = 3
"""Calls counted before the time left is shown: the first ones (loading the model, the
longest prompts) say little of the pace."""


def counted(record: CallRecord) -> bool:
    """Whether the bar counts ``record``: a model call of the kind a game's estimate counts
    (``runs.estimate``), not a note (the guard's trims, a detective's plan), not the speech
    guard's rewrite, not a second attempt at one structured call."""
    return (not is_note(record.model) and record.purpose != "guard"
            and (record.attempt or 1) == 1)


class CallBar:
    """A progress bar of model calls: done / expected (when known), rate, elapsed, ETA.

    It counts the calls of the call logs it is handed to (``CallLog(on_call=bar.on_call)``)
    that an estimate counts (``counted``) while it is shown, and can also be advanced by
    hand for work that is not a model call (a caption, a game). The count never passes its
    total nor goes back: when the job outruns its estimate, the total is dropped and the
    count shown alone; when the job ends, the total is what was done (``N/N``). The time
    left is measured from the job's own pace, once ``MIN_ETA_CALLS`` calls are done.
    ``draft`` shows a speech being written above the bar (a terminal's live region: it is
    replaced by the final line when that is printed).
    """

    def __init__(self, console: Console, title: str, expected: int | None = None,
                 unit: str = "calls", *, count_calls: bool = True, eta: str = "ETA") -> None:
        self.drafting: Text | None = None
        self.progress = _DraftProgress(
            SpinnerColumn(), TextColumn("[bold]{task.description}"), CallBarColumn(self),
            CallCount(self), TextColumn(unit), TextColumn("{task.fields[note]}"),
            TimeElapsedColumn(), TextColumn(eta), MovingETA(self),
            console=console, transient=False, disable=not console.is_terminal,
            draft=lambda: self.drafting)
        self.task: TaskID = self.progress.add_task(title, total=expected, note="")
        self.expected = expected
        self.count_calls = count_calls
        self.done = 0
        self.open = False
        self.ended = False
        self.live: dict[str, int] = {}
        self.started = time.perf_counter()
        self.first_done: float | None = None
        self.last_done = self.started

    def on_call(self, record: CallRecord) -> None:
        if not self.open:
            return
        if record.origin == "live" and record.error is None:
            self.live[record.model] = self.live.get(record.model, 0) + 1
        if self.count_calls and counted(record):
            self.advance()

    def advance(self, steps: int = 1) -> None:
        if self.expected is not None and self.done + steps > self.expected:
            self.expected = None  # outran the estimate: the count alone from now on
        self.done += steps
        self.last_done = time.perf_counter()
        if self.first_done is None:
            self.first_done = self.last_done
        self.progress.advance(self.task, steps)

    def seconds_left(self) -> float | None:
        """Calls still expected times the seconds per call since the first one, less the
        current call's time (never below a second while calls remain); None before
        ``MIN_ETA_CALLS`` calls or without a total."""
        if self.expected is None or self.done < MIN_ETA_CALLS or self.first_done is None:
            return None
        per_call = (self.last_done - self.first_done) / (self.done - 1)
        running = time.perf_counter() - self.last_done
        left = (self.expected - self.done) * per_call - min(running, per_call)
        return max(left, 1.0)

    def note(self, text: str) -> None:
        self.progress.update(self.task, note=text)

    def expect(self, total: int | None) -> None:
        self.expected = total if total is None or total >= self.done else None
        if total is not None:
            self.progress.update(self.task, total=total)

    def draft(self, text: Text | None) -> None:
        """Show ``text`` above the bar (None: nothing)."""
        self.drafting = text
        self.progress.refresh()

    def finish(self) -> None:
        """The job has ended: its count is its total, the time left goes."""
        self.ended = True
        if self.done > 0:
            self.expected = self.done
            self.progress.update(self.task, total=self.done, completed=self.done)
        self.progress.refresh()

    @contextmanager
    def shown(self) -> Iterator[CallBar]:
        self.open = True
        self.started = self.last_done = time.perf_counter()
        try:
            with self.progress:
                yield self
                self.finish()  # the last frame the terminal keeps: N/N
        finally:
            self.open = False
            self.drafting = None
            keep_speed(self.live, time.perf_counter() - self.started)


def this_command() -> str:
    """The command line as typed, to run again (caches keep the replies already had)."""
    return shlex.join(["jubensha", *sys.argv[1:]])


def model_job(job: Callable[[OnCall], Coroutine[Any, Any, T]], *, title: str,
              expected: int | None = None, again: str | None = None,
              models: list[str] | None = None) -> T:
    """``run_job`` with a call bar on stderr: ``job`` gets the bar's ``on_call`` to hand to
    the call logs it opens. Ctrl-C ends the command with exit 130 and
    the command to continue (by default the same command line), a model that cannot be
    reached (``ModelUnreachable``) with one line and exit 3. With ``expected`` calls,
    say first how many and how long at the ``models``' measured speed."""
    errors = Terminal(stderr=True)
    if expected:
        line = estimate_line(expected, models or [], bar=errors.is_terminal)
        errors.print(Text(f"{title}: {line}", style="dim"), soft_wrap=True)
    try:
        with CallBar(errors, title, expected).shown() as bar:
            return run_job(lambda: job(bar.on_call))
    except ModelUnreachable as exc:
        stop_unreachable(errors, exc, "nothing more was asked; the replies had so far are "
                                      "cached.")
    except Interrupted:
        stop_here(errors, "what was done is kept (model replies are cached).",
                  again or this_command())
        raise  # not reached: stop_here ends the process
