"""Fuzzing every loader and importer with hypothesis: mutated and generated inputs, in
small folders laid out as each loader expects, end in the data loaded (and, for scripts,
saved and read back the same) or in the loader's own error whose message names the file,
in bounded time and memory, and with no file from outside the folder in what was written.

Each example runs in a worker process under a watchdog (``harness.py``): a segfault, a hang
or a blown memory limit is reported as a failure, not a crash of the test run. ``--long``
(``JUBENSHA_LONG_TESTS=1``) runs 15 times as many examples; ``JUBENSHA_COUNTS=FILE``
appends each loader's count of examples and outcomes to FILE (the figures of
docs/reliability.md)."""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz.harness import Outcome, Worker
from tests.fuzz.mutations import SECRET_NAME, Entry, Folder, Link, examples
from tests.fuzz.shapes import SEEDS

LONG = os.environ.get("JUBENSHA_LONG_TESTS") == "1"
EXAMPLES = 1500 if LONG else 100
SECRET = "JUBENSHA-FUZZ-SECRET-3f1c"
MAX_LINE = 1000
"""Longest line an error may print: a message never echoes a huge value."""


@pytest.fixture(scope="module")
def worker() -> Iterator[Worker]:
    running = Worker()
    yield running
    running.close()


def write(folder: Path, files: dict[str, Entry]) -> None:
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, Link):
            path.symlink_to(content.target)
        elif isinstance(content, Folder):
            path.mkdir(exist_ok=True)


def problem(outcome: Outcome, folder: Path) -> str | None:
    """What is wrong with an outcome, or None."""
    if outcome.kind == "loaded":
        return None
    if outcome.kind != "refused":
        return f"{outcome.kind}: {outcome.message}"
    lines = outcome.message.splitlines() or [""]
    if not all(str(folder) in line for line in lines):
        return f"an error line names no file of the input: {outcome.message[:MAX_LINE]!r}"
    longest = max(lines, key=len)
    if len(longest) > MAX_LINE:
        return f"an error line of {len(longest):,} characters: {longest[:300]!r}…"
    return None


def leaked(folder: Path) -> list[str]:
    """Files written under the example's folder that hold the secret from outside it."""
    return [str(p) for p in folder.rglob("*") if p.is_file() and not p.is_symlink()
            and SECRET.encode() in p.read_bytes()]


@pytest.mark.parametrize("loader", sorted(SEEDS))
def test_a_loader_ends_in_data_or_its_own_error(loader, worker, tmp_path):
    seed = SEEDS[loader]()
    (tmp_path / SECRET_NAME).write_text(SECRET, encoding="utf-8")
    counts: Counter[str] = Counter()

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=not LONG, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def check(data: st.DataObject) -> None:
        files = data.draw(examples(seed), label="files")
        folder = tmp_path / "example"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        write(folder, files)
        outcome = worker.ask(loader, folder)
        counts[outcome.kind] += 1
        counts["with a link out"] += any(isinstance(entry, Link) for entry in files.values())
        wrong = problem(outcome, folder)
        assert wrong is None, wrong
        assert leaked(folder) == [], "a file from outside the input's folder was copied"

    try:
        check()
    finally:
        record(loader, counts)
    assert counts["loaded"] + counts["refused"] >= EXAMPLES // 2


def record(loader: str, counts: Counter[str]) -> None:
    target = os.environ.get("JUBENSHA_COUNTS")
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"loader": loader, **counts}) + "\n")


def test_the_watchdog_reports_a_segfault_a_memory_hog_and_a_hang(tmp_path):
    watchdog = Worker(timeout_s=5)
    try:
        segfault = watchdog.ask("segfault", tmp_path)
        hog = watchdog.ask("memory-hog", tmp_path)
        hang = watchdog.ask("hang", tmp_path)
        after = watchdog.ask("script", tmp_path)  # a fresh worker takes the next example
    finally:
        watchdog.close()
    assert segfault.kind == "died" and "SIGSEGV" in segfault.message
    assert hog.kind == "crashed" and "MemoryError" in hog.message
    assert hang.kind == "hung"
    assert after.kind == "refused" and watchdog.started == 3
