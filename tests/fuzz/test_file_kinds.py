"""Every loader checks a file's kind and size before reading it: a FIFO named like a source
file (which a plain read waits on forever) and a sparse file claiming gigabytes (which a
plain read turns into a MemoryError) are each one line of the loader's own error. Run in
the fuzzing worker, under its memory limit and watchdog, so a regression is a failed
test, not a hung or killed test run."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fuzz.harness import Worker
from tests.fuzz.shapes import SEEDS

SPARSE_BYTES = 3_000_000_000
TARGETS = {
    "script": "script.yaml",
    "procedure": "procedure.yaml",
    "spec": "spec.yaml",
    "options": "options.yaml",
    "prices": "prices.yaml",
    "sensors": "sensors.yaml",
    "cassette": "cassette.jsonl",
    "run": "run/events.jsonl",
    "conan": "english/data_final/001-Tiny/txt/Ann.txt",
    "wellplay": "Tiny/final_result/Bob.csv",
    "wellplay-info": "Tiny/json/script_info.json",
    "wellplay-character": "Tiny/json/Ann.json",
    "mirage": "En/Tiny/script.json",
    "whodunitbench": "TINY/env_p_all.json",
    "thinkthrice": "game.json",
    "player-log": "logs/Tiny/Tiny.xlsx",
    "player-evaluation": "evaluation_0.xlsx",
}
"""Loader (``-info``, ``-character``: other files of the same loader) → the file made a
FIFO or sparse."""


@pytest.fixture(scope="module")
def worker() -> Iterator[Worker]:
    found = Worker()
    yield found
    found.close()


def example(folder: Path, name: str, kind: str) -> str:
    """The loader's seed in ``folder`` with its target file replaced; returns the loader."""
    loader = name.removesuffix("-info").removesuffix("-character")
    for relative, data in SEEDS[loader]().items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    target = folder / TARGETS[name]
    target.unlink()
    if kind == "fifo":
        os.mkfifo(target)
    else:
        with target.open("wb") as handle:
            handle.truncate(SPARSE_BYTES)
    return loader


@pytest.mark.parametrize("kind", ["fifo", "sparse"])
@pytest.mark.parametrize("name", list(TARGETS))
def test_a_fifo_or_a_huge_sparse_file_is_refused_before_reading(
        worker: Worker, tmp_path: Path, name: str, kind: str) -> None:
    loader = example(tmp_path, name, kind)
    outcome = worker.ask(loader, tmp_path)
    assert outcome.kind == "refused", outcome.message
    line = outcome.message.splitlines()[0]
    assert TARGETS[name].rsplit("/", 1)[-1] in line or str(tmp_path) in line
    assert len(outcome.message.splitlines()) <= 3
    assert "no such file" not in outcome.message  # a FIFO named like a character file was


def test_attack_a_fifo_named_like_a_character_file_is_no_missing_file(
        worker: Worker, tmp_path: Path) -> None:
    """A FIFO at WellPlay's json/<character>.json was reported as "no such file"."""
    outcome = worker.ask(example(tmp_path, "wellplay-character", "fifo"), tmp_path)
    assert "Ann.json: (file): not a regular file (a FIFO)" in outcome.message
