"""The run folder: the record of one game that evaluation, reports and replays read.

    meta.json           what was played: script, procedure, seats (architecture, model),
                        seed, and the hash of the script's copy
    script.played.yaml  the script the game was played with (``runlog.script``)
    events.jsonl        every event, whatever its audience, appended and flushed as it happens
    calls.jsonl         every model call (``llm.calls.CallRecord``), appended as it ends
    result.json         outcome, votes, usage per seat and purpose, failures, duration
    transcript.md       the game as a readable document

meta.json's ``format_version`` says which format the folder is in (``RUN_FORMAT``). A folder
without one was written before versions were recorded and is read as it is; a folder of a
newer format than this version reads is refused in one line, before any of its files is
parsed, rather than misread.

A game that crashed or was stopped leaves meta.json and the two logs, possibly with a
half-written last line; ``read_run`` loads such a partial run and says it is unfinished.

A run folder may come from anyone: it is read from its own regular files only (a symbolic
link, a FIFO or a file over ``MAX_LOG_BYTES`` is a ``RunError``), and nothing it names
outside itself is ever opened.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import IO, Any, TypeVar

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from jubensha.engine.events import Event
from jubensha.engine.game import GameResult
from jubensha.llm.base import Usage
from jubensha.llm.calls import CallRecord, is_note
from jubensha.outdir import write_whole
from jubensha.runlog.counts import CallCounts
from jubensha.runlog.provenance import Provenance
from jubensha.safeload import (
    MAX_LOG_BYTES,
    DocumentError,
    LineError,
    first_line,
    parse_jsonl,
    read_bounded,
)
from jubensha.scripts.io import dump_script
from jubensha.scripts.model import Script
from jubensha.terminal import plain_text

META, EVENTS, CALLS, RESULT, TRANSCRIPT = (
    "meta.json", "events.jsonl", "calls.jsonl", "result.json", "transcript.md")
SCRIPT = "script.played.yaml"
EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
M = TypeVar("M", bound=BaseModel)
RUN_FORMAT = 1
"""The format of the run folders this version writes (1: the first with a version field)."""


class RunError(Exception):
    """A folder that is not a readable run; the message names the file and the problem."""


class SeatInfo(BaseModel):
    architecture: str
    model: str
    guard: bool = Field(False, description="Whether the speech guard checked what the seat "
                        "said (agents.guard); never on in a paper's setting.")


class RunMeta(BaseModel):
    """What was played. ``procedure`` is kept as plain data so that runs using stage kinds
    from packages not installed here can still be read."""

    format_version: int = Field(0, ge=0, description=(
        "The folder's format (``RUN_FORMAT`` when written); 0: written before formats had "
        "versions, read as it is."))
    script_id: str
    script_title: str = ""
    script_source: str = Field("", description=(
        "Bundled id or path the script came from: provenance only, never opened again."))
    script_sha256: str = Field("", description=(
        "SHA-256 of the folder's script.played.yaml; empty in folders made before the "
        "copy was kept."))
    language: str
    procedure: dict[str, Any]
    seats: dict[str, SeatInfo]
    seed: int
    order: list[str] = Field(default_factory=list)
    options: dict[str, Any] = Field(default_factory=dict)
    versions: dict[str, str] = Field(default_factory=dict)
    provenance: Provenance | None = Field(None, description=(
        "The code, prompts and models the game played with (runlog.provenance); None in "
        "folders written before it was recorded."))
    started: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))


class UsageReport(BaseModel):
    calls: int = 0
    noted: int = Field(0, description="Records of no model call (agents' notes).")
    total: Usage = Field(default_factory=Usage)
    seats: dict[str, Usage] = Field(default_factory=dict)
    purposes: dict[str, Usage] = Field(default_factory=dict)
    counts: CallCounts = Field(default_factory=CallCounts,
                               description="MPIRD-LLMA table 2's counts (runlog.counts).")

    def add(self, record: CallRecord) -> None:
        if is_note(record.model):
            self.noted += 1
            return
        self.calls += 1
        self.counts.add(record)
        self.total = self.total + record.usage
        seat = record.seat or "-"
        self.seats[seat] = self.seats.get(seat, Usage()) + record.usage
        purpose = record.purpose or "-"
        self.purposes[purpose] = self.purposes.get(purpose, Usage()) + record.usage


class RunResult(GameResult):
    usage: UsageReport = Field(default_factory=UsageReport)


def versions() -> dict[str, str]:
    """Versions that can change a game's course: this package, Python, the model runtime."""
    return dict(_versions())


@cache
def _versions() -> dict[str, str]:
    """Read once per process: finding package metadata takes ~10 ms and every game asks."""
    found = {"python": platform.python_version()}
    for package in ("jubensha", "xllamacpp", "openai", "pydantic"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return found


class RunFolder:
    """Writes one run: an event sink (``write_event``) and a call sink (``write``). With
    ``script``, the folder keeps its own copy of it (``SCRIPT``, hashed in meta.json), which
    is all that readers of the folder ever read of a script."""

    def __init__(self, path: Path, meta: RunMeta, script: Script | None = None):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.usage = UsageReport()
        if script is not None:
            data = dump_script(script).encode("utf-8")
            write_whole(self.path / SCRIPT, data)
            meta = meta.model_copy(update={"script_sha256": hashlib.sha256(data).hexdigest()})
        self.meta = meta
        self.write_meta(meta)
        self.served: dict[str, set[str]] = {}
        """Per client name, the models its server said answered (``CallRecord.served_model``)."""
        self._events: IO[str] = (self.path / EVENTS).open("a", encoding="utf-8")
        self._calls: IO[str] = (self.path / CALLS).open("a", encoding="utf-8")

    def write_meta(self, meta: RunMeta) -> None:
        """Write meta.json, stamped with the format this version writes."""
        meta = meta.model_copy(update={"format_version": RUN_FORMAT})
        self.meta = meta
        _write_json(self.path / META, meta)

    def write_event(self, event: Event) -> None:
        self._events.write(event.model_dump_json() + "\n")
        self._events.flush()

    def write(self, record: CallRecord) -> None:
        """``CallSink``: append one call record."""
        self.usage.add(record)
        if record.served_model:
            self.served.setdefault(record.model, set()).add(record.served_model)
        self._calls.write(record.model_dump_json() + "\n")
        self._calls.flush()

    def finish(self, result: GameResult, transcript: str) -> RunResult:
        """Write transcript.md, then result.json (last: its presence says the game is
        finished, so a kill between the two leaves an unfinished game, not one without its
        transcript); returns the result with usage."""
        final = RunResult(**result.model_dump(), usage=self.usage)
        self.write_transcript(transcript)
        _write_json(self.path / RESULT, final)
        return final

    def write_transcript(self, text: str) -> None:
        """transcript.md, for people: no escape sequence a script or model put in it."""
        (self.path / TRANSCRIPT).write_text(plain_text(text), encoding="utf-8")

    def close(self) -> None:
        self._events.close()
        self._calls.close()


def _write_json(path: Path, model: BaseModel) -> None:
    write_whole(path, model.model_dump_json(indent=2) + "\n")


@dataclass
class RunLog:
    """A run as read back; ``finished`` is False for a crashed or running game."""

    path: Path
    meta: RunMeta | None
    events: list[Event]
    calls: list[CallRecord]
    result: RunResult | None
    truncated: list[str] = field(default_factory=list)
    """Files whose last line was cut off (and skipped)."""

    @property
    def finished(self) -> bool:
        return self.result is not None


def read_run(path: str | Path) -> RunLog:
    """Load a finished or partial run folder."""
    folder = Path(path)
    if not folder.is_dir():
        raise RunError(f"{folder}: no such run folder")
    if not present(folder / EVENTS) and not present(folder / META):
        raise RunError(f"{folder}: not a run folder (no {META} or {EVENTS})")
    meta = read_meta(folder / META)
    truncated: list[str] = []
    events = read_jsonl(folder / EVENTS, EVENT_ADAPTER.validate_json, truncated)
    calls = read_jsonl(folder / CALLS, CallRecord.model_validate_json, truncated)
    result = read_json(folder / RESULT, RunResult)
    return RunLog(folder, meta, events, calls, result, truncated)


def read_meta(path: Path) -> RunMeta | None:
    """meta.json, its format checked before anything of the folder is parsed."""
    if not present(path):
        return None
    data = read_own(path)
    try:
        found = json.loads(data).get("format_version", 0)
    except (ValueError, RecursionError, AttributeError):
        found = 0  # not a JSON object: validation below says what is wrong
    if isinstance(found, int) and found > RUN_FORMAT:
        raise RunError(f"{path}: run folder format {found} is newer than this jubensha reads "
                       f"(format {RUN_FORMAT}): read it with the newer jubensha that wrote it")
    try:
        return RunMeta.model_validate_json(data)
    except ValidationError as exc:
        raise RunError(f"{path}: {first_line(exc)}") from None


def present(path: Path) -> bool:
    """Whether ``path`` is there at all, a link or a FIFO included (``read_own`` then
    refuses it rather than a reader taking it for missing)."""
    return os.path.lexists(path)


def read_own(path: Path, max_bytes: int = MAX_LOG_BYTES) -> bytes:
    """The bytes of a file of a run folder: a regular file of its own, not a link."""
    try:
        return read_bounded(path, max_bytes, links=False)
    except DocumentError as exc:
        raise RunError(f"{path}: {exc}") from None


def read_jsonl(path: Path, parse: Any, truncated: list[str]) -> list[Any]:
    """A JSON Lines log's records (a torn last line noted in ``truncated``)."""
    if not present(path):
        return []
    try:
        items, torn = parse_jsonl(read_own(path), parse)
    except LineError as exc:
        what = exc.problem if exc.problem == "not UTF-8 text" else \
            f"not a valid record: {exc.problem}"
        raise RunError(f"{path}:{exc.number}: {what}") from None
    if torn:
        truncated.append(path.name)
    return items


def read_json(path: Path, model: type[M]) -> M | None:
    """A JSON document of the folder as ``model``; None when absent."""
    if not present(path):
        return None
    try:
        return model.model_validate_json(read_own(path))
    except ValidationError as exc:
        raise RunError(f"{path}: {first_line(exc)}") from None


