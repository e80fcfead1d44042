"""Executors: one interface the batch runner calls, whatever plays the games."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from jubensha.runs.batch import Batch, Update
from jubensha.runs.batch_runner import open_executor
from jubensha.runs.executors import LocalExecutor
from jubensha.runs.spec import load_spec

TINY = str(Path(__file__).parents[1] / "engine" / "tiny_script.yaml")
SPEC = (f"scripts: [{TINY}, lighthouse-keeper]\narchitectures: [naive]\nmodels: scripted\n"
        "seeds: [0, 1]\nembedder: none\nconcurrency: 4\n")


def events(root: Path) -> dict[str, list[Any]]:
    found = {}
    for path in sorted(root.glob("*/events.jsonl")):
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        found[path.parent.name] = [{k: v for k, v in e.items() if k != "time"} for e in lines]
    return found


def play(tmp_path: Path, name: str, extra: str = "") -> tuple[Any, list[Update]]:
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(SPEC + extra, encoding="utf-8")
    batch = Batch.open(load_spec(spec), tmp_path / name)
    updates: list[Update] = []
    try:
        return asyncio.run(batch.run(on_update=updates.append)), updates
    finally:
        batch.close()


def test_the_local_executor_is_the_default(tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(SPEC, encoding="utf-8")
    executor = open_executor(load_spec(tmp_path / "spec.yaml"), tmp_path, None, {})
    assert isinstance(executor, LocalExecutor) and executor.watched


def test_processes_play_the_games_a_local_batch_plays(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="the processes executor needs Ray: pip install -e '.[ray]'")
    local, _ = play(tmp_path, "local")
    spread, updates = play(tmp_path, "spread", "executor: {kind: processes, processes: 2}\n")
    assert spread.finished == local.finished == 4
    assert events(tmp_path / "spread") == events(tmp_path / "local")
    # the calls were made in other processes; the runner counts them as each game ends
    assert sum(u.unwatched_calls for u in updates) == spread.spent.calls == local.spent.calls
