"""Running a batch: many games from a spec, concurrently, each into its own run folder.

The batch folder holds ``spec.yaml`` (the resolved spec), ``batch.sqlite`` (the index) and
one run folder per game, named by ``spec.folder_name`` and written by ``play.play_game``
exactly as ``jubensha play`` writes it. A game that fails (an exception, a spent budget, a
timeout, the batch being stopped) never stops the others: its folder gets ``error.json``.
Running the batch again skips games whose folder has ``result.json``, keeps the folder of
an unfinished attempt as ``<game>.partial-<n>`` and plays the game again, answering the
calls the longest earlier attempt logged from its log before going live
(``runlog.resume``). Where the games play is the executor's business
(``runs.executors``).
"""

from __future__ import annotations

import asyncio
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from jubensha.eval.commands import build_embedder
from jubensha.eval.judge import EVAL_DIR, open_session
from jubensha.eval.registry import MetricContext, get_metric, load_metrics
from jubensha.eval.report import MetricResult, headline
from jubensha.eval.scoring import (
    SUMMARY,
    EvalSummary,
    MetricStatus,
    score_metrics,
    write_summary,
)
from jubensha.eval.vote_metrics import has_votes, identification_metric
from jubensha.llm.base import Embedder, Model
from jubensha.llm.calls import CallRecord
from jubensha.llm.health import ModelUnreachable
from jubensha.llm.keys import (
    Server,
    SettingsError,
    UnconfiguredServer,
    default_server,
    server_for,
)
from jubensha.llm.registry import parse_model_spec
from jubensha.llm.wrappers import PriceTable, stack
from jubensha.outdir import write_whole
from jubensha.runlog.attempts import earlier_attempts, set_aside
from jubensha.runlog.folder import CALLS, RESULT, RunError, read_own, read_run
from jubensha.runlog.resume import Resume, spent
from jubensha.runs.attempt import (
    GameJob,
    Meter,
    options_for,
    read_error,
    spend_of,
)
from jubensha.runs.executors import ExecutorError, open_executor
from jubensha.runs.index import INDEX_FILE, BatchIndex, GameRow, Spend, now
from jubensha.runs.spec import (
    SPEC_FILE,
    BatchSpec,
    PlannedGame,
    dump_spec,
    expand,
    load_spec,
)
from jubensha.safeload import MAX_BYTES


class BatchError(Exception):
    """A batch that cannot run as asked (its folder holds another game list, say)."""


# --- what the folders say --------------------------------------------------------------------

def side_usage(records: list[CallRecord], murderers: Iterable[str]) -> dict[str, Spend]:
    """Model use of the civilians' seats and of the murderers' seats (a call made for no
    seat counts on neither side)."""
    guilty = set(murderers)
    return {side: spend_of([r for r in records if r.seat is not None
                            and (r.seat in guilty) == (side == "murderers")])
            for side in ("civilians", "murderers")}


def _calls_of(folder: Path) -> list[CallRecord]:
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
    """The numbers of ``eval/<name>.json``, read as its metric's result class."""
    try:
        result = result_type(name).model_validate_json(read_own(path, MAX_BYTES))
    except (RunError, ValueError) as exc:
        return {"error": f"{path.name}: {str(exc).splitlines()[0]}"}
    return headline(result)


def read_metrics(folder: Path) -> dict[str, Any]:
    """A run's evaluation: metric → its numbers, ``{"error": ...}`` or ``{"skipped": ...}``
    (from the registered metrics' ``eval/<metric>.json`` and the summary ``eval/all.json``)."""
    known = load_metrics()
    found: dict[str, Any] = {}
    for path in sorted((folder / EVAL_DIR).glob("*.json")):
        if path.stem in known:
            found[path.stem] = read_metric(path.stem, path)
    for status in _statuses(folder / EVAL_DIR).values():
        if status.status != "scored":
            key = "error" if status.status == "failed" else "skipped"
            found[status.metric] = {key: status.note}
    return found


def _finished_at(path: Path) -> str:
    return datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat(timespec="seconds")


async def row_from_folders(root: Path, game: PlannedGame) -> GameRow:
    """The game's index row as its folders tell it: finished (``result.json``), failed (an
    unfinished folder), or pending (no folder); every attempt's model use is summed."""
    folder = root / game.name
    olds = earlier_attempts(folder)
    attempts = [*olds, folder] if folder.is_dir() else olds
    row = GameRow(id=game.id, position=game.position, name=game.name,
                  script=game.settings.script_id, procedure=game.settings.procedure,
                  architecture=game.settings.architecture, model=game.settings.model,
                  seed=game.settings.seed, settings=game.settings.model_dump(mode="json"),
                  attempts=len(attempts))
    for path in attempts:
        row.spent = row.spent + spend_of(spent(_calls_of(path)))
    if not folder.is_dir():
        return row
    try:
        run = read_run(folder)
    except RunError:
        run = None
    row.usage = spend_of(run.calls) if run else Spend()
    row.sides = side_usage(run.calls, game.script.murderers) if run else {}
    row.started = run.meta.started if run and run.meta else None
    if run is None or run.result is None or run.result.degraded:
        error = read_error(folder)
        row.status = "failed"
        row.error = (f"{error.kind}: {error.message}" if error else
                     "interrupted: the attempt left no result.json and no error.json")
        row.finished = error.time if error else None
        return row
    row.status = "finished"
    row.finished = _finished_at(folder / RESULT)
    row.duration_s = run.result.duration_s
    row.winner = run.result.winner
    row.fallbacks = run.result.failures
    if has_votes(game.script, run) is None:  # a script with no solution scores no ballot
        votes = await identification_metric(MetricContext(script=game.script, run=run))
        row.votes_on_murderer = sum(k for k, _ in votes.victims.values())
        row.votes_counted = sum(c for _, c in votes.victims.values())
    row.metrics = read_metrics(folder)
    return row


def _statuses(folder: Path, names: Iterable[str] = ()) -> dict[str, MetricStatus]:
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
            found[name] = MetricStatus(metric=name, status="scored")
    return found


def _position(names: list[str], name: str) -> int:
    return names.index(name) if name in names else len(names)


# --- one attempt at one game ------------------------------------------------------------------

def batch_servers(spec: BatchSpec, games: Iterable[PlannedGame]) -> dict[str, Server]:
    """Where each OpenAI-compatible model of the batch (and, as ``""``, the batch's
    ``model_options``) is served, with the variable holding its key, by the user's
    settings: a ``BatchError`` saying what to configure for a server the spec names and
    the settings do not list, before anything is sent."""
    fallback = spec.model_options.get("base_url")
    models = {plan.model for game in games for plan in game.plans.values()} | {
        spec.judge or ""}
    named: dict[str, str | None] = {"": fallback} | {
        model: (spec.endpoints[model].base_url if model in spec.endpoints else None)
        or fallback for model in sorted(models) if model.startswith("openai:")}
    try:
        return {model: server_for(url, model or "model_options") if url else default_server()
                for model, url in named.items()}
    except (UnconfiguredServer, SettingsError) as exc:
        raise BatchError(str(exc)) from None


def game_job(game: PlannedGame, spec: BatchSpec, prices: PriceTable | None,
             servers: dict[str, Server], resume: Resume | None = None) -> GameJob:
    settings = game.settings
    return GameJob(
        name=game.name, script=game.script, procedure=game.procedure, plans=game.plans,
        seed=settings.seed, language=settings.language, embedder=settings.embedder,
        script_source=settings.script, model_options=dict(spec.model_options),
        servers=servers, timeout_s=spec.timeout_s,
        retries=spec.wrappers.retries, prices=prices,
        budget_per_game=spec.wrappers.budget_per_game, resume=resume,
        preset=settings.preset.model_dump() if settings.preset else None)


# --- the batch -------------------------------------------------------------------------------

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


def explain_change(old: list[GameRow], games: list[PlannedGame]) -> tuple[
        list[PlannedGame], list[GameRow]]:
    """Games the spec adds to the batch, and games of the batch the spec no longer has."""
    old_ids = {row.id for row in old}
    new_ids = {game.id for game in games}
    return ([g for g in games if g.id not in old_ids], [r for r in old if r.id not in new_ids])


def _examples(names: list[str]) -> str:
    return ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")


def _write_spec(path: Path, text: str) -> None:
    """Write the resolved spec whole or not at all, and only when it changed: every resume
    writes it, and a kill mid-write must not leave a batch that cannot be resumed."""
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return
    write_whole(path, text)


class Batch:
    """A batch folder and the games its spec expands to."""

    def __init__(self, root: Path, spec: BatchSpec, games: list[PlannedGame],
                 servers: dict[str, Server] | None = None) -> None:
        self.root = root
        self.spec = spec
        self.games = games
        self.servers = servers or {}
        """Where the models are served (``batch_servers``); empty for a batch only read."""
        self.index = BatchIndex.of(root)

    @classmethod
    def open(cls, spec: BatchSpec, root: Path, *, extend: bool = False) -> Batch:
        """Expand ``spec`` into ``root``: a new batch, or the same game list as the one the
        folder holds (``extend`` also accepts a list that only adds games)."""
        games = expand(spec)
        servers = batch_servers(spec, games)
        root.mkdir(parents=True, exist_ok=True)
        batch = cls(root, spec, games, servers)
        old = batch.index.rows()
        added, removed = explain_change(old, games)
        if old and (removed or (added and not extend)):
            batch.close()
            parts = []
            if added:
                parts.append(f"{len(added)} game(s) added ({_examples([g.name for g in added])})")
            if removed:
                parts.append(f"{len(removed)} game(s) of the batch no longer in the spec "
                             f"({_examples([r.name for r in removed])})")
            hint = ("pass --extend to add them to this batch" if not removed else
                    "a batch never drops games it holds")
            raise BatchError(
                f"{root}: the spec's game list differs from this batch's: {'; '.join(parts)}. "
                "Changes to scripts, procedures, rounds, architectures, models, the murderer, "
                "seats, seeds, language, embedder or model options change the games; "
                "concurrency, wrappers, timeout, metrics, executor and endpoints do not. Write "
                f"to a new folder (--out), or {hint}.")
        _write_spec(root / SPEC_FILE, dump_spec(spec))
        return batch

    @staticmethod
    def stored_spec(root: Path) -> BatchSpec:
        path = Path(root) / SPEC_FILE
        if not path.is_file():
            raise BatchError(f"{root}: not a batch folder (no {SPEC_FILE})")
        return load_spec(path)

    @classmethod
    def resume(cls, root: Path) -> Batch:
        """The batch in ``root`` with the spec it was started with."""
        if not (Path(root) / INDEX_FILE).is_file():
            hint = (f"; if only the index was deleted: jubensha runs reindex {root}"
                    if (Path(root) / SPEC_FILE).is_file() else "")
            raise BatchError(f"{root}: not a batch folder (no {INDEX_FILE}){hint}")
        spec = cls.stored_spec(root)
        return cls.open(spec, Path(root))

    @classmethod
    def rebuild(cls, root: Path) -> Batch:
        """The batch in ``root`` with its index deleted (``reindex`` writes it again)."""
        spec = cls.stored_spec(root)
        games = expand(spec)
        for suffix in ("", "-wal", "-shm"):
            (Path(root) / f"{INDEX_FILE}{suffix}").unlink(missing_ok=True)
        return cls(Path(root), spec, games)

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

    async def run(self, *, concurrency: int | None = None,
                  on_update: Callable[[Update], None] | None = None) -> BatchSummary:
        """Play every game that has not finished; see the module docstring."""
        runner = _Runner(self, concurrency or self.spec.concurrency, on_update)
        return await runner.run()


class _Runner:
    """One run of a batch: its shared wrappers, meters and concurrency limit."""

    def __init__(self, batch: Batch, concurrency: int,
                 on_update: Callable[[Update], None] | None) -> None:
        self.batch = batch
        self.spec = batch.spec
        self.concurrency = concurrency
        self.on_update = on_update or (lambda update: None)
        self.servers = batch.servers
        self.options = options_for(self.spec.options(), self.servers.get(""))
        wrappers = self.spec.wrappers
        self.prices = PriceTable.load(Path(wrappers.prices)) if wrappers.prices else None
        self.batch_meter = (Meter(wrappers.budget_per_batch, "batch")
                            if wrappers.budget_per_batch else None)
        try:
            self.executor = open_executor(self.spec, batch.root, self.batch_meter, self.servers)
        except ExecutorError as exc:
            raise BatchError(str(exc)) from None
        self.played = self.skipped = 0
        self.judge_client: Model | None = None
        self.judge: Model | None = None
        self.metric_embedder: Embedder | None = None

    async def run(self) -> BatchSummary:
        started = asyncio.get_running_loop().time()
        rows = await self.batch.sync()
        if self.batch_meter is not None:
            for row in rows:
                self.batch_meter.spend = self.batch_meter.spend + row.spent
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
                                  else spend_of(spent(_calls_of(folder))).calls))

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
            self.batch_meter.spend = self.batch_meter.spend + spend_of(spent(_calls_of(folder)))
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
        session = open_session(folder)
        statuses = _statuses(session.folder, self.spec.metrics)
        try:
            _, scored = await score_metrics(
                specs, game.script, run, session, judge=judge, embedder=embedder,
                samples=self.spec.metric_samples, options=self.spec.metric_options,
                catch=(Exception,))  # a metric's bug must not fail the game
        finally:
            session.close()
        statuses.update({status.metric: status for status in scored})
        # In the spec's order, however many attempts it took to fill (a resumed batch's
        # summary reads as an uninterrupted one's).
        write_summary(session, str(folder), sorted(
            statuses.values(), key=lambda s: _position(self.spec.metrics, s.metric)))

    def _judge(self) -> Model | None:
        """The judge model, built on first use (with the batch's retries and prices; the
        run's evaluation session caches and logs its calls)."""
        if self.spec.judge is not None and self.judge is None:
            self.judge_client = parse_model_spec(
                self.spec.judge, options_for(self.options, self.servers.get(self.spec.judge)))
            self.judge = stack(self.judge_client, retries=self.spec.wrappers.retries,
                               prices=self.prices).model
        return self.judge

    def _embedder(self) -> Embedder | None:
        if self.metric_embedder is None and self.spec.metric_embedder != "none":
            self.metric_embedder = build_embedder(self.spec.metric_embedder)
        return self.metric_embedder

    async def _close(self) -> None:
        """Close what this run opened (wrapped clients are closed by their owner, the raw
        client, so that closing one game's stack never closes the shared cache)."""
        if self.judge_client is not None:
            await self.judge_client.aclose()
        self.executor.close()
