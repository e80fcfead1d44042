"""Live tables: games played in the server's event loop, with people at some seats.

A table is an ordinary game (``runs.play.play_game``) writing an ordinary run folder; the
human seats are ``HumanAgent``s whose ``HumanIO`` is a ``WebIO`` answered by their pages.
Every link carries an unguessable token: one per human seat, one for the host, and one for
spectators when the host allowed them. A token opens only what its holder may see.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from jubensha.agents.human import HumanAgent, SeatView
from jubensha.engine.events import Event
from jubensha.engine.procedure import Procedure
from jubensha.llm.registry import ModelOptions
from jubensha.runs.play import NO_MODEL, SeatPlan, default_out, play_game
from jubensha.scripts.model import Language, Script
from jubensha.web.guard import same_secret
from jubensha.web.seatio import WebIO

log = logging.getLogger(__name__)
Status = Literal["playing", "ended", "failed"]
MAX_TABLES = 8
"""Tables playing at once, unless the server was started with another ``--max-tables``."""
KEEP_ENDED = 100
"""Ended tables whose links still work; older ones are forgotten (their run folders stay,
and the host reviews them under Runs)."""


class TablesFull(Exception):
    """The server plays as many tables as it was started for; the message says how many."""


def new_token() -> str:
    """128 random bits, URL-safe: a link nobody can guess."""
    return secrets.token_urlsafe(16)


@dataclass
class LiveTable:
    """One game in progress or ended, and who holds which link to it."""

    id: str
    script: Script
    procedure: Procedure
    plans: dict[str, SeatPlan]
    language: Language
    out: Path
    host_token: str
    spectator_token: str | None
    seat_tokens: dict[str, str]
    ios: dict[str, WebIO] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    status: Status = "playing"
    error: str = ""
    version: int = 0
    task: asyncio.Task[object] | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def humans(self) -> list[str]:
        return list(self.ios)

    @property
    def ended(self) -> bool:
        return self.status != "playing"

    def seat_of(self, token: str) -> str | None:
        for seat, known in self.seat_tokens.items():
            if same_secret(token, known):
                return seat
        return None

    def view(self, seat: str) -> SeatView | None:
        return self.ios[seat].view

    def touch(self) -> None:
        """Something changed: wake every page waiting on this table."""
        self.version += 1
        self.changed.set()
        self.changed = asyncio.Event()

    def record(self, event: Event) -> None:
        """Event sink: every event, whatever its audience (pages filter by token)."""
        self.events.append(event)
        self.touch()

    async def wait(self, version: int, timeout: float) -> int:
        """The table's version once it is newer than ``version`` (or after ``timeout``)."""
        if self.version == version:
            waiter = self.changed
            try:
                await asyncio.wait_for(waiter.wait(), timeout)
            except TimeoutError:
                pass
        return self.version

    def remove(self, seat: str) -> None:
        """The host removes the person at ``seat``: the table's defaults play it."""
        self.ios[seat].leave()


class TableHost:
    """Every table of this server, and the settings the games share."""

    def __init__(self, runs: Path, model_options: ModelOptions | None = None,
                 embedder: str = "none", max_tables: int = MAX_TABLES):
        self.runs = runs
        self.model_options = model_options or ModelOptions()
        self.embedder = embedder
        self.max_tables = max_tables
        self.tables: dict[str, LiveTable] = {}
        self.closing = False

    @property
    def playing(self) -> int:
        return sum(not table.ended for table in self.tables.values())

    def open(self, script: Script, procedure: Procedure, plans: dict[str, SeatPlan], *,
             language: Language | None = None, seed: int = 0, spectators: bool = False,
             script_source: str = "") -> LiveTable:
        """Seat the table and start the game in the background; ``TablesFull`` when
        ``max_tables`` are playing already."""
        if self.playing >= self.max_tables:
            raise TablesFull(f"{self.playing} tables are playing, the most this server was "
                             f"started for (--max-tables {self.max_tables}); try again when "
                             f"one has ended")
        self._forget_ended()
        humans = [name for name, plan in plans.items() if plan.model == NO_MODEL]
        table = LiveTable(
            id=new_token()[:8], script=script, procedure=procedure, plans=plans,
            language=language or script.language,
            out=default_out(script, self.runs), host_token=new_token(),
            spectator_token=new_token() if spectators or not humans else None,
            seat_tokens={name: new_token() for name in humans})
        table.ios = {name: WebIO(table.touch) for name in humans}
        agents = {name: HumanAgent(io=io) for name, io in table.ios.items()}
        table.task = asyncio.create_task(self._play(table, agents, seed, script_source))
        self.tables[table.id] = table
        return table

    def _forget_ended(self) -> None:
        ended = [key for key, table in self.tables.items() if table.ended]
        for key in ended[:max(len(ended) - KEEP_ENDED + 1, 0)]:
            del self.tables[key]

    async def _play(self, table: LiveTable, agents: dict[str, HumanAgent], seed: int,
                    script_source: str) -> None:
        try:
            await play_game(table.script, table.procedure, table.plans, out=table.out,
                            seed=seed, language=table.language, embedder=self.embedder,
                            model_options=self.model_options, script_source=script_source,
                            sinks=[table.record], agents=agents)
            table.status = "ended"
        except asyncio.CancelledError:
            table.status, table.error = "failed", "stopped"
            raise
        except Exception as exc:
            log.exception("table %s failed", table.id)
            table.status, table.error = "failed", f"{type(exc).__name__}: {exc}"
        finally:
            table.touch()

    def by_host(self, token: str) -> LiveTable | None:
        return next((t for t in self.tables.values()
                     if same_secret(token, t.host_token)), None)

    def by_seat(self, token: str) -> tuple[LiveTable, str] | None:
        for table in self.tables.values():
            seat = table.seat_of(token)
            if seat is not None:
                return table, seat
        return None

    def by_spectator(self, token: str) -> LiveTable | None:
        return next((t for t in self.tables.values() if t.spectator_token is not None
                     and same_secret(token, t.spectator_token)), None)

    def hang_up(self) -> None:
        """The server is stopping: wake every page's event stream so that it ends now
        instead of holding the server open until the browser goes away."""
        self.closing = True
        for table in self.tables.values():
            table.touch()

    async def close(self) -> None:
        """Stop every game still playing (server shutdown); their run folders stay."""
        tasks = [t.task for t in self.tables.values() if t.task and not t.task.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
