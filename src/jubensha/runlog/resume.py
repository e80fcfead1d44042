"""Internal.

Resuming an interrupted game: its recorded calls answered again, then the game live.

A game's course follows from its settings and the model's replies. Every reply of an
attempt is in its ``calls.jsonl``, so playing the same game again with those replies
reproduces it, event by event, up to where the attempt stopped; from there the model is
asked live. A call answered from the log is recorded again with ``origin="resumed"``: it
was spent by the earlier attempt, and counting it once more would bill it twice.

Replies are matched per (seat, purpose, sample), in the order the log holds them, so that
decisions asked concurrently (votes, say) may reach the model in either order. Each
replayed call must ask what the log says it asked (the same messages and schema); a game
that asks something else is another game (another script version, prompt or procedure)
and stops with ``ResumeDiverged``. Only the log's prefix before its first failed call is
replayed: a failure (a dead endpoint, say) is asked again live, and what followed it
depended on it.

The browser keeps tables across restarts with the same mechanism, so it lives here, below
``runs`` and ``web``.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from jubensha.llm.base import Model, ModelWrapper, Request, Response
from jubensha.llm.calls import CallRecord
from jubensha.runlog.folder import RESULT, RunError, RunMeta, read_run

RESUMED: Final = "resumed"
"""The origin of a call answered from an earlier attempt's log."""
Key = tuple[str | None, str, int]


class ResumeError(Exception):
    """A log that cannot continue this game; the message is one line naming the problem."""


class ResumeDiverged(BaseException):
    """The game asked something its log does not hold: it ends at once (like
    ``ModelUnreachable``, a ``BaseException`` so that no seat turns it into a fallback)."""


def replayable(records: Iterable[CallRecord]) -> list[CallRecord]:
    """The calls before the first failed one."""
    kept = []
    for record in records:
        if record.error is not None:
            break
        kept.append(record)
    return kept


def spent(records: Iterable[CallRecord]) -> list[CallRecord]:
    """The calls an attempt paid for: all but those answered from an earlier attempt."""
    return [r for r in records if r.origin != RESUMED]


def _key(seat: str | None, purpose: str, sample: int) -> Key:
    return (seat, purpose, sample)


def _schema_name(schema: Any) -> Any:
    return schema.get("title") or schema if isinstance(schema, dict) else schema


def meta_problem(old: RunMeta, new: RunMeta) -> str | None:
    """What makes ``old``'s log unfit for the game ``new`` describes; None when it fits."""
    if old.procedure != new.procedure:
        return "the log is of another procedure (stages, rounds or questions differ)"
    for name in ("script_id", "language", "seed"):
        if getattr(old, name) != getattr(new, name):
            return (f"the log is of another game ({name} {getattr(old, name)!r}, not "
                    f"{getattr(new, name)!r})")
    if old.seats != new.seats:
        changed = sorted(n for n in set(old.seats) | set(new.seats)
                         if old.seats.get(n) != new.seats.get(n))
        return f"the log is of another table (seats differ: {', '.join(changed)})"
    if old.options.get("embedder") != new.options.get("embedder"):
        return (f"the log is of another game (embedder {old.options.get('embedder')!r}, not "
                f"{new.options.get('embedder')!r})")
    return None


@dataclass
class Resume:
    """An earlier attempt's replayable calls, and the meta of the game they belong to."""

    source: Path
    meta: RunMeta
    records: list[CallRecord]

    @classmethod
    def read(cls, folder: Path) -> Resume:
        """The log of an unfinished attempt; ``ResumeError`` when there is nothing to
        resume (no run, a finished one, no meta)."""
        try:
            run = read_run(folder)
        except RunError as exc:
            raise ResumeError(str(exc)) from None
        if run.meta is None:
            raise ResumeError(f"{folder}: no meta.json, so the game it logged is unknown")
        if (folder / RESULT).is_file():
            raise ResumeError(f"{folder}: the game finished; there is nothing to resume")
        return cls(Path(folder), run.meta, replayable(run.calls))

    @classmethod
    def longest(cls, folders: Iterable[Path]) -> Resume | None:
        """Of several unfinished attempts at one game, the one with most replayable calls
        (an attempt killed while it replayed holds a prefix of the one it replayed)."""
        found = []
        for folder in folders:
            try:
                found.append(cls.read(folder))
            except ResumeError:
                continue
        return max(found, key=lambda r: len(r.records), default=None)

    def check(self, meta: RunMeta) -> None:
        """Refuse (``ResumeError``) when the log is not of the game ``meta`` describes."""
        problem = meta_problem(self.meta, meta)
        if problem:
            raise ResumeError(f"{self.source}: cannot resume: {problem}")

    def answers(self) -> Answers:
        """Fresh queues of the recorded replies, shared by every client of the game."""
        return Answers(self.source, self.records)


class Answers:
    """The recorded replies per (seat, purpose, sample), consumed in log order."""

    def __init__(self, source: Path, records: list[CallRecord]) -> None:
        self.source = source
        self.queues: dict[Key, deque[CallRecord]] = defaultdict(deque)
        for record in records:
            self.queues[_key(record.seat or record.subject, record.purpose,
                             record.sample)].append(record)
        self.replayed = 0

    def left(self) -> int:
        return sum(len(queue) for queue in self.queues.values())

    def take(self, request: Request, model: str) -> Response | None:
        """The recorded reply to ``request``, or None when the log holds no more for its
        seat and purpose (the call goes live)."""
        queue = self.queues.get(_key(request.seat, request.purpose, request.sample))
        if not queue:
            return None
        record = queue.popleft()
        if (record.model != model or record.messages != request.messages
                or _schema_name(record.json_schema) != _schema_name(request.json_schema)):
            raise ResumeDiverged(
                f"{self.source}: cannot resume: call {record.index} of the log "
                f"({record.purpose or 'a call'} for {request.seat or 'the table'}) asked "
                "something else than this game asks; the log is of another version of the "
                "script, its prompts or its procedure")
        self.replayed += 1
        assert record.raw is not None
        return Response(text=record.raw, model=record.model, usage=record.usage,
                        finish_reason=record.finish_reason, origin=RESUMED,
                        notes=list(record.notes), served_model=record.served_model)


class ResumingModel(ModelWrapper):
    """Answers from the log while it holds replies for the call's seat and purpose, then
    passes calls to ``inner`` (the live model)."""

    def __init__(self, inner: Model, answers: Answers) -> None:
        super().__init__(inner)
        self.answers = answers

    async def generate(self, request: Request) -> Response:
        recorded = self.answers.take(request, self.inner.name)
        if recorded is not None:
            return recorded
        return await self.inner.generate(request)
