"""Running a batch: many games from a spec, concurrently, each into its own run folder.

The batch folder holds ``spec.yaml`` (the resolved spec), ``batch.sqlite`` (the index) and
one run folder per game, named by ``spec.folder_name`` and written by ``play.play_game``
exactly as ``jubensha play`` writes it. A game that fails (an exception, a spent budget, a
timeout, the batch being stopped) never stops the others: its folder gets ``error.json``.
Running the batch again skips games whose folder has ``result.json``, keeps the folder of
an unfinished attempt as ``<game>.partial-<n>`` and plays the game again from scratch.
"""

from __future__ import annotations

import asyncio
import glob
import os
import re
import traceback
import typing
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ValidationError

from jubensha.engine.game import GameResult
from jubensha.engine.procedure import Procedure
from jubensha.eval.commands import (
    EvalSummary,
    MetricStatus,
    build_embedder,
    skip_reason,
    write_result,
)
from jubensha.eval.judge import EVAL_CALLS, EVAL_DIR, open_session, tallied
from jubensha.eval.registry import MetricContext, get_metric, load_metrics
from jubensha.eval.report import MetricResult
from jubensha.eval.vote_metrics import has_votes, identification_metric
from jubensha.llm.base import Embedder, Model, Request, Response
from jubensha.llm.calls import CallRecord, read_calls
from jubensha.llm.health import ModelUnreachable
from jubensha.llm.registry import ModelOptions, parse_model_spec
from jubensha.llm.wrappers import Budget, ModelWrapper, PriceTable, SqliteCache, stack
from jubensha.outdir import write_whole
from jubensha.runlog.folder import CALLS, RESULT, RunError, read_run
from jubensha.runs.index import INDEX_FILE, BatchIndex, GameRow, Spend, now
from jubensha.runs.limits import Gate, LimitedModel, Limiter
from jubensha.runs.play import SeatPlan, build_models, play_game
from jubensha.runs.spec import (
    SPEC_FILE,
    BatchSpec,
    Endpoint,
    PlannedGame,
    dump_spec,
    expand,
    load_spec,
)
from jubensha.scripts.model import Language, Script

ERROR_FILE = "error.json"
SUMMARY = "all"
"""``eval/all.json``: what happened to each metric (``jubensha eval all`` writes the same)."""
ErrorKind = Literal["error", "timeout", "budget", "cancelled", "unreachable", "degraded"]


class BatchError(Exception):
    """A batch that cannot run as asked (its folder holds another game list, say)."""


class GameError(BaseModel):
    """Why an attempt at a game ended without a result (``error.json``)."""

    kind: ErrorKind
    message: str
    traceback: str = ""
    time: str = ""


# --- what the folders say --------------------------------------------------------------------

def partial_folders(root: Path, game: PlannedGame) -> list[Path]:
    """Earlier, unfinished attempts at ``game``, oldest first."""
    found = root.glob(f"{glob.escape(game.name)}.partial-*")
    numbered = [(int(m.group(1)), p) for p in found
                if (m := re.fullmatch(r".*\.partial-(\d+)", p.name))]
    return [p for _, p in sorted(numbered)]


def set_aside(root: Path, game: PlannedGame) -> Path:
    """Rename an unfinished attempt's folder to the next ``<game>.partial-<n>``."""
    olds = partial_folders(root, game)
    number = int(olds[-1].name.rsplit("-", 1)[1]) + 1 if olds else 1
    target = root / f"{game.name}.partial-{number}"
    (root / game.name).rename(target)
    return target


def read_error(folder: Path) -> GameError | None:
    try:
        return GameError.model_validate_json((folder / ERROR_FILE).read_bytes())
    except (OSError, ValueError):
        return None


def degraded_message(result: GameResult) -> str:
    """Why nobody really played the game (a run written before the reason was recorded
    gives its count of fallbacks)."""
    reason = result.no_result or (f"{result.fallbacks} of {result.decisions} decisions fell "
                                  "back to the table's defaults")
    return f"{reason}: the game was not really played"


def write_error(folder: Path, kind: ErrorKind, message: str, trace: str = "") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    error = GameError(kind=kind, message=message, traceback=trace, time=now())
    (folder / ERROR_FILE).write_text(error.model_dump_json(indent=2) + "\n", encoding="utf-8")


def spend_of(records: list[CallRecord]) -> Spend:
    spend = Spend(calls=len(records))
    for record in records:
        spend = spend + Spend(prompt_tokens=record.usage.prompt_tokens,
                              completion_tokens=record.usage.completion_tokens,
                              cost_usd=record.usage.cost_usd)
    return spend


def _calls_of(folder: Path) -> list[CallRecord]:
    if not (folder / CALLS).is_file():
        return []
    try:
        return read_run(folder).calls
    except RunError:
        return []


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def headline(result: BaseModel, prefix: str = "", depth: int = 3) -> dict[str, float]:
    """A metric result's numbers: its numeric fields and numeric properties, and those of
    the models nested in its fields (``score.overall.mean``). Numbers inside dictionaries
    and lists (per seat, per question) are left to the result file."""
    numbers: dict[str, float] = {}
    for name in type(result).model_fields:
        value = getattr(result, name)
        if _number(value):
            numbers[prefix + name] = value
        elif isinstance(value, BaseModel) and depth > 1:
            numbers |= headline(value, f"{prefix}{name}.", depth - 1)
    for cls in type(result).__mro__:
        if cls in (MetricResult, BaseModel):
            break
        for name, attribute in vars(cls).items():
            if isinstance(attribute, property) and _number(value := getattr(result, name)):
                numbers[prefix + name] = value
    return numbers


def result_type(name: str) -> type[MetricResult]:
    """The result class a registered metric returns (its ``compute`` annotation)."""
    hints = typing.get_type_hints(get_metric(name).compute)
    kind = hints.get("return", MetricResult)
    return kind if isinstance(kind, type) and issubclass(kind, MetricResult) else MetricResult


def read_metric(name: str, path: Path) -> dict[str, Any]:
    """The numbers of ``eval/<name>.json``, read as its metric's result class."""
    try:
        result = result_type(name).model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
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
    olds = partial_folders(root, game)
    attempts = [*olds, folder] if folder.is_dir() else olds
    row = GameRow(id=game.id, position=game.position, name=game.name,
                  script=game.settings.script_id, procedure=game.settings.procedure,
                  architecture=game.settings.architecture, model=game.settings.model,
                  seed=game.settings.seed, settings=game.settings.model_dump(mode="json"),
                  attempts=len(attempts))
    for path in attempts:
        row.spent = row.spent + spend_of(_calls_of(path))
    if not folder.is_dir():
        return row
    try:
        run = read_run(folder)
    except RunError:
        run = None
    row.usage = spend_of(run.calls) if run else Spend()
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
        summary = EvalSummary.model_validate_json(path.read_text(encoding="utf-8"))
        found = {status.metric: status for status in summary.statuses}
    except (OSError, ValidationError):
        found = {}
    for name in names:
        if name not in found and (folder / f"{name}.json").is_file():
            found[name] = MetricStatus(metric=name, status="scored")
    return found


# --- budgets ---------------------------------------------------------------------------------

class GameAborted(BaseException):
    """Ends a game at once. The engine turns every ``Exception`` of a seat into a recorded
    fallback so that a game always finishes; a spent budget must end the game instead, so
    this derives from ``BaseException``, which the engine does not catch."""

    def __init__(self, kind: ErrorKind, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclass
class Meter:
    """Model use counted against one ``Budget`` shared by several clients (a game's, or the
    whole batch's). As ``llm.wrappers.BudgetModel``: calls count when they start, tokens and
    dollars when a live reply arrives, so the call that crosses a limit completes."""

    budget: Budget
    scope: str
    spend: Spend = field(default_factory=Spend)

    def exceeded(self) -> str | None:
        limits, spend = self.budget, self.spend
        if limits.max_calls is not None and spend.calls >= limits.max_calls:
            return f"{spend.calls} calls of {limits.max_calls}"
        if limits.max_tokens is not None and spend.tokens >= limits.max_tokens:
            return f"{spend.tokens} tokens of {limits.max_tokens}"
        if limits.max_cost_usd is not None and (spend.cost_usd or 0.0) >= limits.max_cost_usd:
            return f"${spend.cost_usd or 0.0:.4f} of ${limits.max_cost_usd:.4f}"
        return None


class MeteredModel(ModelWrapper):
    """Counts each call on every meter; the first call refused ends the game."""

    def __init__(self, inner: Model, meters: list[Meter]) -> None:
        super().__init__(inner)
        self.meters = meters

    async def generate(self, request: Request) -> Response:
        for meter in self.meters:
            spent = meter.exceeded()
            if spent:
                raise GameAborted("budget", f"{meter.scope} budget spent ({spent}); refused "
                                  f"{request.purpose or 'a call'} for {request.seat or 'the run'}")
        for meter in self.meters:
            meter.spend = meter.spend + Spend(calls=1)
        response = await self.inner.generate(request)
        if response.origin == "live":
            used = Spend(prompt_tokens=response.usage.prompt_tokens,
                         completion_tokens=response.usage.completion_tokens,
                         cost_usd=response.usage.cost_usd)
            for meter in self.meters:
                meter.spend = meter.spend + used
        return response


# --- one attempt at one game ------------------------------------------------------------------

@dataclass
class GameJob:
    """Everything one attempt at a game needs, apart from the batch folder: what a Ray
    worker receives. It carries no key: clients read theirs from the environment where
    the game plays (``ModelOptions``; ``Endpoint.api_key_env``)."""

    name: str
    script: Script
    procedure: Procedure
    plans: dict[str, SeatPlan]
    seed: int
    language: Language
    embedder: str
    script_source: str
    model_options: dict[str, Any]
    endpoints: dict[str, Endpoint]
    timeout_s: float | None
    retries: int
    prices: PriceTable | None
    budget_per_game: Budget | None


def game_job(game: PlannedGame, spec: BatchSpec, prices: PriceTable | None) -> GameJob:
    settings = game.settings
    return GameJob(
        name=game.name, script=game.script, procedure=game.procedure, plans=game.plans,
        seed=settings.seed, language=settings.language, embedder=settings.embedder,
        script_source=settings.script, model_options=dict(spec.model_options),
        endpoints=dict(spec.endpoints), timeout_s=spec.timeout_s,
        retries=spec.wrappers.retries, prices=prices,
        budget_per_game=spec.wrappers.budget_per_game)


def game_meter(job: GameJob) -> Meter | None:
    return Meter(job.budget_per_game, "game") if job.budget_per_game else None


def clients_for(job: GameJob, options: ModelOptions) -> dict[str, Model]:
    """One raw client per model spec, built with its endpoint's address and key."""
    clients: dict[str, Model] = {}
    for spec in dict.fromkeys(plan.model for plan in job.plans.values()):
        endpoint = job.endpoints.get(spec)
        own = options
        if endpoint is not None:
            key = os.environ.get(endpoint.api_key_env) if endpoint.api_key_env else None
            own = options.model_copy(update={"base_url": endpoint.base_url or options.base_url,
                                             "api_key": key or options.api_key})
        seats = {name: plan for name, plan in job.plans.items() if plan.model == spec}
        clients |= build_models(seats, own)
    return clients


async def play_attempt(job: GameJob, folder: Path, *, cache: SqliteCache | None,
                       meters: list[Meter], limiters: Mapping[str, Limiter]) -> bool:
    """Play one attempt into ``folder``; False (and ``error.json``) when it ends without a
    result. The same function plays a game in the batch's process and on a Ray worker."""
    options = ModelOptions.model_validate(job.model_options)
    clients: dict[str, Model] = {}
    try:
        clients = clients_for(job, options)
        models = {spec: _wrapped(job, client, limiters.get(spec), cache, meters)
                  for spec, client in clients.items()}
        result = await asyncio.wait_for(play_game(
            job.script, job.procedure, job.plans, out=folder, seed=job.seed,
            language=job.language, model_options=options, embedder=job.embedder,
            script_source=job.script_source, models=models), job.timeout_s)
        if not result.degraded:
            return True
        write_error(folder, "degraded", degraded_message(result))
    except GameAborted as exc:
        write_error(folder, exc.kind, exc.message)
    except ModelUnreachable as exc:
        write_error(folder, "unreachable", str(exc))
    except TimeoutError:
        write_error(folder, "timeout", f"the game took longer than {job.timeout_s} s")
    except asyncio.CancelledError:
        write_error(folder, "cancelled", "the batch was stopped while this game played")
        raise
    except Exception as exc:  # noqa: BLE001  (one game's crash must not stop the batch)
        write_error(folder, "error", f"{type(exc).__name__}: {exc}", traceback.format_exc())
    finally:
        for client in clients.values():
            await client.aclose()
    return False


def _wrapped(job: GameJob, client: Model, limiter: Limiter | None, cache: SqliteCache | None,
             meters: list[Meter]) -> Model:
    """The limiter innermost (a cached reply takes no slot), then retries, cache, prices,
    and the meters outermost."""
    inner = LimitedModel(client, limiter) if limiter is not None else client
    wrapped = stack(inner, retries=job.retries, cache=cache, prices=job.prices).model
    return MeteredModel(wrapped, meters) if meters else wrapped


class RemoteExecutor(Protocol):
    """Plays attempts elsewhere and writes their run folders here (``runs.ray_executor``)."""

    async def play(self, job: GameJob, folder: Path) -> bool: ...

    def close(self) -> None: ...


# --- the batch -------------------------------------------------------------------------------

@dataclass
class Update:
    """What the progress display is told: a game started, finished or failed."""

    game: PlannedGame
    row: GameRow


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

    def __init__(self, root: Path, spec: BatchSpec, games: list[PlannedGame]) -> None:
        self.root = root
        self.spec = spec
        self.games = games
        self.index = BatchIndex.of(root)

    @classmethod
    def open(cls, spec: BatchSpec, root: Path, *, extend: bool = False) -> Batch:
        """Expand ``spec`` into ``root``: a new batch, or the same game list as the one the
        folder holds (``extend`` also accepts a list that only adds games)."""
        games = expand(spec)
        root.mkdir(parents=True, exist_ok=True)
        batch = cls(root, spec, games)
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
        self.options = self.spec.options()
        wrappers = self.spec.wrappers
        self.cache = SqliteCache(Path(wrappers.cache)) if wrappers.cache else None
        self.prices = PriceTable.load(Path(wrappers.prices)) if wrappers.prices else None
        self.limiters: dict[str, Limiter] = {
            spec: Gate(endpoint.max_concurrency) for spec, endpoint in
            self.spec.endpoints.items() if endpoint.max_concurrency}
        self.executor: RemoteExecutor | None = None
        if self.spec.executor.kind == "ray":
            from jubensha.runs.ray_executor import RayExecutor

            self.executor = RayExecutor(self.spec)
        self.batch_meter = (Meter(wrappers.budget_per_batch, "batch")
                            if wrappers.budget_per_batch else None)
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
        if (root / game.name).is_dir():
            set_aside(root, game)
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
            self.on_update(Update(game, row))

    async def _attempt(self, game: PlannedGame) -> bool:
        """Play one attempt into the game's folder, here or on the executor."""
        folder = self.batch.root / game.name
        job = game_job(game, self.spec, self.prices)
        if self.executor is not None:
            done = await self.executor.play(job, folder)
            if self.batch_meter is not None:  # workers meter their game, the driver the batch
                self.batch_meter.spend = self.batch_meter.spend + spend_of(_calls_of(folder))
            return done
        meters = [m for m in (game_meter(job), self.batch_meter) if m is not None]
        return await play_attempt(job, folder, cache=self.cache, meters=meters,
                                  limiters=self.limiters)

    async def _complete_metrics(self, rows: list[GameRow]) -> None:
        """Finished games that lack a metric the spec now asks for get it computed."""
        for game, row in zip(self.batch.games, rows, strict=True):
            missing = [m for m in self.spec.metrics if m not in row.metrics]
            if row.status == "finished" and missing:
                await self._metrics(game, missing)
                self.batch.index.put(await row_from_folders(self.batch.root, game))

    async def _metrics(self, game: PlannedGame, names: list[str]) -> None:
        """Score the finished game as ``jubensha eval all`` does: results in
        ``eval/<metric>.json``, the metrics' own model calls logged in ``eval/calls.jsonl``
        and cached in ``eval/cache.sqlite``, and what happened to each metric in
        ``eval/all.json``. A metric that raises is recorded as failed; the game stays
        finished."""
        if not names:
            return
        folder = self.batch.root / game.name
        run = read_run(folder)
        judge, embedder = self._judge(), self._embedder()
        session = open_session(folder)
        statuses = _statuses(session.folder, self.spec.metrics)
        try:
            for name in names:
                spec = get_metric(name)
                reason = skip_reason(spec, game.script, run, judge, embedder)
                if reason:
                    statuses[name] = MetricStatus(metric=name, status="skipped", note=reason)
                    continue
                context = MetricContext(
                    script=game.script, run=run, judge=judge, embedder=embedder,
                    samples=self.spec.metric_samples, options=dict(self.spec.metric_options),
                    calls=session.calls, cache=session.cache)
                try:
                    with tallied() as tally:
                        result = await spec.compute(context)
                except Exception as exc:  # noqa: BLE001  (a metric's bug must not fail the game)
                    statuses[name] = MetricStatus(metric=name, status="failed",
                                                  note=f"{type(exc).__name__}: {exc}")
                    continue
                if problem := tally.problem():
                    statuses[name] = MetricStatus(metric=name, status="failed",
                                                  note=f"{problem}: no score")
                    continue
                write_result(session.folder, name, result)
                statuses[name] = MetricStatus(metric=name, status="scored")
        finally:
            session.close()
        made = read_calls(session.folder / EVAL_CALLS) if (
            session.folder / EVAL_CALLS).is_file() else []
        write_result(session.folder, SUMMARY, EvalSummary(
            run=str(folder), statuses=list(statuses.values()),
            calls=dict(Counter(r.purpose for r in made)),
            cached=sum(r.origin == "cache" for r in made)))

    def _judge(self) -> Model | None:
        """The judge model, built on first use (with the batch's retries and prices; the
        run's evaluation session caches and logs its calls)."""
        if self.spec.judge is not None and self.judge is None:
            self.judge_client = parse_model_spec(self.spec.judge, self.options)
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
        if self.cache is not None:
            self.cache.close()
        if self.executor is not None:
            self.executor.close()
