"""Internal.

Self-disclosure: how much of its own secret sheet each seat said aloud, whether a
murderer told what it did, and how many of its replies failed as speech.

None of the four papers measures it, yet a game of hidden information is spoilt by a seat
that recites its sheet. Each seat's public speech (``Spoke`` events heard by another seat)
is checked in order with ``agents.disclosure``: a window of the seat's private text that no
public text holds and that it had not heard or been shown before counts as disclosed; the
instructions its prompts held come from ``calls.jsonl`` (windows of its prompts that are
none of its sheet, the public text, what was said in the game or an earlier reply), and a
speech is cut off when the call that made it ran out of tokens.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

from jubensha.agents.disclosure import (
    Degenerate,
    DisclosureSettings,
    SeatText,
    SpeechCheck,
    heard_text,
    private_parts,
    public_parts,
    screen_speech,
    window_set,
)
from jubensha.agents.sentences import Hearing, judge, speech_faults
from jubensha.agents.template_echo import TemplateEcho
from jubensha.engine.events import Event, HostSpoke, Spoke
from jubensha.eval.registry import MetricContext, metric
from jubensha.eval.report import MetricResult, ResultTable, number
from jubensha.llm.calls import CallRecord
from jubensha.prompts import render
from jubensha.runlog.folder import RunLog
from jubensha.scripts.model import Script

EXAMPLES = 6
"""Examples kept per seat (the longest disclosed passages first)."""
EXAMPLE_CHARS = 300


class SelfDisclosureOptions(DisclosureSettings):
    """Window lengths and the reciting threshold (docs/evaluation.md)."""


class Example(BaseModel):
    kind: str
    """``disclosed``, ``confession`` or a degenerate kind (``loop``, ``label``, ...)."""
    event: int
    text: str
    part: str = ""
    """Where disclosed text comes from: story, secret, timeline, goals, act N, ..."""


class SeatDisclosure(BaseModel):
    disclosed_share: float
    """Share of the seat's spoken units inside its own private text."""
    confessed: bool
    degenerate: int
    """Speeches that failed as speech (each counted once, whatever the ways)."""
    secrets: int = 0
    """Speeches that say one of the seat's listed secrets in the sheet's words."""
    examples: list[Example] = Field(default_factory=list)
    murderer: bool = False
    speeches: int = 0
    units: int = 0
    recited: int = 0
    """Speeches that read the sheet out (``DisclosureSettings.recite_share`` of a speech
    and ``recite_units`` words or more its own private text)."""
    fallbacks: int = 0
    """Speeches that are the guard's fallback or one of its canned lines."""


class SelfDisclosure(MetricResult):
    metric: str = "self-disclosure"
    seats: dict[str, SeatDisclosure] = Field(default_factory=dict)
    options: dict[str, int | float] = Field(
        default_factory=lambda: DisclosureSettings().model_dump())
    """The settings used (a dict: a report's columns show the figures, not these)."""
    speeches: int = 0
    disclosed_share: float = 0.0
    """Over every seat's speech: the share of units that are the speaker's private text."""
    reciting: int = 0
    """Seats that recited their sheet at least once."""
    telling: int = 0
    """Seats that said one of their listed secrets in the sheet's words at least once."""
    confessions: int = 0
    """Murderers who told what they did."""
    degenerate: int = 0
    """Speeches that failed as speech."""
    fallbacks: int = 0
    """Speeches that are the guard's fallback or one of its canned lines."""

    @property
    def degenerate_share(self) -> float:
        return self.degenerate / self.speeches if self.speeches else 0.0

    @property
    def fallback_share(self) -> float:
        return self.fallbacks / self.speeches if self.speeches else 0.0

    def tables(self) -> list[ResultTable]:
        rows = [[name, "yes" if s.murderer else "", str(s.speeches), number(s.disclosed_share),
                 str(s.recited), str(s.secrets), "yes" if s.confessed else "",
                 str(s.degenerate), str(s.fallbacks)] for name, s in self.seats.items()]
        rows.append(["all", "", str(self.speeches), number(self.disclosed_share),
                     str(self.reciting), str(self.telling), str(self.confessions),
                     f"{self.degenerate} ({self.degenerate_share:.0%})",
                     f"{self.fallbacks} ({self.fallback_share:.0%})"])
        given = DisclosureSettings.model_validate(self.options)
        notes = [(f"disclosed share: of what the seat said, the share that is its own "
                  f"private text; recites: speeches of which {given.recite_share:.0%} or "
                  f"more, and {given.recite_units} words or more, are; secrets: speeches "
                  "saying a listed secret in the sheet's words; degenerate: speeches with a "
                  "sentence that fails as speech (echo, label, copy, assistant reply, loop...) "
                  "or that fell back; fell back: the guard's fallback or canned lines; 'all' "
                  "counts the seats that did.")]
        examples = [[name, str(e.event), e.kind, e.part, e.text[:EXAMPLE_CHARS]]
                    for name, s in self.seats.items() for e in s.examples]
        tables = [ResultTable(title="Self-disclosure: own secrets said aloud",
                              columns=["seat", "murderer", "speeches", "disclosed share",
                                       "recites", "secrets", "confessed", "degenerate",
                                       "fell back"],
                              rows=rows, notes=notes)]
        if examples:
            tables.append(ResultTable(title="Examples", columns=["seat", "event", "kind",
                                                                 "part", "text"],
                                      rows=examples))
        return tables


def speaking_call(calls: Sequence[CallRecord], event: Spoke) -> CallRecord | None:
    """The free-text call of the speaker that made this speech: its last one started
    before the speech was said."""
    found = [c for c in calls if c.seat == event.speaker and c.json_schema is None
             and c.raw and c.seen is not None and c.seen < event.index]
    return found[-1] if found else None


def disclosure(script: Script, run: RunLog, settings: DisclosureSettings | None = None
               ) -> SelfDisclosure:
    """Check every public speech of the run in order (see the module docstring)."""
    settings = settings or DisclosureSettings()
    return summarise(speech_checks(script, run, settings), set(script.murderers), settings)


FALLBACK: Degenerate = "fallback"
CANNED: Degenerate = "canned"


def canned_lines(script: Script, lang: str) -> set[str]:
    """Every neutral line of the guard (``prompts/guard/<lang>/safe.j2``) for every seat."""
    kinds = ("introduction", "answer", "ask", "turn", "statement")
    return {render("guard", "safe", lang, kind=kind, me=name, variant=v).strip()
            for c in script.characters for name in c.all_names for kind in kinds
            for v in range(12)} - {""}


@dataclass
class Turn:
    """One public speech with what its speaker's table held when it was said."""

    event: Spoke
    hearing: Hearing
    cut: bool
    asked: str | None


def turns(script: Script, run: RunLog, settings: DisclosureSettings) -> Iterator[Turn]:
    """Every public speech of the run in order, each with its speaker's ``Hearing`` as it
    was then (it changes as the walk goes on: use it before the next turn)."""
    language = run.meta.language if run.meta else script.language
    n = settings.window(language)
    public = public_parts(script)
    victims = [v.name for v in script.victims]
    names = [name for c in script.characters for name in c.all_names]
    echo = TemplateEcho(language, settings.echo_words)
    hearings = {c.name: Hearing(
        SeatText.of(c, public, n, murderer=c.name in script.murderers,
                    victims=c.killed or victims),
        names, c.all_names, victims, echo=echo,
        allowed=window_set([*public, *(t for _, t in private_parts(c))], settings.echo_words))
        for c in script.characters}
    by_index = {event.index: event for event in run.events}
    for event in run.events:
        if (isinstance(event, Spoke) and event.speaker in hearings
                and _public(event, hearings)):
            call = speaking_call(run.calls, event)
            yield Turn(event, hearings[event.speaker],
                       cut=call is not None and call.finish_reason == "length",
                       asked=_question(event, by_index))
        for name, hearing in hearings.items():
            _hear(event, name, hearing, settings)


def speech_checks(script: Script, run: RunLog, settings: DisclosureSettings
                  ) -> dict[str, list[tuple[int, SpeechCheck]]]:
    """Seat → (event index, check) of each of its public speeches, in order."""
    language = run.meta.language if run.meta else script.language
    fell_back = fallbacks(run)
    canned = canned_lines(script, language)
    checks: dict[str, list[tuple[int, SpeechCheck]]] = {c.name: [] for c in script.characters}
    for turn in turns(script, run, settings):
        event = turn.event
        check = speech_check(event.text, turn, settings)
        text = event.text.strip()
        if (event.speaker, text) in fell_back:
            _add(check, FALLBACK, text)
        elif text in canned:
            _add(check, CANNED, text)
        checks[event.speaker].append((event.index, check))
    return checks


def fallbacks(run: RunLog) -> set[tuple[str, str]]:
    """(seat, line) of every fallback the guard said (``guard.safe`` records)."""
    return {(c.seat or "", c.raw.strip()) for c in run.calls
            if c.purpose == "guard.safe" and c.raw}


def speech_check(text: str, turn: Turn, settings: DisclosureSettings) -> SpeechCheck:
    """``text`` said at ``turn``: the whole speech's screen with its sentences' faults."""
    hearing = turn.hearing
    check = screen_speech(text, hearing.seat, names=hearing.names, own=hearing.own,
                          cut=turn.cut, others=hearing.others,
                          asked=turn.asked)
    for kind, evidence in speech_faults(judge(text, hearing, asked=turn.asked,
                                              asking=turn.event.kind == "question",
                                              cut=turn.cut)):
        _add(check, kind, evidence)
    return check


def _add(check: SpeechCheck, kind: Degenerate, evidence: str) -> None:
    if kind not in check.degenerate:
        check.degenerate.append(kind)
        check.evidence[kind] = evidence


def _hear(event: Event, name: str, hearing: Hearing, settings: DisclosureSettings) -> None:
    """What ``name`` learns from ``event``: words it may say again, questions asked."""
    if not event.visible_to(name):
        return
    if isinstance(event, Spoke) and event.kind == "question" or isinstance(event, HostSpoke):
        hearing.hear_question(event.text)
    mine = isinstance(event, Spoke) and event.speaker == name
    text = heard_text(event)
    if not text or mine:
        return
    hearing.seat.learn(text)
    allowed = hearing.allowed
    if isinstance(allowed, set) and not isinstance(event, HostSpoke):
        allowed |= window_set([text], settings.echo_words)
    if isinstance(event, Spoke | HostSpoke):
        hearing.others.append((_speaker(event), text))


def _question(event: Spoke, events: dict[int, Event]) -> str | None:
    """The question ``event`` answers, whose words it may say again."""
    question = events.get(event.reply_to) if event.reply_to is not None else None
    return question.text if isinstance(question, Spoke) else None


def _speaker(event: Spoke | HostSpoke) -> str:
    return event.speaker if isinstance(event, Spoke) else "Host"


def _public(event: Spoke, seats: Mapping[str, object]) -> bool:
    return any(event.visible_to(name) for name in seats if name != event.speaker)


def summarise(checks: dict[str, list[tuple[int, SpeechCheck]]], murderers: set[str],
              settings: DisclosureSettings) -> SelfDisclosure:
    seats = {name: _seat(found, name in murderers, settings)
             for name, found in checks.items() if found}
    units = sum(s.units for s in seats.values())
    disclosed = sum(s.disclosed_share * s.units for s in seats.values())
    return SelfDisclosure(
        seats=seats, options=settings.model_dump(),
        speeches=sum(s.speeches for s in seats.values()),
        disclosed_share=disclosed / units if units else 0.0,
        reciting=sum(s.recited > 0 for s in seats.values()),
        telling=sum(s.secrets > 0 for s in seats.values()),
        confessions=sum(s.confessed for s in seats.values()),
        degenerate=sum(s.degenerate for s in seats.values()),
        fallbacks=sum(s.fallbacks for s in seats.values()))


def _seat(found: list[tuple[int, SpeechCheck]], murderer: bool,
          settings: DisclosureSettings) -> SeatDisclosure:
    units = sum(c.units for _, c in found)
    share = sum(c.disclosed for _, c in found) / units if units else 0.0
    return SeatDisclosure(
        disclosed_share=share, confessed=any(c.confession for _, c in found),
        degenerate=sum(bool(c.degenerate) for _, c in found),
        fallbacks=sum(FALLBACK in c.degenerate or CANNED in c.degenerate for _, c in found),
        secrets=sum(c.secret is not None for _, c in found),
        examples=_examples(found), murderer=murderer, speeches=len(found), units=units,
        recited=sum(c.recites(settings) for _, c in found))


def _examples(found: list[tuple[int, SpeechCheck]]) -> list[Example]:
    confessions = [Example(kind="confession", event=i, text=c.confession)
                   for i, c in found if c.confession]
    secrets = [Example(kind="secret", event=i, text=c.secret) for i, c in found if c.secret]
    failures = [Example(kind=kind, event=i, text=c.evidence.get(kind, ""))
                for i, c in found for kind in c.degenerate]
    passages = sorted((Example(kind="disclosed", event=i, text=text, part=part)
                       for i, c in found for text, part in zip(c.passages, c.parts,
                                                               strict=True)),
                      key=lambda e: -len(e.text))
    return (confessions + secrets + failures + passages)[:EXAMPLES]


def has_speech(script: Script, run: RunLog) -> str | None:
    if any(isinstance(e, Spoke) for e in run.events):
        return None
    return "nobody spoke"


@metric("self-disclosure", "Each seat's own private text said aloud, murderers telling "
        "what they did, and replies that fail as speech (echoes, labels, copies, assistant "
        "replies, loops, empty or cut-off speech, the guard's fallbacks)", "jubensha (none of the four papers measures it)",
        applies=has_speech, options=SelfDisclosureOptions)
async def self_disclosure_metric(context: MetricContext) -> SelfDisclosure:
    settings = SelfDisclosureOptions.model_validate(context.options.get("self-disclosure",
                                                                         {}))
    result = disclosure(context.script, context.run, settings)
    return result.model_copy(update={"run": str(context.run.path)})
