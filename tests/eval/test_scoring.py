"""Scoring one run with several metrics (``eval.scoring``), the loop that ``jubensha eval
all`` and a batch share: each metric skipped, scored or failed, in order, and which errors a
metric may fail with being the caller's choice."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from jubensha.eval.judge import open_session
from jubensha.eval.registry import MetricSpec, get_metric
from jubensha.eval.report import MetricResult
from jubensha.eval.scoring import EXPECTED_ERRORS, score_metrics
from jubensha.runlog.folder import read_run
from jubensha.runlog.script import played_script
from tests.eval.postgame_helpers import play


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return play(tmp_path_factory.mktemp("scoring") / "run")


@pytest.fixture
def run_dir(finished: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(finished, tmp_path / "run"))


def raising(name: str, error: Exception) -> MetricSpec:
    async def compute(context: Any) -> MetricResult:
        raise error

    return dataclasses.replace(get_metric("culprit-rank"), name=name, compute=compute)


def score(run_dir: Path, specs: list[MetricSpec], catch: tuple[type[Exception], ...],
          group: str | None = None) -> tuple[list[MetricResult], list[tuple[str, str, str]]]:
    run = read_run(run_dir)
    session = open_session(run_dir)
    try:
        results, statuses = asyncio.run(score_metrics(
            specs, played_script(run), run, session, judge=None, embedder=None, samples=1,
            options={}, catch=catch, group=group))
    finally:
        session.close()
    return results, [(s.metric, s.status, s.note) for s in statuses]


def test_each_metric_is_skipped_scored_or_failed_in_order(run_dir: Path) -> None:
    specs = [get_metric("mirage-llm-score"), raising("broken", ValueError("no chat")),
             get_metric("culprit-rank")]
    results, statuses = score(run_dir, specs, EXPECTED_ERRORS, group="en naive")
    assert statuses == [("mirage-llm-score", "skipped", "needs --judge MODEL"),
                        ("broken", "failed", "ValueError: no chat"),
                        ("culprit-rank", "scored", "")]
    assert [r.metric for r in results] == ["culprit-rank"]
    written = json.loads((run_dir / "eval" / "culprit-rank.json").read_text(encoding="utf-8"))
    assert written["group"] == results[0].group == "en naive"
    assert not (run_dir / "eval" / "broken.json").exists()


def test_an_error_outside_the_policy_stops_the_loop(run_dir: Path) -> None:
    specs = [raising("buggy", RuntimeError("a bug")), get_metric("culprit-rank")]
    with pytest.raises(RuntimeError, match="a bug"):
        score(run_dir, specs, EXPECTED_ERRORS)
    assert not (run_dir / "eval" / "culprit-rank.json").exists()


def test_a_batch_policy_records_any_error_and_goes_on(run_dir: Path) -> None:
    specs = [raising("buggy", RuntimeError("a bug")), get_metric("culprit-rank")]
    results, statuses = score(run_dir, specs, (Exception,))
    assert statuses == [("buggy", "failed", "RuntimeError: a bug"),
                        ("culprit-rank", "scored", "")]
    assert results[0].group == ""  # no group given: the metric's own result

