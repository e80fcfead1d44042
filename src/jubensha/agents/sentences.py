"""Internal.

A seat's speech judged one sentence at a time: what each sentence is.

The speech guard (``agents.guard``) removes the sentences that fail and keeps the rest; the
self-disclosure metric (``eval.self_disclosure``) counts a speech holding one as degenerate.
A sentence fails when it is

- an **echo of a question** asked at the table (by anyone, or the host's prompt): a
  question that mostly repeats one already asked ("What did you think about Mary Ellen on
  the Teeth?" given back as the answer to it);
- a **prompt echo**: words of a prompt template (``agents.template_echo``), not the values
  that filled it;
- a **label** ("Tom Hale asks:"), a **copy** of another seat's speech, a **loop** or a
  repeat of an earlier sentence of the same speech, the seat saying it is **another** seat;
- an **assistant's reply or refusal** ("I'm sorry, but I can't assist with that.", "Could
  you please provide more context?", 「好的，我来回答顾远之的问题。」), or a line **to the
  dead** (「准备好了，沈墨山。」, said to the victim);
- a **listed secret** in the sheet's words, or, for a murderer, **the kill** (a confession,
  its motive or preparations in the first person);
- **cut off**: the last sentence of a reply that ran out of tokens, with no end mark.

A sentence that is mostly the seat's own private text (``heavy``) is no fault by itself: a
seat tells its facts in its sheet's words. It is one when the whole speech recites the
sheet (``SpeechCheck.recites``): then those sentences go and the rest stays.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal, cast

from jubensha.agents.disclosure import (
    CLOSERS,
    REFUSAL,
    TERMINATORS,
    Degenerate,
    DisclosureSettings,
    SeatText,
    confession,
    copy_of,
    covered,
    impersonated,
    label_of,
    loops,
    units,
    window_set,
    windows,
)
from jubensha.agents.template_echo import TemplateEcho
from jubensha.memory.text import sentence_spans

ECHO_WINDOW = 3
"""Units in a window when a sentence is compared with a question asked."""
ECHO_SHARE = 0.6
"""Share of a question's units from one asked before that makes it an echo..."""
REPEAT_SHARE = 0.8
"""...and, when the seat itself is asking, that makes it the same question again."""
HEAVY_SHARE = DisclosureSettings().recite_share
"""A sentence this share of which is the seat's own private text is heavy."""

ASSISTANT = re.compile(
    r"\bI(?:'m| am|’m) sorry,? but I (?:do(?:n't|n’t| not)|can(?:'t|’t|not)) "
    r"(?:have|find|see|provide|answer|understand)"
    r"|\b(?:could|can|would) you (?:please )?(?:provide|give|share|clarify|tell me more|"
    r"specify|rephrase)"
    r"|\bplease provide (?:more|additional|some|the)\b"
    r"|\bI can(?:not|'t|’t)? (?:provide|offer|give) (?:you )?(?:with )?(?:a |an )?"
    r"(?:response|answer|analysis|summary|help|assistance)"
    r"|\bbased on the (?:information|details|context|text) (?:provided|given|you)"
    r"|\bI (?:can(?:not|'t|’t)|am unable to) physically\b"
    r"|\bI (?:do not|don't|don’t) have (?:personal|real-time|access)"
    r"|\b(?:more|additional|enough|sufficient) (?:context|information|details) "
    r"(?:to|about|on|so|regarding)\b"
    r"|\b(?:how|what else) (?:can|may) I (?:help|assist)"
    r"|\bI(?:'d| would) be (?:happy|glad) to (?:help|assist)"
    r"|\bI(?:'m| am) here to (?:help|assist)"
    r"|\blet me know if (?:you|there)"
    r"|\bfeel free to (?:ask|let me know)"
    r"|\b(?:sure|certainly|of course)[,!]? (?:here(?:'s| is)|I can help|I'd be)"
    r"|\bhere(?:'s| is) (?:a|an|my|the) (?:possible |revised |short |brief )?"
    r"(?:response|answer|reply|version|statement|rewrite)"
    r"|\byour (?:note|request|prompt|instructions?)\b"
    r"|\b(?:in|stay in|as the|as my) (?:character|role-?play)\b"
    r"|\bI(?:'m| am) ready\b|^\W*ready[.!]"
    r"|好的[，,]?\s*(?:我来|以下|下面|这是)|以下是|我来回答.{0,12}的问题"
    r"|请(?:您|你)?提供更多|更多(?:的)?(?:信息|上下文|细节|背景)"
    r"|根据(?:您|你)?(?:提供|给出)的(?:信息|内容|资料)|我(?:可以|能)为(?:您|你)(?:提供|分析)"
    r"|有什么(?:可以|需要|能)(?:帮|为)|很高兴(?:为您|为你|帮|能帮)|希望(?:这|以上).{0,6}(?:帮助|有用)"
    r"|作为(?:这个)?角色|(?:^|[，,。！!])\s*(?:我)?准备好了(?![吗么呢没])",
    re.IGNORECASE)
"""An assistant speaking where a character should: asking for context, offering help,
announcing its reply, saying it is ready."""

Fault = Degenerate | Literal["secret", "confession", "recites"]
NOT_SPEECH = ("secret", "confession", "recites")
"""Faults of what is said, not of how: a speech holding only these is no degenerate one."""


def speech_faults(verdicts: Sequence[Verdict]) -> list[tuple[Degenerate, str]]:
    """The degenerate kinds of a speech's sentences (each once), with their evidence."""
    found: dict[Degenerate, str] = {}
    for verdict in verdicts:
        for kind, evidence in verdict.faults:
            if kind not in NOT_SPEECH:
                found.setdefault(cast(Degenerate, kind), evidence)
    return list(found.items())


_QUESTION_END = ("?", "？", "吗", "呢", "么")


def interrogative(sentence: str) -> bool:
    end = sentence.rstrip().rstrip(CLOSERS).rstrip(".!。！…~～")
    return end.endswith(_QUESTION_END)


@dataclass
class Hearing:
    """What a seat's table holds when it speaks: what the sentences are judged against."""

    seat: SeatText
    names: Sequence[str]
    """Every seat's names (labels)."""
    own: Sequence[str]
    """The speaker's names (a sentence saying it is another fails)."""
    victims: Sequence[str] = ()
    others: list[tuple[str, str]] = field(default_factory=list)
    """(speaker, speech) said before by other seats."""
    questions: list[str] = field(default_factory=list)
    """Questions asked at the table before, and the host's lines."""
    echo: TemplateEcho | None = None
    allowed: Container[tuple[str, ...]] = field(default_factory=set)
    """``echo``-long windows the seat may say (its sheet, the public text, what it heard)."""
    crime: Container[tuple[str, ...]] = field(default_factory=set)
    """A murderer's windows of the sentences of its sheet about its kill (the crime, what
    is near it, its motive): saying one of them tells the kill."""

    def hear_question(self, text: str) -> None:
        self.questions.append(text)


@dataclass
class Verdict:
    """One sentence and why it may not be said (empty: it may)."""

    text: str
    faults: list[tuple[Fault, str]] = field(default_factory=list)
    """(kind, the text that shows it)."""
    heavy: bool = False
    empty: bool = False
    """A stray mark, no words: it passes, but says nothing."""

    @property
    def passes(self) -> bool:
        return not self.faults


def judge(text: str, hearing: Hearing, *, asked: str | None = None, asking: bool = False,
          cut: bool = False, recites: bool = False) -> list[Verdict]:
    """Each sentence of ``text`` with its faults. ``asked``: the question the speech
    answers (its words are free to say again); ``asking``: the text is a question being
    asked; ``cut``: the reply ran out of tokens; ``recites``: the whole speech reads the
    sheet out (its heavy sentences fail)."""
    spans = sentence_spans(text)
    verdicts: list[Verdict] = []
    earlier: list[list[str]] = []
    for number, (start, end) in enumerate(spans):
        sentence = text[start:end]
        words = units(sentence)
        verdict = Verdict(sentence, heavy=_heavy(words, hearing.seat), empty=not words)
        verdict.faults = list(faults(sentence, words, earlier, hearing, asked=asked,
                                     asking=asking, last_cut=cut and number == len(spans) - 1))
        if recites and verdict.heavy:
            verdict.faults.append(("recites", sentence))
        verdicts.append(verdict)
        earlier.append(words)
    return verdicts


def faults(sentence: str, words: list[str], earlier: Sequence[Sequence[str]],
           hearing: Hearing, *, asked: str | None, asking: bool, last_cut: bool
           ) -> Iterable[tuple[Fault, str]]:
    """Each way one sentence fails, with the text that shows it."""
    seat = hearing.seat
    if not words:  # a stray mark ("。" after a closing quote) is no sentence: let it be
        return
    if last_cut and not sentence.rstrip().rstrip(CLOSERS).endswith(tuple(TERMINATORS)):
        yield "cut off", sentence[-60:]
    if loops(words) or _repeats(words, earlier):
        yield "loop", sentence[:120]
    if (label := label_of(sentence, hearing.names)) is not None:
        yield "label", label
    if (echoed := _question_echo(sentence, words, hearing.questions, asking)) is not None:
        yield "question echo", echoed
    if hearing.echo is not None and hearing.echo.find(words, hearing.allowed) is not None:
        yield "prompt echo", sentence
    free = window_set([asked], seat.n) if asked else set()
    if (copied := copy_of(words, hearing.others, seat.n, free=free,
                          least=min(len(words), 8))) is not None:
        yield "copy", copied
    if hearing.own and (other := impersonated(sentence, [x for x in hearing.names
                                                         if x not in hearing.own])):
        yield "impersonation", other
    if (refused := REFUSAL.search(sentence)) is not None:
        yield "refusal", refused.group()
    if (assistant := ASSISTANT.search(sentence)) is not None:
        yield "assistant", assistant.group()
    if (dead := to_the_dead(sentence, hearing.victims)) is not None:
        yield "to the dead", dead
    if any(w in seat.secrets and w not in seat.known for w in windows(words, seat.n)):
        yield "secret", sentence
    if seat.murderer and ((told := confession(sentence, words, seat)) is not None
                          or any(w in hearing.crime and w not in seat.known
                                 for w in windows(words, seat.n))):
        yield "confession", told or sentence


def _heavy(words: list[str], seat: SeatText) -> bool:
    spans = windows(words, seat.n)
    hits = [w in seat.private and w not in seat.known for w in spans]
    return bool(words) and covered(hits, seat.n) >= HEAVY_SHARE * len(words)


def _repeats(words: Sequence[str], earlier: Sequence[Sequence[str]]) -> bool:
    """Whether the sentence says an earlier sentence of the same speech again."""
    if not earlier:
        return False
    if any(list(words) == list(before) for before in earlier):
        return True
    said = {w for before in earlier for w in windows(before, ECHO_WINDOW)}
    spans = windows(words, ECHO_WINDOW)
    hits = [w in said for w in spans]
    return bool(spans) and covered(hits, ECHO_WINDOW) >= REPEAT_SHARE * len(words)


def _question_echo(sentence: str, words: list[str], questions: Sequence[str],
                   asking: bool) -> str | None:
    """The question asked before that this interrogative sentence mostly repeats."""
    if not questions or not interrogative(sentence):
        return None
    spans = windows(words, ECHO_WINDOW)
    if not spans:
        spans_short = tuple(words)
        return next((q for q in questions if tuple(units(q)) == spans_short), None)
    share = REPEAT_SHARE if asking else ECHO_SHARE
    for question in reversed(questions):
        theirs = set(windows(units(question), ECHO_WINDOW))
        if covered([w in theirs for w in spans], ECHO_WINDOW) >= share * len(words):
            return question
    return None


def to_the_dead(sentence: str, victims: Sequence[str]) -> str | None:
    """A sentence spoken to a victim ("准备好了，沈墨山。", "Elias, I am here."), or None."""
    for victim in victims:
        if not victim:
            continue
        name = re.escape(victim)
        if (re.match(rf"\W*(?:dear\s+)?{name}\s*[,，!！:：]", sentence, re.IGNORECASE)
                or re.search(rf"[,，]\s*{name}\s*[.!?。！？…]*\W*$", sentence, re.IGNORECASE)):
            return sentence
    return None


def kept_text(verdicts: Sequence[Verdict], lang: str) -> str:
    """The sentences that pass, as one speech; "" when none of them says a word."""
    if not any(v.passes and not v.empty for v in verdicts):
        return ""
    joiner = "" if lang.startswith("zh") else " "
    return joiner.join(v.text.strip() for v in verdicts if v.passes and not v.empty).strip()


def removed(verdicts: Sequence[Verdict]) -> list[Verdict]:
    return [v for v in verdicts if not v.passes]
