"""Internal.

One game: seat the agents, run the procedure's stages in order, return the result.

Everything random is derived from one seed: the turn order, each stage's generator (tie
breaks, fallback targets) and each seat's sampling seed, which the agent passes to its model.
"""

from __future__ import annotations

import random
import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from jubensha.engine.agent import Agent, CharacterSheet, SeatContext
from jubensha.engine.drafts import DraftHook
from jubensha.engine.events import GameEnded, VictimOutcome
from jubensha.engine.procedure import Procedure
from jubensha.engine.stages import end_game, run_stage
from jubensha.engine.table import AskHook, EventSink, Table, TableState, VoteRecord
from jubensha.engine.voting import Winner, records_solution
from jubensha.llm.base import Embedder, Model
from jubensha.llm.sealed import Exchange, SeatLine
from jubensha.scripts.model import Language, Script


@dataclass
class Seat:
    """Who plays a character: the agent, and the model and embedder bound to this seat."""

    agent: Agent
    model: Model | None = None
    embedder: Embedder | None = None
    options: dict[str, Any] = field(default_factory=dict)


class GameResult(BaseModel):
    script_id: str
    procedure: str
    seed: int
    language: Language
    order: list[str]
    winner: Winner
    outcomes: list[VictimOutcome]
    votes: list[VoteRecord]
    failures: int
    decisions: int = 0
    fallbacks: int = Field(0, description="Decisions answered by the table's default.")
    solution: bool = Field(True, description="False: the script records no solution; "
                           "nothing that needs one (the winner, identification) is scored.")
    degraded: bool = Field(False, description="Nobody really played the game (see "
                           "``no_result``): it is a failed game, never a result.")
    no_result: str = Field("", description="Why the game is no result: a decisive round "
                           "defaulted for most seats, or too many decisions fell back.")
    events: int
    duration_s: float
    extra: dict[str, Any] = Field(
        default_factory=dict, description="What stage kinds recorded for the result "
        "(``TableState.extra``, JSON data), e.g. MIRAGE's trust and doubt scores.")


DEGRADED_SHARE = 0.5
"""A game in which this share of its decisions or more fell back to defaults is no result."""


def no_result(state: TableState, share: float = DEGRADED_SHARE) -> str:
    """Why a game nobody really played is no result ('' when it was played): a decisive
    round (a vote, the accusations that choose the suspects) whose answer fell back for most
    of the seats asked, or ``share`` of all decisions or more that fell back. The same rule
    for every number of players."""
    for label, seats in state.decisive.items():
        defaulted = sum(seats.values())
        if defaulted * 2 > len(seats):
            return (f"{label} fell back to the table's default for {defaulted} of "
                    f"{len(seats)} seats")
    if state.fallbacks and state.fallbacks >= share * state.decisions:
        return _share_reason(state.fallbacks, state.decisions, share)
    return ""


def _share_reason(fallbacks: int, decisions: int, share: float) -> str:
    return (f"{fallbacks} of {decisions} decisions fell back to the table's defaults "
            f"({share:.0%} or more)")


def share_was_the_rule(result: GameResult, share: float = DEGRADED_SHARE) -> bool:
    """Whether ``result`` is no result for the share of its decisions that fell back (not
    for one decisive round), as ``no_result`` decided with ``share``."""
    return bool(result.no_result) and result.no_result == _share_reason(
        result.fallbacks, result.decisions, share)


class GameSetupError(ValueError):
    """Seats that do not match the script's characters."""


def seat_seed(seed: int, name: str) -> int:
    """The sampling seed of seat ``name`` in a game played with ``seed``."""
    return random.Random(f"{seed}:seat:{name}").randrange(2**31)


def turn_order(names: Sequence[str], seed: int, shuffle: bool = True) -> list[str]:
    order = list(names)
    if shuffle:
        random.Random(f"{seed}:order").shuffle(order)
    return order


class Game:
    def __init__(self, script: Script, procedure: Procedure, seats: Mapping[str, Seat], *,
                 seed: int = 0, language: Language | None = None, shuffle: bool = True,
                 sinks: Sequence[EventSink] = (), on_ask: AskHook | None = None,
                 on_draft: DraftHook | None = None,
                 decision_timeout_s: float | None = None,
                 degraded_share: float = DEGRADED_SHARE):
        missing = [name for name in script.names if name not in seats]
        unknown = [name for name in seats if name not in script.names]
        if missing or unknown:
            raise GameSetupError(f"seats must be the script's characters: missing {missing}, "
                                 f"unknown {unknown}")
        procedure.check_acts(script)
        self.script = script
        self.procedure = procedure
        self.seats = dict(seats)
        self.seed = seed
        self.language: Language = language or script.language
        self.degraded_share = degraded_share
        self.game_id = secrets.token_hex(8)
        """The sheets' opaque game id: drawn, so that no seat can look the script up by it."""
        self.table = Table(script, procedure.voting.declared(script), {n: s.agent for n, s in seats.items()},
                           turn_order(script.names, seed, shuffle), seed=seed,
                           language=self.language, sinks=sinks, on_ask=on_ask,
                           on_draft=on_draft, decision_timeout_s=decision_timeout_s)

    def sheet(self, name: str) -> CharacterSheet:
        sheet = CharacterSheet.for_seat(self.script, name, game=self.game_id)
        return sheet.model_copy(update={"language": self.language})

    def context(self, name: str, line: SeatLine) -> SeatContext:
        """What seat ``name`` is handed: its sheet, and its sealed line (``llm.sealed``)
        as its model, embedder and note sink."""
        seat = self.seats[name]
        return SeatContext(sheet=self.sheet(name),
                           model=line if seat.model is not None else None,
                           embedder=line if seat.embedder is not None else None,
                           notes=line.note, seed=seat_seed(self.seed, name),
                           options=dict(seat.options))

    async def run(self) -> GameResult:
        """Play the game; each seat's line is closed when it ends, however it ends."""
        exchanges = [Exchange(name, self.seats[name].model, self.seats[name].embedder)
                     for name in self.table.seats]
        try:
            return await self._play(exchanges)
        finally:
            for exchange in exchanges:
                exchange.close()

    async def _play(self, exchanges: Sequence[Exchange]) -> GameResult:
        started = time.perf_counter()
        table = self.table
        for exchange in exchanges:
            name = exchange.seat
            try:
                await self.seats[name].agent.start(self.context(name, exchange.line))
            except Exception as exc:  # noqa: BLE001  (the seat plays on with what it has)
                await table.fail(name, "start", f"{type(exc).__name__}: {exc}", None)
        specs = self.procedure.with_ids().stages
        for index, spec in enumerate(specs):
            await run_stage(spec, table, index)
        if not table.state.ended and table.state.outcomes:
            table.begin_stage(len(specs), "end")
            await end_game(table, audience=[], truth=False)
        return self.result(time.perf_counter() - started)

    def result(self, duration_s: float) -> GameResult:
        table = self.table
        ended = [event for event in table.events if isinstance(event, GameEnded)]
        won = ended[-1].winner if ended else "none"
        state = table.state
        reason = no_result(state, self.degraded_share)
        return GameResult(script_id=self.script.id, procedure=self.procedure.name,
                          seed=self.seed, language=self.language, order=table.seats,
                          winner="none" if reason else won,  # no result, so no winner
                          outcomes=state.outcomes, votes=state.votes,
                          failures=table.failures, decisions=state.decisions,
                          fallbacks=state.fallbacks, degraded=bool(reason), no_result=reason,
                          solution=records_solution(self.script),
                          events=len(table.events),
                          duration_s=round(duration_s, 3), extra=table.state.extra)
