"""One run of a batch: the games not finished yet played where the spec's executor says,
each scored when it finishes, under the batch's budget and concurrency limit.

Each game's attempt is set aside when it did not finish, played again resuming the longest
earlier attempt, and indexed when it ends; a finished game is scored as ``jubensha eval
all`` scores a run (``eval.scoring``), except that any error of a metric is recorded as its
failure: the game stays finished.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from jubensha.eval.commands import build_metric_embedder
from jubensha.eval.judge import EVAL_DIR, open_session
from jubensha.eval.registry import get_metric
from jubensha.eval.scoring import SUMMARY, score_metrics, write_summary
from jubensha.llm.base import Embedder, Model
from jubensha.llm.calls import OnCall
from jubensha.llm.health import ModelUnreachable
from jubensha.llm.keys import Server
from jubensha.llm.registry import parse_model_spec
from jubensha.llm.wrappers import Meter, PriceTable, stack
from jubensha.runlog.attempts import earlier_attempts, set_aside
from jubensha.runlog.folder import read_run
from jubensha.runlog.resume import Resume, spent
from jubensha.runs.attempt import charge, game_job, options_for, read_error, spend_of
from jubensha.runs.batch_folders import (
    BatchFolder,
    calls_of,
    position_of,
    row_from_folders,
    statuses_of,
)
from jubensha.runs.executors import Executor, LocalExecutor, endpoint_limits
from jubensha.runs.index import GameRow, Spend, now
from jubensha.runs.spec_schema import BatchSpec, PlannedGame


@dataclass
class Update:
    """What the progress display is told: a game started, finished or failed."""

    game: PlannedGame
    row: GameRow
    unwatched_calls: int = 0
    """Calls the game made in another process (no call watcher here saw them)."""


class BatchSummary(BaseModel):
    games: int
    finished: int
    failed: int
    pending: int
    played: int
    """Attempts made by this run."""
    skipped: int
    """Games this run did not start because the batch budget was spent."""
    seconds: float
    spent: Spend


def open_executor(spec: BatchSpec, root: Path, batch_meter: Meter | None,
                  servers: dict[str, Server], on_call: OnCall | None = None) -> Executor:
    """The executor ``spec.executor`` names, for the batch folder ``root`` whose models
    are served by ``servers`` (``batch.batch_servers``); ``ExecutorError`` when it cannot
    start."""
    kind = spec.executor.kind
    if kind == "ray":
        from jubensha.runs.ray_executor import RayExecutor

        return RayExecutor(spec, root, servers)
    if kind == "processes":
        from jubensha.runs.process_executor import ProcessExecutor

        return ProcessExecutor(spec, root, servers)
    return LocalExecutor(spec.wrappers.cache, endpoint_limits(spec), batch_meter, on_call)


class BatchRunner:
    """One run of a batch: its shared wrappers, meters and concurrency limit."""

    def __init__(self, batch: BatchFolder, concurrency: int,
                 on_update: Callable[[Update], None] | None, on_call: OnCall | None) -> None:
        self.batch = batch
        self.spec = batch.spec
        self.concurrency = concurrency
        self.on_update = on_update or (lambda update: None)
        self.on_call = on_call
        self.servers = batch.servers
        self.options = options_for(self.spec.options(), self.servers.get(""))
        wrappers = self.spec.wrappers
        self.prices = PriceTable.load(Path(wrappers.prices)) if wrappers.prices else None
        self.batch_meter = (Meter(wrappers.budget_per_batch, "batch")
                            if wrappers.budget_per_batch else None)
        self.executor = open_executor(self.spec, batch.root, self.batch_meter, self.servers,
                                      on_call)
        self.played = self.skipped = 0
        self.judge_client: Model | None = None
        self.judge: Model | None = None
        self.seat_clients: dict[str, tuple[Model, Model]] = {}
        """Model spec → (raw client, wrapped) the seats answer post-game questions with."""
        self.metric_embedder: Embedder | None = None

    async def run(self) -> BatchSummary:
        started = asyncio.get_running_loop().time()
        rows = await self.batch.sync()
        if self.batch_meter is not None:
            for row in rows:
                charge(self.batch_meter, row.spent)
        try:
            await self._complete_metrics(rows)
            limit = asyncio.Semaphore(self.concurrency)
            todo = [g for g, r in zip(self.batch.games, rows, strict=True)
                    if r.status != "finished"]
            try:
                async with asyncio.TaskGroup() as group:
                    for game in todo:
                        group.create_task(self._limited(limit, game))
            except* ModelUnreachable as stopped:  # a dead judge: the batch stops, one line
                raise stopped.exceptions[0] from None
        finally:
            await self._close()
        counts = self.batch.index.counts()
        spent = Spend()
        for row in self.batch.index.rows():
            spent = spent + row.spent
        return BatchSummary(
            games=len(self.batch.games), finished=counts.get("finished", 0),
            failed=counts.get("failed", 0), pending=counts.get("pending", 0),
            played=self.played, skipped=self.skipped,
            seconds=round(asyncio.get_running_loop().time() - started, 3), spent=spent)

    async def _limited(self, limit: asyncio.Semaphore, game: PlannedGame) -> None:
        async with limit:
            if self.batch_meter is not None and self.batch_meter.exceeded():
                self.skipped += 1
                return
            await self._play(game)

    async def _play(self, game: PlannedGame) -> None:
        root, index = self.batch.root, self.batch.index
        folder = root / game.name
        if folder.is_dir():
            set_aside(folder)
        row = await row_from_folders(root, game)
        row = row.model_copy(update={"status": "running", "attempts": row.attempts + 1,
                                     "started": now()})
        index.put(row)
        self.played += 1
        self.on_update(Update(game, row))
        try:
            if await self._attempt(game):
                await self._metrics(game, self.spec.metrics)
        finally:
            row = await row_from_folders(root, game)
            index.put(row)
            self.on_update(Update(game, row, unwatched_calls=0 if self.executor.watched
                                  else spend_of(spent(calls_of(folder))).calls))

    async def _attempt(self, game: PlannedGame) -> bool:
        """Play one attempt into the game's folder, resuming the longest earlier attempt
        (unless the last one found its log diverging from the game)."""
        folder = self.batch.root / game.name
        earlier = earlier_attempts(folder)
        last = read_error(earlier[-1]) if earlier else None
        resume = None if last and last.kind == "diverged" else Resume.longest(earlier)
        job = game_job(game, self.spec, self.prices, self.servers, resume)
        done = await self.executor.play(job, folder)
        if self.batch_meter is not None and not self.executor.watched:
            charge(self.batch_meter, spend_of(spent(calls_of(folder))))
        return done

    async def _complete_metrics(self, rows: list[GameRow]) -> None:
        """Finished games that lack a metric the spec now asks for get it computed; one
        killed after its last metric but before the summary gets the summary."""
        for game, row in zip(self.batch.games, rows, strict=True):
            missing = [m for m in self.spec.metrics if m not in row.metrics]
            summary = self.batch.root / game.name / EVAL_DIR / f"{SUMMARY}.json"
            lost = bool(self.spec.metrics) and not summary.is_file()
            if row.status == "finished" and (missing or lost):
                await self._metrics(game, missing)
                self.batch.index.put(await row_from_folders(self.batch.root, game))

    async def _metrics(self, game: PlannedGame, names: list[str]) -> None:
        """Score the finished game as ``jubensha eval all`` does: results in
        ``eval/<metric>.json``, the metrics' own model calls logged in ``eval/calls.jsonl``
        and cached in ``eval/cache.sqlite``, and what happened to each metric in
        ``eval/all.json``. A metric that raises is recorded as failed; the game stays
        finished."""
        if not self.spec.metrics:
            return
        folder = self.batch.root / game.name
        run = read_run(folder)
        judge, embedder = self._judge(), self._embedder()
        specs = [get_metric(name) for name in names]
        session = open_session(folder, self.on_call)
        statuses = statuses_of(session.folder, self.spec.metrics)
        try:
            _, scored = await score_metrics(
                specs, game.script, run, session, judge=judge, embedder=embedder,
                samples=self.spec.metric_samples, options=self.spec.metric_options,
                catch=(Exception,),  # a metric's bug must not fail the game
                max_failed=self.spec.metric_max_failed, seat_client=self._seat_client)
        finally:
            session.close()
        statuses.update({status.metric: status for status in scored})
        # In the spec's order, however many attempts it took to fill (a resumed batch's
        # summary reads as an uninterrupted one's).
        write_summary(session, str(folder), sorted(
            statuses.values(), key=lambda s: position_of(self.spec.metrics, s.metric)))

    def _judge(self) -> Model | None:
        """The judge model, built on first use (with the batch's prices; the run's
        evaluation session caches and logs its calls)."""
        if self.spec.judge is not None and self.judge is None:
            self.judge_client = parse_model_spec(
                self.spec.judge, options_for(self.options, self.servers.get(self.spec.judge)))
            self.judge = stack(self.judge_client, prices=self.prices)
        return self.judge

    def _seat_client(self, spec: str) -> Model:
        """A seat's own model for its post-game answers, served where its games played
        (the spec's endpoint for it, else its ``model_options``), with the batch's prices;
        built on first use."""
        if spec not in self.seat_clients:
            raw = parse_model_spec(spec, options_for(self.options, self.servers.get(spec)))
            self.seat_clients[spec] = (raw, stack(raw, prices=self.prices))
        return self.seat_clients[spec][1]

    def _embedder(self) -> Embedder | None:
        if self.metric_embedder is None and self.spec.metric_embedder != "none":
            self.metric_embedder = build_metric_embedder(self.spec.metric_embedder)
        return self.metric_embedder

    async def _close(self) -> None:
        """Close what this run opened (wrapped clients are closed by their owner, the raw
        client, so that closing one game's stack never closes the shared cache)."""
        if self.judge_client is not None:
            await self.judge_client.aclose()
        for raw, _ in self.seat_clients.values():
            await raw.aclose()
        self.executor.close()
