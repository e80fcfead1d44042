"""Live tables: games played in the server's event loop, with people at some seats.

A table is an ordinary game (``runs.play.play_game``) writing an ordinary run folder; the
human seats are ``HumanAgent``s whose ``HumanIO`` is a ``WebIO`` answered by their pages.
Every link carries an unguessable token: one per human seat, one for the host, and one for
spectators when the host allowed them. A token opens only what its holder may see. Tokens
are derived from the table's id with the server's key (``tokens``) and the table notes
what it needs to be found again in its run folder (``tablelog``), so a server started
again on the same ``--runs`` and ``--state`` opens the same links (``restore``).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from jubensha.agents.human import HumanAgent, SeatView
from jubensha.engine.agent import Agent
from jubensha.engine.decisions import BaseDecision
from jubensha.engine.drafts import Draft, DraftHook, drafters_done
from jubensha.engine.events import Event, StageStarted
from jubensha.engine.narration import activity
from jubensha.engine.procedure import Procedure
from jubensha.engine.table import AskHook, EventSink, purpose_of
from jubensha.llm.registry import ModelOptions
from jubensha.runlog.folder import META, RunResult, read_meta
from jubensha.runlog.moves import Answer
from jubensha.runs.play import NO_MODEL, PlayConfig, SeatPlan, default_out, play_game
from jubensha.scripts.model import Language, Script
from jubensha.web.gate import same_secret
from jubensha.web.roster import Progress, SeatChip, progress, roster
from jubensha.web.seatio import WebIO
from jubensha.web.streams import StreamSlots
from jubensha.web.tablelog import AnswerLog, TableRecord, write_record
from jubensha.web.tokens import link_token, server_key

log = logging.getLogger(__name__)
Status = Literal["playing", "ended", "failed", "interrupted"]
MAX_TABLES = 8
"""Tables playing at once, unless the server was started with another ``--max-tables``."""
KEEP_ENDED = 100
"""Ended tables whose links still work; older ones are forgotten (their run folders stay,
and the host reviews them under Runs)."""
Game = Callable[[Mapping[str, Agent], Sequence[EventSink], AskHook, DraftHook],
               Awaitable[RunResult]]
"""A game to play with the people's agents, the table's event sinks, ask and draft hooks."""
DRAFT_EVERY_S = 0.25
"""A speech being written wakes the pages at most this often (each word would be ~9 a
second on the local model, and every page fetches on each)."""


class Resumer(Protocol):
    """Plays the interrupted game of a run folder on: the calls its log holds answered from
    the log, then live, with the people's seats played by ``agents`` (which answer their
    logged moves first), into the folder's own name (the interrupted attempt set aside).
    A server given none shows a table it finds unfinished as interrupted."""

    async def __call__(self, folder: Path, *, agents: Mapping[str, Agent],
                       sinks: Sequence[EventSink], on_ask: AskHook, on_draft: DraftHook,
                       model_options: ModelOptions, embedder: str) -> RunResult: ...


class TablesFull(Exception):
    """The server plays as many tables as it was started for; the message says how many."""


@dataclass
class LiveTable:
    """One game in progress or ended, and who holds which link to it."""

    id: str
    script: Script
    script_key: str
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
    asked: Counter[str] = field(default_factory=Counter)
    """Seats being asked a decision right now (an agent thinking, a person's turn)."""
    doing: dict[str, str] = field(default_factory=dict)
    """What each seat being asked is asked (``purpose_of`` the decision)."""
    drafts: dict[str, Draft] = field(default_factory=dict)
    """The speech each seat is writing, until it is said."""
    drafted_at: float = 0.0
    result: RunResult | None = None
    key: bytes = field(default=b"", repr=False)
    """The server's key, which signs the table's record (``tablelog``)."""

    @property
    def humans(self) -> list[str]:
        return list(self.ios)

    @property
    def ended(self) -> bool:
        return self.status != "playing"

    def as_record(self) -> TableRecord:
        return TableRecord(id=self.id, script=self.script_key, people=self.humans,
                           spectators=self.spectator_token is not None)

    def seat_of(self, token: str) -> str | None:
        for seat, known in self.seat_tokens.items():
            if same_secret(token, known):
                return seat
        return None

    def view(self, seat: str) -> SeatView | None:
        return self.ios[seat].view

    def roster(self, me: str | None = None) -> list[SeatChip]:
        asked = [seat for seat, count in self.asked.items() if count and not self.ended]
        gone = [seat for seat, io in self.ios.items() if io.gone]
        return roster([character.name for character in self.script.characters],
                      people=self.humans, asked=asked, removed=gone, me=me,
                      starting=not self.events and not self.ended, doing=self.doing)

    def progress(self, events: Sequence[Event] | None = None) -> Progress:
        return progress(self.procedure, self.script, self.events if events is None else events)

    def touch(self) -> None:
        """Something changed: wake every page waiting on this table."""
        self.version += 1
        self.changed.set()
        self.changed = asyncio.Event()

    def record(self, event: Event) -> None:
        """Event sink: every event, whatever its audience (pages filter by token). The
        first also notes the table in its run folder (signed for the game its meta.json,
        written by then, describes)."""
        if not self.events:
            write_record(self.out, self.as_record(), self.key, read_meta(self.out / META))
        self.events.append(event)
        for seat in (list(self.drafts) if isinstance(event, StageStarted)
                     else drafters_done(event)):
            self.drafts.pop(seat, None)
        self.touch()

    def on_ask(self, seat: str, decision: BaseDecision) -> Callable[[], None]:
        """Ask hook: the seat is being asked until the returned function is called."""
        self.asked[seat] += 1
        self.doing[seat] = activity(purpose_of(decision))
        self.touch()

        def answered() -> None:
            self.asked[seat] -= 1
            if not self.asked[seat]:
                self.doing.pop(seat, None)
            self.touch()

        return answered

    def on_draft(self, draft: Draft) -> None:
        """Draft hook: the speech a seat is writing; pages wake at most every
        ``DRAFT_EVERY_S`` (the final speech replaces it when it is said)."""
        self.drafts[draft.seat] = draft
        now = time.monotonic()
        if now - self.drafted_at >= DRAFT_EVERY_S:
            self.drafted_at = now
            self.touch()

    def drafts_for(self, seat: str | None) -> list[Draft]:
        """The drafts ``seat`` may see (None: a spectator, public ones only)."""
        return [d for d in self.drafts.values() if d.audience == "public"
                or (seat is not None and d.visible_to(seat))]

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
                 embedder: str = "none", max_tables: int = MAX_TABLES,
                 state: Path | None = None, resumer: Resumer | None = None):
        self.runs = runs
        self.model_options = model_options or ModelOptions()
        self.embedder = embedder
        self.max_tables = max_tables
        self.key = server_key(state)
        self.resumer = resumer
        self.tables: dict[str, LiveTable] = {}
        self.streams = StreamSlots()
        """The pages' live streams open now (``web.streams``)."""
        self.closing = False
        self.started = secrets.token_hex(4)
        """Changes with every start: a page that sees another value reloads."""

    @property
    def playing(self) -> int:
        return sum(not table.ended for table in self.tables.values())

    def check_room(self) -> None:
        """``TablesFull`` when ``max_tables`` are playing already."""
        if self.playing >= self.max_tables:
            raise TablesFull(f"{self.playing} tables are playing, the most this server was "
                             f"started for (--max-tables {self.max_tables}); try again when "
                             f"one has ended")

    def open(self, config: PlayConfig, *, spectators: bool = False,
             script_key: str = "") -> LiveTable:
        """Seat the table and start the game of ``config`` (as the lobby chose it, played
        with this server's model options and embedder) in the background; ``TablesFull``
        when ``max_tables`` are playing already."""
        self.check_room()
        self._forget_ended()
        config = config.model_copy(update={"model_options": self.model_options,
                                           "embedder": self.embedder})
        script = config.script
        humans = [name for name, plan in config.plans.items() if plan.model == NO_MODEL]
        record = TableRecord(id=secrets.token_hex(8), script=script_key or script.id,
                             spectators=spectators or not humans, people=humans)
        table = self.seat(record, script, config.procedure, config.plans,
                          config.game_language, default_out(script, self.runs))
        agents = self.agents(table)

        async def game(agents: Mapping[str, Agent], sinks: Sequence[EventSink],
                       on_ask: AskHook, on_draft: DraftHook) -> RunResult:
            return await play_game(config, table.out, sinks=sinks, agents=agents,
                                   on_ask=on_ask, on_draft=on_draft)

        self.start(table, agents, game)
        return table

    def seat(self, record: TableRecord, script: Script, procedure: Procedure,
             plans: dict[str, SeatPlan], language: Language, out: Path) -> LiveTable:
        """A table of ``record`` with its links (known to this server from now on)."""
        table = LiveTable(
            id=record.id, script=script, script_key=record.script, procedure=procedure,
            plans=plans, language=language, out=out,
            host_token=link_token(self.key, record.id, "host"),
            spectator_token=link_token(self.key, record.id, "spectator")
            if record.spectators else None,
            seat_tokens={name: link_token(self.key, record.id, f"seat:{name}")
                         for name in record.people}, key=self.key)
        self.tables[table.id] = table
        return table

    def agents(self, table: LiveTable, replay: Mapping[str, list[Answer]] | None = None,
               resumed: bool = False) -> dict[str, Agent]:
        """The people's seats: a page each, answering first from ``replay`` (the answers
        logged before a restart) when the game is ``resumed``."""
        answers = AnswerLog(table.out)
        table.ios = {name: WebIO(table.touch, name, answers, (replay or {}).get(name, []),
                                 resumed=resumed) for name in table.seat_tokens}
        return {name: HumanAgent(io=io) for name, io in table.ios.items()}

    def start(self, table: LiveTable, agents: Mapping[str, Agent], game: Game) -> None:
        table.task = asyncio.create_task(self._play(table, agents, game))

    def _forget_ended(self) -> None:
        ended = [key for key, table in self.tables.items() if table.ended]
        for key in ended[:max(len(ended) - KEEP_ENDED + 1, 0)]:
            del self.tables[key]

    async def _play(self, table: LiveTable, agents: Mapping[str, Agent], game: Game) -> None:
        try:
            table.result = await game(agents, [table.record], table.on_ask, table.on_draft)
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
