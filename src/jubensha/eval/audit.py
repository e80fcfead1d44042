"""Internal.

The isolation audit: did any seat's model call hold text that seat could not know?

For every call made for a seat (in the game, and its answers after the game) the prompt is
cut into passages of ``words`` consecutive words (Chinese: ``chars`` characters) and each
is looked up, as a hash, in the passages of the private texts: every character's story,
secrets, timeline, relationships, act sheets and held clues, the clues still hidden in
locations, and the truth. A passage is evidence of a leak when it belongs to that private
text and not to what the seat may know at that moment: its own sheet (and act sheets
released to it), the public text, every event visible to it up to the last one it had
observed when the call started (``CallRecord.seen``; a passage must also be at least half
units that no such legitimate passage covers), and the text that every seat's
prompts share (templates, rules: passages in every seat's prompts that several characters'
private texts hold; one character's text reaching every seat is a leak). A call is flagged
when it holds ``passages`` such passages, counted without overlap. Calls whose declared
access is more than a seat's view (``scripts``, ``truth``: judges, the FSA reference) are
counted apart by purpose.

Passages are hashed with Python's string hash (salted per process), so hashes are compared
within one audit only. Limits: a paraphrase or a translation is not caught, nor is a leak
shorter than a passage.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Container, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from jubensha.engine.events import Event
from jubensha.eval.postgame import whole_scripts
from jubensha.llm.calls import CallRecord, read_calls
from jubensha.llm.text import HAN
from jubensha.runlog.folder import RunLog
from jubensha.scripts.model import PUBLIC, Character, Script

_CJK = HAN
_UNIT = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")
"""A Chinese character, or a word of letters and digits."""
TRUTH, HIDDEN = "(truth)", "(hidden clues)"
EVAL_CALLS = Path("eval") / "calls.jsonl"


class AuditOptions(BaseModel):
    """How long a passage is and how many make a call flagged (docs/isolation.md)."""

    model_config = ConfigDict(extra="forbid")

    words: int = Field(10, ge=3, le=100, description="Passage length in words.")
    chars: int = Field(14, ge=4, le=200, description="Passage length in Chinese characters.")
    passages: int = Field(3, ge=1, le=1000, description="Leaked passages that flag a call.")
    worst: int = Field(10, ge=0, le=1000, description="Flagged calls listed in full.")


# -- passages --------------------------------------------------------------------------------
_MULTIPLIER = np.uint64(0x100000001B3)


def units(text: str) -> list[str]:
    """Words (letters and digits) and single Chinese characters, case-folded."""
    return _UNIT.findall(text.casefold())


def passages_of(words: Sequence[str], n: int) -> np.ndarray:
    """A 64-bit hash of every run of ``n`` consecutive units (a rolling product, in numpy:
    thousands of prompts are cut in seconds)."""
    if len(words) < n:
        return np.empty(0, dtype=np.uint64)
    ids = np.fromiter((hash(w) for w in words), dtype=np.int64, count=len(words))
    ids = ids.view(np.uint64)
    found: np.ndarray = np.zeros(len(words) - n + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for k in range(n):
            found = found * _MULTIPLIER + ids[k:len(ids) - n + 1 + k]
    return found


def grams(texts: Iterable[str], n: int) -> set[int]:
    found: set[int] = set()
    for text in texts:
        if text:
            found.update(passages_of(units(text), n).tolist())
    return found


def locate(text: str, position: int, n: int) -> tuple[int, int]:
    """Character span of the ``n`` units starting at unit ``position`` of ``text``."""
    start = end = 0
    for number, match in enumerate(_UNIT.finditer(text.casefold())):
        if number == position:
            start = match.start()
        end = match.end()
        if number >= position + n - 1:
            break
    return start, end


def passage_length(language: str, options: AuditOptions) -> int:
    return options.chars if language.startswith("zh") else options.words


class Lookup:
    """Hashes sorted for vectorised membership (``searchsorted``), each with a value."""

    def __init__(self, values: dict[int, int] | Iterable[int]) -> None:
        pairs = values.items() if isinstance(values, dict) else ((k, 0) for k in values)
        table = sorted(pairs)
        self.keys = np.array([k for k, _ in table], dtype=np.uint64)
        self.values = np.array([v for _, v in table], dtype=np.int64)

    def find(self, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each hash: whether it is a key, and its value (0 when not)."""
        if not len(self.keys):
            return np.zeros(len(hashes), dtype=bool), np.zeros(len(hashes), dtype=np.int64)
        at = np.minimum(np.searchsorted(self.keys, hashes), len(self.keys) - 1)
        hit = self.keys[at] == hashes
        return hit, np.where(hit, self.values[at], 0)


# -- what is private, what is public --------------------------------------------------------
def character_parts(character: Character, script: Script) -> Iterator[tuple[str, str, int]]:
    """(part, text, act) of a character's private texts; ``act`` is 1 for its first sheet."""
    yield "story", character.story, 1
    for secret in character.secrets:
        yield "secret", secret, 1
    for entry in character.timeline:
        yield "timeline", entry.text, 1
    for relation in character.relationships:
        yield "relationships", " ".join([*relation.labels, relation.description]), 1
    for sheet in character.acts:
        for text in (sheet.text, *sheet.goals, sheet.performance, *sheet.notes.values()):
            yield f"act {sheet.act}", text, sheet.act
    names = set(character.all_names)
    for clue in script.clues:
        if clue.holder in names:
            yield f"clue {clue.id}", clue.text, 1


def truth_parts(script: Script) -> Iterator[tuple[str, str]]:
    truth = script.truth
    if truth is not None:
        yield "narrative", truth.narrative
        yield "solution", truth.solution
        for step in truth.reasoning_chain:
            yield "reasoning", step
        for kill in truth.kills:
            yield "kill", " ".join(filter(None, [kill.method, kill.motive]))
    for clue in script.clues:
        if clue.holder == PUBLIC and clue.location:
            yield f"clue {clue.id}", clue.text


def public_texts(script: Script) -> list[str]:
    texts = [script.title, script.background, script.rules,
             *(f"{v.name} {v.description}" for v in script.victims),
             *(f"{c.name} {c.description}" for c in script.characters),
             *(act.public_text for act in script.acts)]
    return texts + [c.text for c in script.clues if c.holder == PUBLIC and not c.location]


@dataclass
class Sources:
    """The private passages of one script: whose text each is, and where it comes from."""

    n: int
    owner: dict[int, tuple[str, str]] = field(default_factory=dict)
    """Passage hash to (owner, part): the first private text that holds it."""
    common: set[int] = field(default_factory=set)
    """Passages in the private texts of several owners (boilerplate, shared rules)."""
    own: dict[str, set[int]] = field(default_factory=dict)
    """Seat to the passages of its own sheet at the start (act 1 unless ``whole``)."""
    public: set[int] = field(default_factory=set)

    @classmethod
    def of(cls, script: Script, n: int, *, whole: bool = False) -> Sources:
        """``whole``: each seat holds its whole script from the start (imported games)."""
        sources = cls(n, public=grams(public_texts(script), n))
        for character in script.characters:
            own: set[int] = set()
            for part, text, act in character_parts(character, script):
                found = grams([text], n)
                for gram in found:
                    first = sources.owner.setdefault(gram, (character.name, part))
                    if first[0] != character.name:
                        sources.common.add(gram)
                if whole or act <= 1:
                    own |= found
            sources.own[character.name] = own
        for part, text in truth_parts(script):
            for gram in grams([text], n):
                sources.owner.setdefault(gram, (TRUTH if not part.startswith("clue")
                                                else HIDDEN, part))
        return sources


# -- one run ----------------------------------------------------------------------------------
class Leak(BaseModel):
    passage: str
    owner: str
    """The character whose private text it is, ``(truth)`` or ``(hidden clues)``."""
    part: str
    message: int
    """Index of the prompt message where the first leaked passage appears."""
    offset: int
    """Character offset of the passage in that message."""


class CallAudit(BaseModel):
    run: str
    log: Literal["game", "eval"]
    index: int
    seat: str | None
    architecture: str
    purpose: str
    access: str
    passages: int
    flagged: bool
    leak: Leak | None = None
    ordered: bool = True
    """False when the call did not record ``seen`` and the clock ordered it."""


def _event_text(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in ("type", "time", "stage", "kind"):
                yield from _event_text(item)
    elif isinstance(value, list):
        for item in value:
            yield from _event_text(item)


def prompt_of(call: CallRecord) -> list[str]:
    return [message.text for message in call.messages]


def uncovered(legit: np.ndarray, n: int) -> np.ndarray:
    """For each window, how many of its ``n`` units no legitimate window covers. A private
    passage that is mostly text the seat may know (a sentence it heard, joined to the name
    of who said it) is no evidence: at least half its units must be news to the seat."""
    starts = np.flatnonzero(legit)
    marks = np.zeros(len(legit) + n + 1, dtype=np.int64)
    np.add.at(marks, starts, 1)
    np.add.at(marks, starts + n, -1)
    covered = (np.cumsum(marks)[:len(legit) + n - 1] > 0).astype(np.int64)
    inside = np.concatenate([[0], np.cumsum(covered)])
    return n - (inside[n:n + len(legit)] - inside[:len(legit)])


def count_passages(flags: np.ndarray, n: int) -> tuple[int, int | None]:
    """Leaked passages counted without overlap (a leak of 2n units is two passages), and
    the position of the first."""
    count, first, free = 0, None, 0
    for position in np.flatnonzero(flags).tolist():
        if position >= free:
            count += 1
            first = position if first is None else first
            free = position + n
    return count, first


@dataclass
class _Prompt:
    call: CallRecord
    log: Literal["game", "eval"]
    texts: list[str]
    grams: list[np.ndarray]


def seat_calls(run: RunLog, extra: Sequence[CallRecord] = ()
               ) -> list[tuple[CallRecord, Literal["game", "eval"]]]:
    """(call, log) of the game's calls and the evaluation's, each evaluation request once:
    ``eval/calls.jsonl`` is appended by every evaluation, and a metric scored again (a
    resumed batch, ``eval`` run twice) logs its cached calls a second time, so counting
    every record would make the audit depend on how often the run was evaluated."""
    game: list[tuple[CallRecord, Literal["game", "eval"]]] = [(c, "game") for c in run.calls]
    seen: set[str] = set()
    for call in extra:
        key = request_identity(call)
        if key not in seen:
            seen.add(key)
            game.append((call, "eval"))
    return game


def request_identity(call: CallRecord) -> str:
    """What makes two logged calls the same request (what a reply cache keys on, with the
    seat and purpose it was made for)."""
    return json.dumps([call.seat, call.subject, call.purpose, call.access,
                       [m.model_dump(mode="json") for m in call.messages],
                       call.config.model_dump(mode="json"), call.json_schema],
                      sort_keys=True, ensure_ascii=False)


def access_of(call: CallRecord) -> str:
    """What the call may see; a call that declared nothing is audited as its seat's."""
    if call.access is not None:
        return call.access
    return "seat" if call.seat is not None else "unknown"


def audit_run(script: Script, run: RunLog, options: AuditOptions | None = None,
              eval_calls: Sequence[CallRecord] | None = None) -> RunAudit:
    """Audit every call of the run folder (``eval/calls.jsonl`` too unless given)."""
    options = options or AuditOptions()
    language = run.meta.language if run.meta else script.language
    n = passage_length(language, options)
    sources = Sources.of(script, n, whole=whole_scripts(run))
    if eval_calls is None:
        path = run.path / EVAL_CALLS
        eval_calls = read_calls(path) if path.is_file() else []
    prompts, privileged = [], []
    for call, log in seat_calls(run, eval_calls):
        if access_of(call) == "seat" and call.seat in sources.own:
            texts = prompt_of(call)
            prompts.append(_Prompt(call, log, texts, [passages_of(units(t), n) for t in texts]))
        else:
            privileged.append(call)
    private = Lookup(sources.owner.keys())
    candidates = [[np.flatnonzero(private.find(g)[0]) for g in p.grams] for p in prompts]
    shared = _shared(prompts, candidates) & sources.common
    seen = _Seen(run.events, n, sources.owner, list(sources.own))
    allowed = {seat: Lookup(own | sources.public | shared) for seat, own in sources.own.items()}
    architectures = {s: i.architecture for s, i in (run.meta.seats.items() if run.meta else [])}
    audits = [_audit_call(p, found, sources, seen, allowed, n, str(run.path),
                          architectures.get(p.call.seat or "", "?"), options.passages)
              for p, found in zip(prompts, candidates, strict=True)]
    return RunAudit(run=str(run.path), calls=audits, shared=len(shared),
                    privileged=[(c.purpose, access_of(c)) for c in privileged])


def _shared(prompts: Sequence[_Prompt], candidates: Sequence[list[np.ndarray]]) -> set[int]:
    """Private passages in the prompts of every seat that made calls (two seats at least)."""
    per_seat: dict[str, set[int]] = defaultdict(set)
    for prompt, found in zip(prompts, candidates, strict=True):
        for message, positions in zip(prompt.grams, found, strict=True):
            per_seat[prompt.call.seat or ""].update(message[positions].tolist())
    if len(per_seat) < 2:
        return set()
    return set.intersection(*per_seat.values())


class _Seen:
    """When each private passage first reached each seat in an event it could see."""

    def __init__(self, events: Sequence[Event], n: int, private: Container[int],
                 seats: Sequence[str]) -> None:
        self.events = list(events)
        self.first: dict[str, dict[int, int]] = {seat: {} for seat in seats}
        for event in self.events:
            found = grams(_event_text(event.model_dump(mode="json")), n)
            told = [g for g in found if g in private]
            for seat, first in self.first.items():
                if event.visible_to(seat):
                    for gram in told:
                        first.setdefault(gram, event.index)
        self.lookups = {seat: Lookup(first) for seat, first in self.first.items()}

    def known(self, seat: str, hashes: np.ndarray, last: int) -> np.ndarray:
        """Which passages the seat had been told in an event numbered ``last`` or before."""
        hit, first = self.lookups[seat].find(hashes)
        return hit & (first <= last)

    def last_before(self, time: str) -> int:
        """The last event logged before ``time`` (for calls that did not record ``seen``)."""
        return max((e.index for e in self.events if e.time < time), default=-1)


def _audit_call(prompt: _Prompt, candidates: list[np.ndarray], sources: Sources, seen: _Seen,
                allowed: dict[str, Lookup], n: int, run: str, architecture: str,
                threshold: int) -> CallAudit:
    call = prompt.call
    seat = call.seat or ""
    last = call.seen if call.seen is not None else (
        seen.last_before(call.time) if prompt.log == "game" else len(seen.events) - 1)
    total, leak = 0, None
    for number, (found, positions) in enumerate(zip(prompt.grams, candidates, strict=True)):
        hashes = found[positions]
        bad = ~allowed[seat].find(hashes)[0] & ~seen.known(seat, hashes, last)
        flags = np.zeros(len(found), dtype=bool)
        flags[positions[bad]] = True
        if flags.any():
            legit = allowed[seat].find(found)[0] | seen.known(seat, found, last)
            flags &= uncovered(legit, n) * 2 >= n
        count, first = count_passages(flags, n)
        total += count
        if first is not None and leak is None:
            start, end = locate(prompt.texts[number], first, n)
            owner, part = sources.owner[int(found[first])]
            leak = Leak(passage=prompt.texts[number][start:end], owner=owner, part=part,
                        message=number, offset=start)
    return CallAudit(run=run, log=prompt.log, index=call.index, seat=call.seat,
                     architecture=architecture, purpose=call.purpose or "?",
                     access=access_of(call), passages=total, flagged=total >= threshold,
                     leak=leak, ordered=call.seen is not None)


class RunAudit(BaseModel):
    """Every seat call of one run with its leaked passages; privileged calls by purpose."""

    run: str
    calls: list[CallAudit]
    shared: int = 0
    """Passages of several characters' private texts found in every seat's prompts:
    shared boilerplate, not evidence."""
    privileged: list[tuple[str, str]] = Field(default_factory=list)
    """(purpose, access) of each call meant to see more than a seat."""
