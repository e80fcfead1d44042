"""What a batch's folders say: each game's index row read from its run folder and the
attempts set aside beside it, a run's metric results, and the index kept in agreement with
the folders (``BatchFolder``). The folders are the truth; the index is rebuilt from them.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from pydantic import ValidationError

from jubensha.eval.judge import EVAL_DIR
from jubensha.eval.registry import MetricContext, get_metric, load_metrics
from jubensha.eval.report import MetricResult, headline
from jubensha.eval.scoring import SUMMARY, EvalSummary, MetricStatus
from jubensha.eval.vote_metrics import VictimVotes, has_votes, identification_metric
from jubensha.llm.calls import CallRecord
from jubensha.llm.keys import Server
from jubensha.runlog.attempts import earlier_attempts
from jubensha.runlog.consistency import disagreements, folder_disagreements
from jubensha.runlog.folder import CALLS, RESULT, RunError, RunResult, read_json, read_own, read_run
from jubensha.runlog.resume import spent
from jubensha.runs.attempt import read_error, spend_of
from jubensha.runs.game_scores import ANSWERS, FAILED_ANSWERS, SCORING
from jubensha.runs.index import BatchIndex, GameRow, Spend
from jubensha.runs.spec_schema import BatchSpec, PlannedGame
from jubensha.safeload import MAX_BYTES


def side_usage(records: list[CallRecord], murderers: Iterable[str]) -> dict[str, Spend]:
    """Model use of the civilians' seats and of the murderers' seats (a call made for no
    seat counts on neither side)."""
    guilty = set(murderers)
    return {side: spend_of([r for r in records if r.seat is not None
                            and (r.seat in guilty) == (side == "murderers")])
            for side in ("civilians", "murderers")}


def calls_of(folder: Path) -> list[CallRecord]:
    if not (folder / CALLS).is_file():
        return []
    try:
        return read_run(folder).calls
    except RunError:
        return []


def result_type(name: str) -> type[MetricResult]:
    """The result class a registered metric returns (its ``compute`` annotation)."""
    hints = typing.get_type_hints(get_metric(name).compute)
    kind = hints.get("return", MetricResult)
    return kind if isinstance(kind, type) and issubclass(kind, MetricResult) else MetricResult


def read_metric(name: str, path: Path) -> dict[str, Any]:
    """The numbers of ``eval/<name>.json``, read as its metric's result class, and how it
    was scored (``scoring``: its judge, grading and reading)."""
    try:
        result = result_type(name).model_validate_json(read_own(path, MAX_BYTES))
    except (RunError, ValueError) as exc:
        return {"error": f"{path.name}: {str(exc).splitlines()[0]}"}
    return {**headline(result), SCORING: result.scoring.label(),
            ANSWERS: result.scoring.answers, FAILED_ANSWERS: result.scoring.failed_answers}


def read_metrics(folder: Path) -> dict[str, Any]:
    """A run's evaluation: metric → its numbers, ``{"error": ...}`` or ``{"skipped": ...}``
    (from the registered metrics' ``eval/<metric>.json`` and the summary ``eval/all.json``)."""
    known = load_metrics()
    found: dict[str, Any] = {}
    for path in sorted((folder / EVAL_DIR).glob("*.json")):
        if path.stem in known:
            found[path.stem] = read_metric(path.stem, path)
    for status in statuses_of(folder / EVAL_DIR).values():
        if status.status == "skipped":
            found[status.metric] = {"skipped": status.note}
        elif status.status == "failed":
            found[status.metric] = {"error": status.note, ANSWERS: status.answers,
                                    FAILED_ANSWERS: status.failed_answers}
    return found


def _finished_at(path: Path) -> str:
    return datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat(timespec="seconds")


async def row_from_folders(root: Path, game: PlannedGame) -> GameRow:
    """The game's index row as its folders tell it: finished (``result.json``), failed (an
    unfinished folder), or pending (no folder); every attempt's model use is summed."""
    folder = root / game.name
    olds = [old for old in earlier_attempts(folder) if not old.is_symlink()]
    attempts = [*olds, folder] if folder.is_dir() and not folder.is_symlink() else olds
    row = GameRow(id=game.id, position=game.position, name=game.name,
                  script=game.settings.script_id, procedure=game.settings.procedure,
                  architecture=game.settings.architecture, model=game.settings.model,
                  seed=game.settings.seed, settings=game.settings.model_dump(mode="json"),
                  attempts=len(attempts))
    for path in attempts:
        row.spent = row.spent + spend_of(spent(calls_of(path)))
    if folder.is_symlink():  # a run from elsewhere, not a game this batch played
        row.status = "failed"
        row.error = (f"refused: {game.name} is a symbolic link; a batch counts only the "
                     "game folders it holds")
        return row
    if not folder.is_dir():
        return row
    try:
        run = read_run(folder)
    except RunError:
        run = None
    row.usage = spend_of(run.calls) if run else Spend()
    row.sides = side_usage(run.calls, game.script.murderers) if run else {}
    row.started = run.meta.started if run and run.meta else None
    row.provenance = run.meta.provenance if run and run.meta else None
    if run is None or run.result is None or run.result.degraded:
        error = read_error(folder)
        row.status = "failed"
        row.error = (f"{error.kind}: {error.message}" if error else
                     "interrupted: the attempt left no result.json and no error.json")
        row.finished = error.time if error else None
        return row
    differ = disagreements(run)
    if differ:
        row.status = "failed"
        row.error = f"refused: its files disagree: {'; '.join(differ)}"
        return row
    row.status = "finished"
    row.finished = _finished_at(folder / RESULT)
    row.duration_s = run.result.duration_s
    row.winner = run.result.winner
    row.failures = run.result.failures
    if has_votes(game.script, run) is None:  # a script with no solution scores no ballot
        votes = cast(VictimVotes,  # the metric decorator keeps only MetricResult
                     await identification_metric(MetricContext(script=game.script, run=run)))
        row.votes_on_murderer = sum(k for k, _ in votes.victims.values())
        row.votes_counted = sum(c for _, c in votes.victims.values())
    row.metrics = read_metrics(folder)
    return row


def checked(root: Path, rows: list[GameRow]) -> list[GameRow]:
    """``rows`` of an index as their folders still tell them: a finished game whose folder
    is a link, cannot be read, or whose files disagree (``runlog.consistency``) is counted
    as failed with the reason. An index is a cache anyone who shares the folder can edit;
    the games' own logs decide what a report counts."""
    return [_checked(root, row) if row.status == "finished" else row for row in rows]


def _checked(root: Path, row: GameRow) -> GameRow:
    folder = root / row.name
    if folder.is_symlink():
        why = f"{row.name} is a symbolic link; a batch counts only the game folders it holds"
    else:
        try:
            differ = folder_disagreements(folder)
            result = read_json(folder / RESULT, RunResult)
        except RunError as exc:
            why = f"its folder cannot be read ({exc})"
        else:
            if not differ and result is not None and result.winner == row.winner:
                return row
            why = ("its files disagree: " + "; ".join(differ) if differ else
                   f"the index says the winner is {row.winner!r}, its result.json says "
                   f"{result.winner if result else 'nothing'!r}")
    return row.model_copy(update={"status": "failed", "error": f"refused: {why}",
                                  "winner": None})


def statuses_of(folder: Path, names: Iterable[str] = ()) -> dict[str, MetricStatus]:
    """The metric statuses of an earlier evaluation of the run, to be updated; of
    ``names``, a metric whose result file is there counts as scored even when the summary
    is not (a batch killed between writing a result and writing the summary)."""
    path = folder / f"{SUMMARY}.json"
    try:
        summary = EvalSummary.model_validate_json(read_own(path, MAX_BYTES))
        found = {status.metric: status for status in summary.statuses}
    except (RunError, ValidationError):
        found = {}
    for name in names:
        if name not in found and (folder / f"{name}.json").is_file():
            found[name] = MetricStatus.model_validate(
                {"metric": name, "status": "scored", **_answers(folder / f"{name}.json")})
    return found


def _answers(path: Path) -> dict[str, int]:
    """The answer counts a result file holds (``scoring``), for a status rebuilt from it."""
    try:
        scoring = json.loads(read_own(path, MAX_BYTES)).get("scoring")
    except (RunError, ValueError, AttributeError):
        return {}
    if not isinstance(scoring, dict):
        return {}
    return {key: value for key in ("answers", "failed_answers")
            if isinstance(value := scoring.get(key), int)}


def position_of(names: list[str], name: str) -> int:
    return names.index(name) if name in names else len(names)


class BatchFolder:
    """A batch folder, the games its spec expands to and the index of them, which the
    folders can always rebuild."""

    def __init__(self, root: Path, spec: BatchSpec, games: list[PlannedGame],
                 servers: dict[str, Server] | None = None) -> None:
        self.root = root
        self.spec = spec
        self.games = games
        self.servers = servers or {}
        """Where the models are served (``batch_servers``); empty for a batch only read."""
        self.index = BatchIndex.of(root)

    def close(self) -> None:
        self.index.close()

    async def sync(self) -> list[GameRow]:
        """Make the index agree with the folders: every game not recorded as finished is read
        again from its folders (games left 'running' by a crash become 'failed')."""
        known = {row.id: row for row in self.index.rows()}
        rows = []
        for game in self.games:
            row = known.get(game.id)
            if row is None or row.status != "finished" or row.name != game.name or not (
                    self.root / game.name / RESULT).is_file():
                row = await row_from_folders(self.root, game)
            rows.append(row.model_copy(update={"position": game.position}))
        self.index.put_all(rows)
        return rows

    async def reindex(self) -> list[GameRow]:
        """Write the index again from the run folders alone."""
        rows = [await row_from_folders(self.root, game) for game in self.games]
        self.index.clear()
        self.index.put_all(rows)
        return rows
