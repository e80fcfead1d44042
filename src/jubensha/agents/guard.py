"""Internal.

The speech guard: any agent, checked before what it says is said.

Small models read their private sheet out, confess, give back the question they were
asked, talk like an assistant, copy another seat or loop. ``GuardedAgent`` wraps an agent
of any architecture (``ARCH:guard``, e.g. ``naive:guard`` or ``thinkthrice:mr+sr+guard``)
and judges every public text of its actions (speeches, questions, statements made while
searching, reasons of accusations) one sentence at a time (``agents.sentences``) against
the seat's own sheet, what it has heard and the prompt templates. The sentences that fail
are removed and the rest is said (a ``guard.trim`` record when any was removed). When
every sentence fails, the seat's model is asked once more, told why (a call of purpose
``guard``), and its rewrite is judged the same way; when none of that passes either, the
seat says a fact of the case from its own sheet that it may say, never the same line
twice (``agents.fallback``; a ``guard.safe`` record). The two records are no model calls
(model ``guard``, no tokens). A clean text costs nothing: the checks are lexical. The
guard changes the game, so no paper's setting turns it on.

Speech shown while it is written (``engine.drafts``) passes a ``SentenceGate``: the live
views get a draft one whole sentence at a time, each only once it has passed the same
judgement; a sentence that fails is never shown, and one that is mostly the seat's own
sheet waits for the final text (it goes if the whole speech recites the sheet).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jubensha.agents.disclosure import (
    DisclosureSettings,
    SeatText,
    SpeechCheck,
    heard_text,
    private_parts,
    screen_speech,
    window_set,
)
from jubensha.agents.fallback import Fallback, kept_facts
from jubensha.agents.sentences import (
    Hearing,
    Verdict,
    judge,
    kept_text,
    removed,
    speech_faults,
)
from jubensha.agents.template_echo import TemplateEcho
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
    declare,
)
from jubensha.memory.text import sentence_spans
from jubensha.prompts import render

REWRITE_PURPOSE = declare("guard", "seat")
SAFE_PURPOSE = "guard.safe"
TRIM_PURPOSE = "guard.trim"
REWRITE_TOKENS = 160
REASONS = 3
"""Reasons told to the rewrite at most."""


@dataclass
class _Call:
    messages: list[Message]
    config: GenerateConfig
    finish_reason: str | None
    structured: bool


class PromptWatch(ModelWrapper):
    """The seat's model as its agent sees it: remembers the calls of the decision under
    way (to rewrite from its last prompt, and whether its reply ran out of tokens)."""

    def __init__(self, inner: Model) -> None:
        super().__init__(inner)
        self.calls: list[_Call] = []

    async def generate(self, request: Request) -> Response:
        response = await self.inner.generate(request)
        self.calls.append(_Call(request.messages, request.config, response.finish_reason,
                                request.json_schema is not None))
        return response


class GuardedAgent(Agent):
    """``inner`` with every public text it produces checked (see the module docstring)."""

    def __init__(self, inner: Agent, settings: DisclosureSettings | None = None) -> None:
        self.inner = inner
        self.settings = settings or DisclosureSettings()
        self.architecture = inner.architecture
        self.uses_model = inner.uses_model  # a guarded model-free seat is still model-free
        self.answering: str | None = None
        """The question the decision under way answers: saying its words is no copy."""
        self.asking = False
        self.watch: PromptWatch | None = None

    async def start(self, seat: SeatContext) -> None:
        await super().start(seat)
        sheet = seat.sheet
        n = self.settings.echo_words
        self.text = seat_text(sheet, self.settings.window(sheet.language))
        self.hearing = Hearing(
            seat=self.text, names=[*sheet.me.all_names, *(o.name for o in sheet.others)],
            own=sheet.me.all_names, victims=[v.name for v in sheet.victims],
            echo=TemplateEcho(sheet.language, n),
            allowed=window_set([*_public(sheet), *_own(sheet)], n))
        if sheet.is_murderer:
            self.hearing.crime = window_set(kept_facts(sheet), self.text.n)
        self.fallback = Fallback(sheet)
        if seat.model is not None:
            self.watch = PromptWatch(seat.model)
            seat = seat.model_copy(update={"model": self.watch})
        await self.inner.start(seat)

    @property
    def heard(self) -> list[tuple[str, str]]:
        """(speaker, text) of what the other seats and the host said, in order."""
        return self.hearing.others

    async def observe(self, event: Event) -> None:
        await self.inner.observe(event)
        allowed = self.hearing.allowed
        assert isinstance(allowed, set)
        if isinstance(event, ActStarted) and event.sheet is not None:
            own = [event.sheet.text, *event.sheet.goals, *event.sheet.notes.values()]
            for text in own:
                self.text.add_private(f"act {event.act}", text)
            allowed |= window_set(own, self.settings.echo_words)
        if isinstance(event, Spoke) and event.kind == "question" or isinstance(event, HostSpoke):
            self.hearing.hear_question(event.text)
        mine = isinstance(event, Spoke) and event.speaker == self.seat.sheet.me.name
        if (text := heard_text(event)) and not mine:
            self.text.learn(text)
            if not isinstance(event, HostSpoke):
                allowed |= window_set([text], self.settings.echo_words)
            if isinstance(event, Spoke | HostSpoke):
                speaker = event.speaker if isinstance(event, Spoke) else "Host"
                self.hearing.others.append((speaker, text))

    async def decide(self, decision: Decision) -> Action:
        if self.watch is not None:
            self.watch.calls = []
        question = decision.question if isinstance(decision, Speak) else None
        self.answering = question.text if question else None
        self.asking = False
        outer = draft_sink()
        gate = SentenceGate(outer, self.visible) if outer is not None else None
        with drafting(gate):
            action = await self.inner.decide(decision)
        self.asking = isinstance(action, Questions)
        kind = decision.kind if isinstance(decision, Speak) else decision.type
        texts = [await self.guard(kind, text, first=i == 0)
                 for i, text in enumerate(spoken(action))]
        return with_texts(action, texts)

    async def guard(self, kind: str, text: str, *, first: bool) -> str:
        """``text`` less the sentences that fail; when none passes, its rewrite less
        those; when none of that passes either, a fallback line."""
        verdicts = self.judge(text, cut=first and self._last_cut())
        kept = kept_text(verdicts, self.lang)
        if kept and not removed(verdicts):
            return text
        if kept:
            self._record(TRIM_PURPOSE, kind, text, kept, self.problems(verdicts))
            return kept
        rewrite = await self.rewrite(kind, text, self.problems(verdicts))
        again = self.judge(rewrite, cut=False) if rewrite else []
        if kept := kept_text(again, self.lang):
            if removed(again):
                self._record(TRIM_PURPOSE, kind, rewrite, kept, self.problems(again))
            return kept
        line = self.fallback.line(kind, self.answering or "", passes=self.passes)
        self._record(SAFE_PURPOSE, kind, rewrite or text, line,
                     self.problems(again or verdicts))
        return line

    def safe_line(self, kind: str) -> str:
        """The seat's next fallback line for ``kind`` (see ``agents.fallback``)."""
        return self.fallback.line(kind, self.answering or "", passes=self.passes)

    def judge(self, text: str, cut: bool = False) -> list[Verdict]:
        """Each sentence of ``text`` with why it may not be said."""
        recites = screen_speech(text, self.text).recites(self.settings)
        return judge(text, self.hearing, asked=self.answering, asking=self.asking, cut=cut,
                     recites=recites)

    def passes(self, text: str) -> bool:
        return not removed(self.judge(text))

    def visible(self, text: str) -> str:
        """What of ``text`` (whole sentences) a live view may show: the sentences that
        pass, up to the first that is mostly the seat's own sheet (it waits for the
        final text)."""
        shown = []
        for verdict in judge(text, self.hearing, asked=self.answering, asking=self.asking):
            if verdict.heavy and verdict.passes:
                break
            shown.append(verdict)
        return kept_text(shown, self.lang)

    def check(self, text: str, cut: bool) -> SpeechCheck:
        """The whole-speech screen of ``text`` with the degenerate kinds of its
        sentences (what the self-disclosure metric sees)."""
        check = screen_speech(text, self.text, names=self.hearing.names, own=self.hearing.own,
                              cut=cut, others=self.heard,
                              asked=self.answering)
        for kind, evidence in speech_faults(self.judge(text, cut)):
            if kind not in check.degenerate:
                check.degenerate.append(kind)
                check.evidence[kind] = evidence
        return check

    def problems(self, verdicts: list[Verdict]) -> list[str]:
        """Why the sentences removed from a text may not be said, in the game's language."""
        found: list[str] = []
        for verdict in removed(verdicts):
            for kind, evidence in verdict.faults:
                line = render("guard", "reason", self.lang, kind=kind,
                              evidence=evidence[:120])
                if line not in found:
                    found.append(line)
        return found[:REASONS] or [render("guard", "reason", self.lang, kind="empty",
                                          evidence="")]

    async def rewrite(self, kind: str, text: str, problems: list[str]) -> str:
        """One call of the seat's model: the draft's own prompt, the draft, and why it
        cannot be said (a prompt that shares its prefix with the draft's, for caches).
        None for a model-free agent, which stays model-free guarded."""
        if self.seat.model is None or not self.uses_model:
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
        self.seat.note(purpose=purpose, shown=rejected, said=said,
                       notes=[f"{kind}: {p}" for p in problems])


class SentenceGate:
    """A draft sink in front of another: passes on what ``visible`` lets through of the
    whole sentences of the text so far (a sentence is whole once another has begun after
    it; the last may still grow), each time that grows."""

    def __init__(self, sink: DraftSink, visible: Callable[[str], str]) -> None:
        self.sink = sink
        self.visible = visible
        self.shown = ""
        self.judged = 0

    def __call__(self, text: str) -> None:
        spans = sentence_spans(text)
        whole = text[:spans[-2][1]].strip() if len(spans) > 1 else ""
        if len(whole) <= self.judged:
            return
        self.judged = len(whole)
        shown = self.visible(whole)
        if len(shown) > len(self.shown) and shown.startswith(self.shown):
            self.shown = shown
            self.sink(shown)


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
