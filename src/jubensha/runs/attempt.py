"""One attempt at one game of a batch, wherever it plays: its job, its model stack and
meters, and the ``error.json`` it leaves when it ends without a result.

``play_attempt`` is what every executor runs (this process, a process of a pool, a Ray
worker), so that a game is the same game wherever it is played.
"""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from jubensha.engine.game import GameResult
from jubensha.llm.base import Model
from jubensha.llm.calls import CallRecord, OnCall
from jubensha.llm.health import ModelUnreachable
from jubensha.llm.keys import Server
from jubensha.llm.registry import ModelOptions
from jubensha.llm.wrappers import Budget, BudgetExceeded, Meter, PriceTable, SqliteCache, stack
from jubensha.runlog.folder import RunError, RunResult, read_own
from jubensha.runlog.resume import Resume, ResumeDiverged, ResumeError
from jubensha.runs.index import Spend, now
from jubensha.runs.limits import LimitedModel, Limiter
from jubensha.runs.play import PlayConfig, build_models, play_game
from jubensha.runs.spec_schema import BatchSpec, PlannedGame
from jubensha.safeload import MAX_BYTES

ERROR_FILE = "error.json"
GameErrorKind = Literal["error", "timeout", "budget", "cancelled", "unreachable", "degraded",
                    "diverged"]


class GameError(BaseModel):
    """Why an attempt at a game ended without a result (``error.json``)."""

    kind: GameErrorKind
    message: str
    traceback: str = ""
    time: str = ""


def read_error(folder: Path) -> GameError | None:
    try:
        return GameError.model_validate_json(read_own(folder / ERROR_FILE, MAX_BYTES))
    except (RunError, ValueError):
        return None


def degraded_message(result: GameResult) -> str:
    """Why nobody really played the game (a run written before the reason was recorded
    gives its count of fallbacks)."""
    reason = result.no_result or (f"{result.fallbacks} of {result.decisions} decisions fell "
                                  "back to the table's defaults")
    return f"{reason}: the game was not really played"


def write_error(folder: Path, kind: GameErrorKind, message: str, trace: str = "") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    error = GameError(kind=kind, message=message, traceback=trace, time=now())
    (folder / ERROR_FILE).write_text(error.model_dump_json(indent=2) + "\n", encoding="utf-8")


REFUSED = f"{BudgetExceeded.__name__}: "
"""The start of the error of a call a budget refused, as the call log records it (the
error's class, then its message): the call was never sent, and costs nothing."""


def spend_of(records: list[CallRecord]) -> Spend:
    """The model use of ``records`` (those answered from an earlier attempt included: a
    game's use; ``spend_of(spent(records))`` is what the attempt paid); a call a budget
    refused is none."""
    sent = [record for record in records if not (record.error or "").startswith(REFUSED)]
    spend = Spend(calls=len(sent))
    for record in sent:
        spend = spend + Spend(prompt_tokens=record.usage.prompt_tokens,
                              completion_tokens=record.usage.completion_tokens,
                              cost_usd=record.usage.cost_usd)
    return spend


# --- one attempt at one game ------------------------------------------------------------------

@dataclass
class GameJob:
    """Everything one attempt at a game needs, apart from the batch folder: what a Ray
    worker receives. It carries no key: ``servers`` (model spec → ``llm.keys.Server``;
    ``""``: the batch's default) say where each model is served and which variable of the
    environment where the game plays holds its key, both as the user's settings pair them."""

    name: str
    game: PlayConfig
    """The game; its ``resume``, when set, is the earlier attempt whose calls are answered
    again before the game goes live."""
    model_options: dict[str, Any]
    """The spec's, validated where the game plays (whose environment holds the keys)."""
    servers: dict[str, Server]
    timeout_s: float | None
    prices: PriceTable | None
    budget_per_game: Budget | None


def game_meter(job: GameJob) -> Meter | None:
    """The game's budget, charged with the calls it resumes (the game's, paid earlier)."""
    if not job.budget_per_game:
        return None
    meter = Meter(job.budget_per_game, "game")
    if job.game.resume is not None:
        charge(meter, spend_of(job.game.resume.records))
    return meter


def charge(meter: Meter, spend: Spend) -> None:
    """Count ``spend`` (a run's, read from its log) against ``meter``."""
    meter.charge(spend.calls, spend.tokens, spend.cost_usd)


def options_for(options: ModelOptions, server: Server | None) -> ModelOptions:
    """``options`` pointed at ``server`` with the key the user gave it (none: unchanged)."""
    if server is None:
        return options
    return options.model_copy(update={"base_url": server.base_url, "api_key": server.key()})


def clients_for(job: GameJob, options: ModelOptions) -> dict[str, Model]:
    """One raw client per model spec, built with its server's address and key."""
    clients: dict[str, Model] = {}
    plans = job.game.plans
    for spec in dict.fromkeys(plan.model for plan in plans.values()):
        seats = {name: plan for name, plan in plans.items() if plan.model == spec}
        clients |= build_models(seats, options_for(options, job.servers.get(spec)))
    return clients


async def play_attempt(job: GameJob, folder: Path, *, cache: SqliteCache | None,
                       meters: list[Meter], limiters: Mapping[str, Limiter],
                       on_call: OnCall | None = None) -> bool:
    """Play one attempt into ``folder``; False (and ``error.json``) when it ends without a
    result. The same function plays a game in the batch's process and on a Ray worker."""
    options = options_for(ModelOptions.model_validate(job.model_options), job.servers.get(""))
    clients: dict[str, Model] = {}
    try:
        clients = clients_for(job, options)
        models = {spec: _wrapped(job, client, limiters.get(spec), cache, meters)
                  for spec, client in clients.items()}
        result = await asyncio.wait_for(_play(job, folder, models, options, on_call),
                                        job.timeout_s)
        if not result.degraded:
            return True
        write_error(folder, "degraded", degraded_message(result))
    except ResumeDiverged as exc:
        write_error(folder, "diverged", str(exc))
    except ModelUnreachable as exc:  # a spent budget stops a game as a spent quota does
        spent = isinstance(exc.error, BudgetExceeded)
        write_error(folder, "budget" if spent else "unreachable",
                    str(exc.error) if spent else str(exc))
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


async def _play(job: GameJob, folder: Path, models: dict[str, Model],
                options: ModelOptions, on_call: OnCall | None) -> RunResult:
    """The game, resumed from ``job.game.resume`` when its log fits the game (a log that
    does not is left aside and the game starts from the beginning)."""
    game = job.game.model_copy(update={"model_options": options})
    while True:
        try:
            return await play_game(game, folder, models=models, on_call=on_call)
        except ResumeError:
            if game.resume is None:
                raise
            game = game.model_copy(update={"resume": None})


def _wrapped(job: GameJob, client: Model, limiter: Limiter | None, cache: SqliteCache | None,
             meters: list[Meter]) -> Model:
    """The limiter innermost (a cached reply takes no slot), then the cache, prices, and
    the meters outermost."""
    inner = LimitedModel(client, limiter) if limiter is not None else client
    return stack(inner, cache=cache, prices=job.prices, meters=meters)


def game_job(game: PlannedGame, spec: BatchSpec, prices: PriceTable | None,
             servers: dict[str, Server], resume: Resume | None = None) -> GameJob:
    """The job of one attempt at a batch's game: its settings, where its models are served
    and the earlier attempt it resumes."""
    config = game.config.model_copy(update={"resume": resume})
    return GameJob(name=game.name, game=config, model_options=dict(spec.model_options),
                   servers=servers, timeout_s=spec.timeout_s, prices=prices,
                   budget_per_game=spec.wrappers.budget_per_game)
