"""Run folders that belong to no batch (games played with ``jubensha play`` or in the
browser, imported logs), found under a folder and summarised as index rows, so that
``runs report`` reads them as it reads a batch. Nothing is written: the rows are built
from the folders each time."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

from jubensha.eval.registry import MetricContext
from jubensha.eval.vote_metrics import VictimVotes, has_votes, identification_metric
from jubensha.runlog.attempts import is_earlier_attempt
from jubensha.runlog.consistency import disagreements
from jubensha.runlog.folder import EVENTS, META, RESULT, RunError, RunLog, read_run
from jubensha.runlog.resume import spent
from jubensha.runlog.script import played_script
from jubensha.runs.attempt import degraded_message, spend_of
from jubensha.runs.batch_folders import read_metrics
from jubensha.runs.index import GameRow
from jubensha.scripts.model import Script

MAX_DEPTH = 4
MAX_RUNS = 5000


def is_run_folder(folder: Path) -> bool:
    """A run folder, not an attempt set aside beside the game it was resumed into."""
    return ((folder / META).is_file() or (folder / EVENTS).is_file()) and not (
        is_earlier_attempt(folder))


def find_run_folders(root: Path) -> list[Path]:
    """Run folders under ``root`` (itself included), breadth first, at most ``MAX_DEPTH``
    levels down and ``MAX_RUNS`` in all; symlinks are not followed."""
    if is_run_folder(root):
        return [root]
    found: list[Path] = []
    frontier = [root] if root.is_dir() else []
    for _ in range(MAX_DEPTH):
        following = []
        for folder in frontier:
            for child in sorted(_subfolders(folder)):
                if is_run_folder(child):
                    found.append(child)
                else:
                    following.append(child)
                if len(found) >= MAX_RUNS:
                    return found
        frontier = following
    return found


def _subfolders(folder: Path) -> list[Path]:
    try:
        return [c for c in folder.iterdir() if c.is_dir() and not c.is_symlink()]
    except OSError:
        return []


async def rows_from_runs(root: Path) -> list[GameRow]:
    """One index row per run folder under ``root``; mixed tables show every architecture
    and model of their seats (``human+naive``)."""
    rows = []
    for position, folder in enumerate(find_run_folders(root)):
        try:
            run = read_run(folder)
        except RunError as exc:
            rows.append(_row(folder, root, position, None, error=str(exc)))
            continue
        rows.append(await _finished_row(folder, root, position, run))
    return rows


async def _finished_row(folder: Path, root: Path, position: int, run: RunLog) -> GameRow:
    row = _row(folder, root, position, run)
    if run.result is None:
        row.status, row.error = "failed", "unfinished: the run left no result.json"
        return row
    row.status = "failed" if run.result.degraded else "finished"
    if run.result.degraded:
        row.error = f"degraded: {degraded_message(run.result)}"
    differ = disagreements(run)
    if differ:
        row.status, row.error = "failed", f"refused: its files disagree: {'; '.join(differ)}"
        return row
    stamp = (folder / RESULT).stat().st_mtime
    row.finished = datetime.fromtimestamp(stamp, UTC).isoformat(timespec="seconds")
    row.duration_s = run.result.duration_s
    row.winner = run.result.winner
    row.failures = run.result.failures
    row.metrics = read_metrics(folder)
    script = _script(run)
    if script is not None and has_votes(script, run) is None:
        votes = cast(VictimVotes,  # the metric decorator keeps only MetricResult
                     await identification_metric(MetricContext(script=script, run=run)))
        row.votes_on_murderer = sum(k for k, _ in votes.victims.values())
        row.votes_counted = sum(c for _, c in votes.victims.values())
    return row


def _row(folder: Path, root: Path, position: int, run: RunLog | None,
         error: str | None = None) -> GameRow:
    meta = run.meta if run else None
    name = folder.relative_to(root).as_posix() if folder != root else folder.name
    seats = meta.seats.values() if meta else []
    row = GameRow(
        id=hashlib.sha1(name.encode()).hexdigest()[:12], position=position, name=name,
        script=meta.script_id if meta else "?",
        procedure=str(meta.procedure.get("name", "?")) if meta else "?",
        architecture="+".join(sorted({s.architecture for s in seats})) or "?",
        model="+".join(sorted({s.model for s in seats})) or "?",
        seed=meta.seed if meta else 0, settings={}, status="failed" if error else "pending",
        attempts=1, started=meta.started if meta else None, error=error,
        provenance=meta.provenance if meta else None)
    if run is not None:
        row.usage, row.spent = spend_of(run.calls), spend_of(spent(run.calls))
    return row


def _script(run: RunLog) -> Script | None:
    """The run's script from its folder's own copy (``runlog.script``); None without one."""
    try:
        return played_script(run)
    except RunError:
        return None
