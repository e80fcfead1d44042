"""Tables found again when the server starts: every run folder under ``--runs`` that a
table wrote (``tablelog``) becomes a table with the same links again.

- A finished game opens as an ended table: each person's page shows what their seat saw
  and the ending.
- An unfinished game is played on by the server's ``Resumer`` (its calls answered from
  the log, the people's moves from their answers, then live); the pages, which lost their
  connection while the server was away, find their seats where they were.
- An unfinished game the server cannot play on (no resumer, no room under
  ``--max-tables``, a seat model this server does not offer, its script gone) opens as
  interrupted: its history, and a notice.

Only tables this server started are found again: a record not signed with its key (a
folder another server wrote, or one planted by hand), or one whose ``meta.json`` no longer
describes the game that was signed, is left as a run folder to review under past runs,
and nothing of it is played (``tablelog``).

Seat views of ended and interrupted tables are rebuilt from ``events.jsonl`` exactly as
the engine delivered them: each person sees the events whose audience included their seat.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from jubensha.agents.human import SeatView
from jubensha.engine.agent import Agent, CharacterSheet
from jubensha.engine.drafts import DraftHook
from jubensha.engine.events import Event
from jubensha.engine.procedure import Procedure, ProcedureError, parse_procedure
from jubensha.engine.table import AskHook, EventSink
from jubensha.llm.registry import ModelOptions
from jubensha.runlog.attempts import set_aside
from jubensha.runlog.folder import META, RunError, RunLog, RunResult, read_run
from jubensha.runlog.moves import Answer
from jubensha.runlog.resume import ResumeDiverged, ResumeError
from jubensha.runs.play import NO_MODEL, PlayError, SeatPlan, continuation, play_game
from jubensha.safeload import one_line
from jubensha.scripts.model import Script
from jubensha.web.library import ScriptLibrary
from jubensha.web.tablelog import (
    AnswerLog,
    TableRecord,
    game_digest,
    read_record,
    table_folders,
)
from jubensha.web.tables import KEEP_ENDED, LiveTable, TableHost

log = logging.getLogger(__name__)


@dataclass
class Found:
    """A table's run folder as read back."""

    record: TableRecord
    run: RunLog
    script: Script
    procedure: Procedure
    answers: dict[str, list[Answer]]

    @property
    def plans(self) -> dict[str, SeatPlan]:
        assert self.run.meta is not None
        return {name: SeatPlan(name=name, architecture=seat.architecture, model=seat.model)
                for name, seat in self.run.meta.seats.items()}


async def restore_tables(host: TableHost, library: ScriptLibrary,
                         models: Sequence[str]) -> list[LiveTable]:
    """Open again the tables this server started in ``host.runs``: every unfinished one
    whose seats play ``models`` the server offers it plays on (while there is room), and
    the newest ``KEEP_ENDED`` of the others (ended or interrupted)."""
    restored: list[LiveTable] = []
    still = 0
    for folder in await asyncio.to_thread(own_folders, host.runs, host.key):
        found = await asyncio.to_thread(read_table, folder, library)
        if found is None or found.record.id in host.tables:
            continue
        resume = resumes(host, found, models)
        if not resume:
            still += 1
            if still > KEEP_ENDED:
                continue
        restored.append(reopen(host, folder, found, resume))
    return restored


def own_folders(runs: Path, key: bytes) -> list[Path]:
    """The folders under ``runs`` of tables signed with ``key``, newest first, one per
    table: an attempt set aside when a game was resumed (``<folder>.partial-<n>``) holds
    the same table record as the game's own folder, whose name is the shortest. A record
    not signed with ``key`` is passed over (and said so), so a folder planted with another
    table's id cannot stand in for it."""
    folders = table_folders(runs)
    chosen: dict[str, Path] = {}
    for folder in folders:
        record = read_record(folder)
        if record is None:
            continue
        if not record.signed_by(key):
            log.warning("not restored: %s: not a table this server started (its record "
                        "does not carry this server's signature); it stays a run to review",
                        folder)
            continue
        known = chosen.get(record.id)
        if known is None or len(folder.name) < len(known.name):
            chosen[record.id] = folder
    keep = set(chosen.values())
    return [folder for folder in folders if folder in keep]


def read_table(folder: Path, library: ScriptLibrary) -> Found | None:
    """The table of ``folder``; None (with the reason logged) when it cannot be opened."""
    record = read_record(folder)
    if record is None:
        return None
    try:
        run = read_run(folder)
    except RunError as exc:
        log.warning("table not restored: %s", exc)
        return None
    script = library.played(run)
    if run.meta is None or script is None:
        log.warning("table not restored: %s: its script is not among this server's", folder)
        return None
    if record.game != game_digest(run.meta):
        log.warning("not restored: %s: its %s no longer describes the game this server "
                    "started (seats, models or script changed); it stays a run to review",
                    folder, META)
        return None
    try:
        procedure = parse_procedure(run.meta.procedure, f"{folder / META}: procedure")
    except ProcedureError as exc:
        log.warning("table not restored: %s", exc)
        return None
    try:
        answers = AnswerLog(folder).read()
    except RunError as exc:
        log.warning("table not restored: %s", exc)
        return None
    return Found(record, run, script, procedure, answers)


class ResumeFailed(Exception):
    """A table's game that cannot go on from its log (the table shows it as interrupted)."""


async def resume_table(folder: Path, *, agents: Mapping[str, Agent],
                       sinks: Sequence[EventSink], on_ask: AskHook, on_draft: DraftHook,
                       model_options: ModelOptions, embedder: str) -> RunResult:
    """The server's ``Resumer``: the interrupted game of ``folder`` played on, its model
    calls answered from the log of its longest attempt (``runlog.resume``) and the
    people's seats by ``agents``, which answer their logged moves first; the interrupted
    attempt is set aside as ``<folder>.partial-<n>``. Any reason it cannot go on is one
    ``ResumeFailed`` (a diverged log is a ``BaseException`` the table would not catch)."""
    try:
        again = continuation(folder, people=set(agents))
        assert again.resume is not None
        kept = set_aside(folder)
        if again.resume.source == folder:
            again.resume.source = kept
        config = again.model_copy(update={"model_options": model_options})
        return await play_game(config, folder, sinks=sinks, on_ask=on_ask,
                               on_draft=on_draft, agents=agents)
    except (PlayError, ResumeError, ResumeDiverged) as exc:
        raise ResumeFailed(str(exc)) from None


def resumes(host: TableHost, found: Found, models: Sequence[str]) -> bool:
    """Whether the server plays the table's game on: unfinished, a resumer, room, and every
    seat's model one the server offers (started with other ``--model``s, it plays none
    it no longer offers)."""
    if found.run.finished or host.resumer is None or host.playing >= host.max_tables:
        return False
    missing = sorted({plan.model for plan in found.plans.values()
                      if plan.model != NO_MODEL and plan.model not in models})
    if missing:
        log.warning("not played on: %s: seats play %s, which this server does not offer "
                    "(--model); it opens as interrupted", found.run.path,
                    ", ".join(one_line(model, 80) for model in missing))
    return not missing


def reopen(host: TableHost, folder: Path, found: Found, resume: bool) -> LiveTable:
    """The table of ``found`` with its links, its game played on when ``resume``."""
    meta = found.run.meta
    assert meta is not None
    table = host.seat(found.record, found.script, found.procedure, found.plans,
                      meta.language, folder)  # type: ignore[arg-type]
    resumer = host.resumer
    if resumer is None or not resume:
        host.agents(table, found.answers)
        table.events = list(found.run.events)
        table.result = found.run.result
        table.status = "ended" if found.run.finished else "interrupted"
        rebuild_views(table, table.events)
        return table
    agents = host.agents(table, found.answers, resumed=True)

    async def game(agents: Mapping[str, Agent], sinks: Sequence[EventSink],
                   on_ask: AskHook, on_draft: DraftHook) -> RunResult:
        return await resumer(folder, agents=agents, sinks=sinks, on_ask=on_ask,
                             on_draft=on_draft, model_options=host.model_options,
                             embedder=host.embedder)

    host.start(table, agents, game)
    return table


def rebuild_views(table: LiveTable, events: Sequence[Event]) -> None:
    """Each person's view as the engine delivered it: the seat's sheet and the events
    whose audience included the seat."""
    for name, io in table.ios.items():
        sheet = CharacterSheet.for_seat(table.script, name)
        view = SeatView.begin(sheet.model_copy(update={"language": table.language}))
        for event in events:
            if event.visible_to(name):
                view.record(event)
        io.view = view
