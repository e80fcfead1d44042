"""The call log: one ``CallRecord`` per model call, the lines of a run's ``calls.jsonl``.

Every call a seat makes goes through a ``SeatModel``, which tags the request with the seat
(and a default purpose), times it, and writes one record to the run's ``CallLog`` as soon
as the call ends, including failed calls. For structured calls
(``generate_object`` through a seat model) each attempt's record carries the raw text and
either the parsed object or why it did not parse, so the log shows what the model said
and what the agent made of it.

Two fields make an isolation audit exact. ``seen`` is the index of the last event the
call's seat had observed when the call started (the table tells the log as it delivers each
event, so it never depends on clocks, which tie under a fast model). ``access`` says what
the call may see: ``seat`` (its seat's own view: sheet, released acts, events it observed),
``scripts`` (every character's script, like the FSA reference answerer) or ``truth`` (the
scripts and the solution, like judges). It is declared once per purpose with ``declare``;
a judged seat is named in ``subject``, never in ``seat``, so grouping calls by seat shows
only what that seat itself was shown.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from jubensha.llm.base import (
    GenerateConfig,
    Message,
    Model,
    ModelError,
    ModelWrapper,
    Request,
    Response,
    Usage,
)
from jubensha.llm.health import Health
from jubensha.llm.reasoning import joined, split_reasoning
from jubensha.llm.structured import ParseFailure, current_attempt
from jubensha.safeload import MAX_LOG_BYTES, DocumentError, LineError, parse_jsonl, read_bounded

NOT_A_CALL = "note"
"""The ``model`` of a record an agent writes that is no model call (the speech guard's
``guard.trim`` and ``guard.safe``, a detective's plan and ledger): counted apart, never as
a call."""
NOTE_BEFORE = "guard"
"""What run folders written before notes had their own name put as a note's ``model``."""


def is_note(model: str) -> bool:
    """Whether a record of ``model`` is an agent's note, not a model call (in folders of
    any version)."""
    return model in (NOT_A_CALL, NOTE_BEFORE)


Access = Literal["seat", "scripts", "truth"]
ACCESS_LEVELS: tuple[Access, ...] = ("seat", "scripts", "truth")
_PURPOSE_ACCESS: dict[str, Access] = {}


def declare(purpose: str, access: Access) -> str:
    """Declare once what calls of ``purpose`` may see; returns ``purpose``. A purpose
    matches calls whose purpose is it or ends with ``.`` + it (``wellplay.answer.fsa``)."""
    known = _PURPOSE_ACCESS.setdefault(purpose, access)
    if known != access:
        raise ValueError(f"purpose {purpose!r} is declared {known!r}, not {access!r}")
    return purpose


def access_of(purpose: str) -> Access | None:
    """The declared access of ``purpose`` (its longest declared dotted suffix); None when
    undeclared."""
    parts = purpose.split(".")
    for start in range(len(parts)):
        found = _PURPOSE_ACCESS.get(".".join(parts[start:]))
        if found is not None:
            return found
    return None


def declared_purposes() -> dict[str, Access]:
    """Every declared purpose and its access (for reports and docs)."""
    return dict(_PURPOSE_ACCESS)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class CallRecord(BaseModel):
    """One model call as the run log keeps it."""

    index: int = Field(-1, description="Position in the run's call log (set by CallLog).")
    time: str = Field(default_factory=_now, description="When the call started (UTC).")
    purpose: str = ""
    seat: str | None = Field(None, description="The seat the call was made for (its view "
                             "is what the call may see when access is 'seat').")
    access: Access | None = Field(None, description="What the call may see: seat, scripts "
                                  "or truth (declared per purpose); None: not recorded.")
    subject: str | None = Field(None, description="The seat a judge or reference call is "
                                "about (never the seat whose view it has).")
    seen: int | None = Field(None, description="Index of the last event the seat had "
                             "observed when the call started; -1: none yet; None: unknown.")
    model: str
    sample: int = 0
    messages: list[Message]
    config: GenerateConfig
    json_schema: str | dict[str, Any] | None = Field(
        None, description="The schema's title when it has one, else the schema itself.")
    raw: str | None = Field(None, description="The reply text; None when the call failed.")
    parsed: Any = Field(None, description="The validated object of a structured call.")
    parse_error: str | None = None
    attempt: int | None = Field(None, description="1-based attempt of a structured call.")
    usage: Usage = Field(default_factory=Usage)
    origin: Literal["live", "cache", "replay", "resumed"] = "live"
    finish_reason: str | None = None
    served_model: str | None = Field(None, description="The model the server said answered.")
    reasoning: str | None = Field(None, description="The model's reasoning, kept out of "
                                  "``raw`` and of everything the table sees; None: none.")
    notes: list[str] = Field(default_factory=list)
    error: str | None = None


@runtime_checkable
class CallSink(Protocol):
    """Where records go; a run folder appends them to ``calls.jsonl``."""

    def write(self, record: CallRecord) -> None: ...


class MemorySink:
    """Keeps records in a list (tests, and runs that write nothing)."""

    def __init__(self) -> None:
        self.records: list[CallRecord] = []

    def write(self, record: CallRecord) -> None:
        self.records.append(record)


class JsonlSink:
    """Appends one JSON line per record and flushes it, so a crash loses nothing written."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def write(self, record: CallRecord) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(record.model_dump_json() + "\n")


def drop_torn_tail(path: Path, chunk: int = 65_536) -> None:
    """Cut off a last line that a killed writer left without its newline, before appending
    to ``path`` again: a record glued onto a torn one would be a broken line in the middle of the
    log, which readers refuse (they skip only a torn *last* line)."""
    try:
        handle = path.open("rb+")
    except FileNotFoundError:
        return
    with handle:
        end = handle.seek(0, 2)
        position = end
        while position > 0:
            start = max(0, position - chunk)
            handle.seek(start)
            block = handle.read(position - start)
            if position == end and block.endswith(b"\n"):
                return
            newline = block.rfind(b"\n")
            if newline >= 0:
                handle.truncate(start + newline + 1)
                return
            position = start
        handle.truncate(0)


def read_calls(path: Path) -> list[CallRecord]:
    """The records of a ``calls.jsonl``; a bad line is an error naming the file and line,
    except a last line cut off while it was written (even inside a character), skipped.
    Only a regular file of at most ``MAX_LOG_BYTES`` is read, never a link (a log may
    come in a folder someone shared)."""
    try:
        data = read_bounded(Path(path), MAX_LOG_BYTES, links=False)
        return parse_jsonl(data, CallRecord.model_validate_json)[0]
    except LineError as exc:
        raise ValueError(f"{path}:{exc.number}: not a call record: {exc.problem}") from None
    except DocumentError as exc:
        raise ValueError(f"{path}: {exc}") from None


MAX_REPLY_CHARS = 20_000
"""Longest reply passed on: a server that ignores max_tokens cannot grow prompts and logs."""
MAX_REASONING_CHARS = 5 * MAX_REPLY_CHARS
"""Longest reasoning a call record keeps (a reasoning model thinks at length)."""


def without_reasoning(response: Response) -> Response:
    """``response`` with any reasoning written into its text moved to ``reasoning``: what
    a seat says, a draft shows and a transcript keeps is the text alone."""
    said, thought = split_reasoning(response.text)
    if not thought:
        return response
    return response.model_copy(update={"text": said,
                                       "reasoning": joined(response.reasoning, thought)})


def cut_reply(response: Response) -> Response:
    """``response`` with its text cut to ``MAX_REPLY_CHARS``, the cut noted."""
    thought = response.reasoning
    if thought is not None and len(thought) > MAX_REASONING_CHARS:
        response = response.model_copy(update={
            "reasoning": thought[:MAX_REASONING_CHARS],
            "notes": [*response.notes, (f"reasoning cut from {len(thought):,} to "
                                        f"{MAX_REASONING_CHARS:,} characters")]})
    if len(response.text) <= MAX_REPLY_CHARS:
        return response
    note = f"reply cut from {len(response.text):,} to {MAX_REPLY_CHARS:,} characters"
    return response.model_copy(update={"text": response.text[:MAX_REPLY_CHARS],
                                       "notes": [*response.notes, note]})


OnCall = Callable[[CallRecord], None]
"""Told of each model call a log appends (a command's progress bar counts them)."""


class CallLog:
    """Numbers the calls of one run (all seats share it) and hands each record to a sink."""

    def __init__(self, sink: CallSink | None = None, health: Health | None = None,
                 on_call: OnCall | None = None) -> None:
        self.sink: CallSink = sink if sink is not None else MemorySink()
        self.health = health
        """Watches every call so that a game whose model cannot answer stops at once."""
        self.on_call = on_call
        self.count = 0
        self.last_seen: dict[str, int] | None = None
        """Seat to the index of the last event it observed; None: not tracked."""

    def track(self) -> None:
        """Start recording what each seat has seen (``seen`` is -1 until its first event)."""
        self.last_seen = {}

    def saw(self, seats: Iterable[str], index: int) -> None:
        """Seats ``seats`` observe the event numbered ``index`` (the table tells the log)."""
        if self.last_seen is None:
            self.track()
        assert self.last_seen is not None
        for seat in seats:
            self.last_seen[seat] = index

    def seen_by(self, seat: str | None) -> int | None:
        if seat is None or self.last_seen is None:
            return None
        return self.last_seen.get(seat, -1)

    def append(self, record: CallRecord) -> CallRecord:
        record.index = self.count
        self.count += 1
        self.sink.write(record)
        if not is_note(record.model) and self.on_call is not None:
            self.on_call(record)
        return record

    def seat(self, model: Model, seat: str | None, purpose: str = "",
             access: Access | None = None) -> SeatModel:
        return SeatModel(model, self, seat=seat, purpose=purpose, access=access)


class SeatModel(ModelWrapper):
    """A seat's view of a shared model: tags requests and logs every call.

    ``purpose`` is used for requests that set none. ``access`` fixes what every call may
    see (a seat at the table: ``seat``); None takes it from the purpose's declaration.
    Closing a seat model leaves the shared client open; whoever built the client closes it.
    """

    def __init__(self, inner: Model, log: CallLog | CallSink | None = None,
                 seat: str | None = None, purpose: str = "",
                 access: Access | None = None) -> None:
        super().__init__(inner)
        self.log = log if isinstance(log, CallLog) else CallLog(log)
        self.seat = seat
        self.purpose = purpose
        self.access = access

    def with_purpose(self, purpose: str) -> SeatModel:
        """The same seat and log, with another default purpose."""
        return SeatModel(self.inner, self.log, self.seat, purpose, self.access)

    def tag(self, request: Request) -> Request:
        update: dict[str, Any] = {}
        if self.seat is not None:
            update["seat"] = self.seat
        if not request.purpose and self.purpose:
            update["purpose"] = self.purpose
        return request.model_copy(update=update) if update else request

    async def generate(self, request: Request) -> Response:
        request = self.tag(request)
        record = self._record(request)
        started = time.perf_counter()
        try:
            response = await self.inner.generate(request)
        except ModelError as error:
            self._failed(record, error, time.perf_counter() - started)
            raise
        except Exception as error:  # a client's bug is a failed call too
            failure = ModelError(f"{type(error).__name__}: {error}")
            self._failed(record, failure, time.perf_counter() - started)
            raise failure from error
        if self.log.health is not None:
            self.log.health.succeeded(record.seat or record.subject)
        response = cut_reply(without_reasoning(response))
        record.raw = response.text
        record.reasoning = response.reasoning
        record.usage = response.usage
        record.origin = response.origin
        record.finish_reason = response.finish_reason
        record.served_model = response.served_model
        record.notes = list(response.notes)
        self._parse(record, request, response.text)
        self.log.append(record)
        return response

    def _failed(self, record: CallRecord, error: ModelError, seconds: float) -> None:
        """Log the failed call with the time it took (retries and waits included), then let
        the run's health decide whether the game goes on."""
        record.error = f"{type(error).__name__}: {error}"
        record.usage = Usage(latency_s=seconds)
        self.log.append(record)
        if self.log.health is not None:
            self.log.health.failed(record.seat or record.subject, record.model, error)

    def _record(self, request: Request) -> CallRecord:
        schema = request.json_schema
        name = schema.get("title") if isinstance(schema, dict) else None
        access = self.access or access_of(request.purpose)
        seat, subject = request.seat, None
        if access in ("scripts", "truth"):  # not a seat's call: the seat is its subject
            seat, subject = None, request.seat
        return CallRecord(purpose=request.purpose, seat=seat, access=access, subject=subject,
                          seen=self.log.seen_by(seat), model=self.inner.name,
                          sample=request.sample, messages=request.messages,
                          config=request.config, json_schema=name or schema)

    @staticmethod
    def _parse(record: CallRecord, request: Request, text: str) -> None:
        attempt = current_attempt()
        if attempt is None or request.json_schema != attempt.json_schema:
            return
        record.attempt = attempt.number
        try:
            record.parsed = attempt.parse(text).model_dump(mode="json")
        except ParseFailure as failure:
            record.parse_error = str(failure)

    async def aclose(self) -> None:
        """Leave the shared client open (see the class docstring)."""


def write_note(model: Model | None, *, purpose: str, seat: str, shown: str, said: str,
               notes: Sequence[str] = ()) -> None:
    """A record in the seat's call log of something an agent decided without a model call
    (the speech guard's cuts, a detective's plan and ledger): model ``NOT_A_CALL``, no
    tokens, ``shown`` as the one message and ``said`` as the reply. Nothing when ``model``
    is not (a wrapper around) a seat's logging model."""
    while isinstance(model, ModelWrapper) and not isinstance(model, SeatModel):
        model = model.inner
    if not isinstance(model, SeatModel):
        return
    model.log.append(CallRecord(
        purpose=purpose, seat=seat, access="seat", seen=model.log.seen_by(seat),
        model=NOT_A_CALL, messages=[Message(role="assistant", content=shown)],
        config=GenerateConfig(), raw=said, notes=list(notes)))
