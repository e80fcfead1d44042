"""Internal.

The speech guard: any agent, checked before what it says is said.

Small models read their private sheet out, confess, echo their prompt, copy another seat
or loop. ``GuardedAgent`` wraps an agent of any architecture (``ARCH:guard``, e.g.
``naive:guard`` or ``thinkthrice:mr+sr+guard``) and checks every public text of its actions
(speeches, questions, statements made while searching, reasons of accusations) with
``agents.disclosure`` against the seat's own sheet, what it has heard, and the prompts of
the decision. A text that recites the sheet, confesses (a murderer) or fails as speech is
cut to its first sentences when they pass (a ``guard.trim`` record); else it is rewritten
once by the seat's model, told why (a call of purpose ``guard``); if the rewrite fails
too, a safe line from ``prompts/guard`` replaces it (a ``guard.safe`` record). The two
records are no model calls (model ``guard``, no tokens). A clean text costs nothing: the
checks are lexical. The guard changes the game, so no paper's setting turns it on.

Speech shown while it is written (``engine.drafts``) passes a ``SentenceGate``: the live
views get a draft one whole sentence at a time, each only once the text up to its end
passes the same checks; after a sentence that fails, nothing more is shown until the final
text (cut, rewritten or replaced as above) is said.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Container
from dataclasses import dataclass, field
from typing import Any

from jubensha.agents.disclosure import (
    DisclosureSettings,
    Instructions,
    SeatText,
    SpeechCheck,
    heard_text,
    private_parts,
    screen_speech,
    window_set,
)
from jubensha.agents.toolkit import Caller
from jubensha.engine import (
    Accusation,
    Action,
    ActStarted,
    Agent,
    CharacterSheet,
    Decision,
    DraftSink,
    Event,
    HostSpoke,
    Investigate,
    Questions,
    SeatContext,
    Speak,
    Speech,
    Spoke,
    draft_sink,
    drafting,
)
from jubensha.llm import (
    GenerateConfig,
    Message,
    Model,
    ModelError,
    ModelWrapper,
    Request,
    Response,
)
from jubensha.llm.calls import declare, write_note
from jubensha.memory.text import sentence_spans
from jubensha.prompts import render

REWRITE_PURPOSE = declare("guard", "seat")
SAFE_PURPOSE = "guard.safe"
TRIM_PURPOSE = "guard.trim"
REWRITE_TOKENS = 160


@dataclass
class _Call:
    messages: list[Message]
    config: GenerateConfig
    finish_reason: str | None
    structured: bool


class PromptWatch(ModelWrapper):
    """The seat's model as its agent sees it: remembers the calls of the decision under
    way (to rewrite from its last prompt) and every prompt's instructions (echoes)."""

    def __init__(self, inner: Model, instructions: Instructions) -> None:
        super().__init__(inner)
        self.instructions = instructions
        self.calls: list[_Call] = []

    async def generate(self, request: Request) -> Response:
        response = await self.inner.generate(request)
        self.calls.append(_Call(request.messages, request.config, response.finish_reason,
                                request.json_schema is not None))
        self.instructions.add([m.text for m in request.messages], response.text)
        return response


@dataclass
class _Known(Container[tuple[str, ...]]):
    """Instruction windows of the prompts that are not text the seat may say."""

    instructions: Instructions
    allowed: set[tuple[str, ...]] = field(default_factory=set)

    def __contains__(self, window: object) -> bool:
        return window in self.instructions.found and window not in self.allowed


class GuardedAgent(Agent):
    """``inner`` with every public text it produces checked (see the module docstring)."""

    def __init__(self, inner: Agent, settings: DisclosureSettings | None = None) -> None:
        self.inner = inner
        self.settings = settings or DisclosureSettings()
        self.architecture = inner.architecture
        self.uses_model = inner.uses_model  # a guarded model-free seat is still model-free
        self.heard: list[tuple[str, str]] = []
        self.safe_lines = 0
        self.answering: str | None = None
        """The question the decision under way answers: saying its words is no copy."""
        self.watch: PromptWatch | None = None

    async def start(self, seat: SeatContext) -> None:
        await super().start(seat)
        sheet = seat.sheet
        self.text = seat_text(sheet, self.settings.window(sheet.language))
        self.echo = _Known(Instructions(self.settings.echo_words))
        self.echo.allowed = window_set([*_public(sheet), *_own(sheet)],
                                       self.settings.echo_words)
        if seat.model is not None:
            self.watch = PromptWatch(seat.model, self.echo.instructions)
            seat = seat.model_copy(update={"model": self.watch})
        await self.inner.start(seat)

    async def observe(self, event: Event) -> None:
        await self.inner.observe(event)
        if isinstance(event, ActStarted) and event.sheet is not None:
            own = [event.sheet.text, *event.sheet.goals, *event.sheet.notes.values()]
            for text in own:
                self.text.add_private(f"act {event.act}", text)
            self.echo.allowed |= window_set(own, self.settings.echo_words)
        mine = isinstance(event, Spoke) and event.speaker == self.seat.sheet.me.name
        if (text := heard_text(event)) and not mine:
            self.text.learn(text)
            self.echo.allowed |= window_set([text], self.settings.echo_words)
            if isinstance(event, Spoke | HostSpoke):
                speaker = event.speaker if isinstance(event, Spoke) else "Host"
                self.heard.append((speaker, text))

    async def decide(self, decision: Decision) -> Action:
        if self.watch is not None:
            self.watch.calls = []
        question = decision.question if isinstance(decision, Speak) else None
        self.answering = question.text if question else None
        outer = draft_sink()
        gate = SentenceGate(outer, self.passes) if outer is not None else None
        with drafting(gate):
            action = await self.inner.decide(decision)
        kind = decision.kind if isinstance(decision, Speak) else decision.type
        texts = [await self.guard(kind, text, first=i == 0)
                 for i, text in enumerate(spoken(action))]
        return with_texts(action, texts)

    async def guard(self, kind: str, text: str, *, first: bool) -> str:
        """``text`` if it passes; else its first sentences if they pass (no call); else
        its rewrite (or the rewrite's first sentences) if that passes; else a safe line."""
        cut = first and self._last_cut()
        problems = self.problems(self.check(text, cut))
        if not problems:
            return text
        kept = tidy(self.passing_start(text), self.seat.sheet.me.name)
        if kept:
            self._record(TRIM_PURPOSE, kind, text, kept, problems)
            return kept
        rewrite = await self.rewrite(kind, text, problems)
        again = self.problems(self.check(rewrite, False)) if rewrite else problems
        if rewrite and not again:
            return rewrite
        kept = self.passing_start(rewrite) if rewrite else ""
        if kept:
            self._record(TRIM_PURPOSE, kind, rewrite, kept, again)
            return kept
        safe = self.safe_line(kind)
        self._record(SAFE_PURPOSE, kind, rewrite or text, safe, again)
        return safe

    def safe_line(self, kind: str) -> str:
        """A neutral line for ``kind``: the seat's next variant, the seats starting apart,
        so that two seats' safe lines are no copies of each other."""
        name = self.seat.sheet.me.name
        start = int(hashlib.sha256(name.encode()).hexdigest(), 16) % 12
        self.safe_lines += 1
        return render("guard", "safe", self.lang, kind=kind, me=name,
                      variant=start + self.safe_lines)

    def passes(self, text: str) -> bool:
        return not self.problems(self.check(text, False))

    def passing_start(self, text: str) -> str:
        """The longest run of whole sentences from the start of ``text`` that passes (a
        draft that opens well and then reads the sheet out keeps its opening), or ""."""
        ends = [end for _, end in sentence_spans(text)][:-1]
        for end in reversed(ends):
            start = text[:end].strip()
            if not self.problems(self.check(start, False)):
                return start
        return ""

    def check(self, text: str, cut: bool) -> SpeechCheck:
        sheet = self.seat.sheet
        names = [*sheet.me.all_names, *(o.name for o in sheet.others)]
        return screen_speech(text, self.text, names=names, own=sheet.me.all_names, cut=cut,
                             instructions=self.echo, echo_n=self.settings.echo_words,
                             others=self.heard, asked=self.answering)

    def problems(self, check: SpeechCheck) -> list[str]:
        """Why a text may not be said, in the game's language; empty when it may."""
        found = []
        if check.recites(self.settings):
            found.append(render("guard", "reason", self.lang, kind="recites",
                                evidence=check.passages[0] if check.passages else ""))
        if check.confession:
            found.append(render("guard", "reason", self.lang, kind="confession",
                                evidence=check.confession))
        elif check.secret and self.seat.sheet.is_murderer:
            found.append(render("guard", "reason", self.lang, kind="secret",
                                evidence=check.secret))
        for kind in check.degenerate:
            found.append(render("guard", "reason", self.lang, kind=kind,
                                evidence=check.evidence.get(kind, "")[:120]))
        return found

    async def rewrite(self, kind: str, text: str, problems: list[str]) -> str:
        """One call of the seat's model: the draft's own prompt, the draft, and why it
        cannot be said (a prompt that shares its prefix with the draft's, for caches)."""
        if self.seat.model is None:
            return ""
        base = self._last_prompt()
        sheet = self.seat.sheet
        asked = render("guard", "rewrite", self.lang, me=sheet.me.name, kind=kind,
                       problems=problems, murderer=sheet.is_murderer)
        messages = [*base, Message(role="assistant", content=text),
                    Message(role="user", content=asked)] if base else [
            Message(role="system", content=render("guard", "system", self.lang,
                                                  me=sheet.me.name, title=sheet.title)),
            Message(role="user", content=asked)]
        config = self._last_config()
        caller = Caller(self.seat.model, sheet.me.name, self.lang, config.seed,
                        config.temperature, text_tokens=config.max_tokens or REWRITE_TOKENS)
        try:
            said = await caller.text(REWRITE_PURPOSE, messages)
        except ModelError:
            return ""
        return tidy(said, sheet.me.name)

    def _last_prompt(self) -> list[Message]:
        calls = self.watch.calls if self.watch else []
        return list(calls[-1].messages) if calls else []

    def _last_config(self) -> GenerateConfig:
        calls = [c for c in (self.watch.calls if self.watch else []) if not c.structured]
        return calls[-1].config if calls else GenerateConfig(max_tokens=REWRITE_TOKENS)

    def _last_cut(self) -> bool:
        calls = self.watch.calls if self.watch else []
        return bool(calls) and calls[-1].finish_reason == "length"

    def _record(self, purpose: str, kind: str, rejected: str, said: str,
                problems: list[str]) -> None:
        """A record of no model call in the run's call log (``guard.trim``,
        ``guard.safe``): what was replaced, by what, and why."""
        write_note(self.seat.model, purpose=purpose, seat=self.seat.sheet.me.name,
                   shown=rejected, said=said, notes=[f"{kind}: {p}" for p in problems])


class SentenceGate:
    """A draft sink in front of another: passes on the text so far one whole sentence at
    a time, each once the text up to its end ``passes``; stops at the first that fails.
    A sentence is whole once another has begun after it (the last may still grow)."""

    def __init__(self, sink: DraftSink, passes: Callable[[str], bool]) -> None:
        self.sink = sink
        self.passes = passes
        self.shown = ""
        self.stopped = False

    def __call__(self, text: str) -> None:
        if self.stopped:
            return
        spans = sentence_spans(text)
        whole = text[:spans[-2][1]].strip() if len(spans) > 1 else ""
        if len(whole) <= len(self.shown):
            return
        if self.passes(whole):
            self.shown = whole
            self.sink(whole)
        else:
            self.stopped = True


def seat_text(sheet: CharacterSheet, n: int) -> SeatText:
    me = sheet.me
    return SeatText.of(me, _public(sheet), n, murderer=sheet.is_murderer,
                       victims=me.killed or [v.name for v in sheet.victims])


def _public(sheet: CharacterSheet) -> list[str]:
    return [sheet.title, sheet.background, sheet.rules,
            *(f"{v.name} {v.description}" for v in sheet.victims),
            *(f"{o.name} {o.description}" for o in sheet.others),
            f"{sheet.me.name} {sheet.me.description}"]


def _own(sheet: CharacterSheet) -> list[str]:
    return [text for _, text in private_parts(sheet.me)]


def spoken(action: Action) -> list[str]:
    """The texts of an action that the table will make public."""
    if isinstance(action, Speech):
        return [action.text]
    if isinstance(action, Questions):
        return list(action.questions)
    if isinstance(action, Investigate | Accusation):
        text = action.statement if isinstance(action, Investigate) else action.reason
        return [text] if text else []
    return []


def with_texts(action: Action, texts: list[str]) -> Action:
    """``action`` saying ``texts`` instead (the order of ``spoken``)."""
    if not texts:
        return action
    fields: dict[type, dict[str, Any]] = {
        Speech: {"text": texts[0]}, Questions: {"questions": texts},
        Investigate: {"statement": texts[0]}, Accusation: {"reason": texts[0]},
    }
    return action.model_copy(update=fields[type(action)])


def tidy(text: str, name: str) -> str:
    """A rewrite as one line of speech: no ``Name:`` label, no wrapping quotes or JSON
    brackets (a rewrite of a question asked in JSON may keep some)."""
    text = " ".join(text.split()).strip('"“”「」[]{} ')
    for label in (f"{name}:", f"{name}："):
        if text.startswith(label):
            text = text[len(label):].strip()
    return text.strip('"“”「」[]{} ')
