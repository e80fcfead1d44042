"""Internal.

Text helpers every architecture shares: how an event reads as a line of a prompt, what of
a sheet goes in (goals, timeline), budgets of characters or tokens that keep a prompt
within a small model's context, and the tidying that turns a model's reply into one line
of a seat's speech.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from jubensha.engine import Event, OwnCharacter
from jubensha.memory.text import chunk, count_tokens, sentence_spans
from jubensha.prompts import render
from jubensha.scripts.model import ActSheet

SENTENCE_ENDS = ".!?。！？…\"'”’」』)）"
"""The characters a whole sentence may end with (closing quotes and brackets included)."""


def event_line(event: Event, lang: str) -> str:
    """``event`` as one plain line (``Name asks Other: ...``; "" for an event with no
    line), the form the table's own defaults show a seat too (``prompts/events``)."""
    return render("events", "line", lang, **event.model_dump())


def goals(me: OwnCharacter, act: ActSheet | None) -> list[str]:
    """What the character plays for now: the current act's goals, else its final goals,
    else its mission."""
    return (act.goals if act and act.goals else me.final_goals) or (
        [me.mission] if me.mission else [])


def timeline_lines(me: OwnCharacter) -> list[str]:
    """The character's timeline, one ``time text`` line per entry."""
    return [f"{t.time} {t.text}" if t.time else t.text for t in me.timeline]


def clip(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, cut at a word boundary with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return cut.rstrip(",;:") + "…"


def recent(lines: list[str], budget: int) -> list[str]:
    """The newest lines whose total length fits ``budget``, oldest first."""
    kept: list[str] = []
    used = 0
    for line in reversed(lines):
        if used + len(line) > budget:
            break
        kept.append(line)
        used += len(line) + 1
    return kept[::-1]


def window(lines: list[str], budget: int) -> list[str]:
    """The lines from a start that moves only when they outgrow ``budget``, then jumps so
    that they fill half of it: oldest first, at most ``budget`` characters, and the same
    start for many calls in a row (a cached prefix stays valid)."""
    start, used = 0, 0
    for end, line in enumerate(lines, 1):
        used += len(line) + 1
        if used > budget:
            kept = recent(lines[start:end], budget // 2)
            start = end - len(kept)
            used = sum(len(kept_line) + 1 for kept_line in kept)
    return lines[start:]


def within(lines: list[str], budget: int) -> list[str]:
    """The newest lines whose tokens fit ``budget``, oldest first."""
    kept: list[str] = []
    used = 0
    for line in reversed(lines):
        used += count_tokens(line)
        if used > budget:
            break
        kept.append(line)
    return kept[::-1]


def clip_tokens(text: str, budget: int) -> str:
    """``text`` within ``budget`` tokens, cut anywhere, with an ellipsis when cut."""
    if count_tokens(text) <= budget:
        return text
    low, high = 0, len(text)
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if count_tokens(text[:mid]) <= budget else (low, mid - 1)
    return text[:low] + "…"


def first_tokens(text: str, budget: int) -> str:
    """The start of ``text`` within about ``budget`` tokens, cut at a sentence."""
    if budget <= 0 or not text.strip():
        return ""
    pieces = chunk(text, budget)
    return pieces[0] + ("…" if len(pieces) > 1 else "")


def whole_sentences(text: str) -> str:
    """A reply cut off by its token limit without the unfinished sentence at its end (the
    whole reply when no sentence ended)."""
    spans = sentence_spans(text)
    ended = [end for _, end in spans if text[end - 1] in SENTENCE_ENDS]
    return text[:ended[-1]] if ended else text


def clean_speech(text: str, name: str, seats: Sequence[str], limit: int) -> str:
    """Model text as one line of speech by ``name``: no ``Name:`` prefix, no wrapping
    quotes, cut where the model starts writing a dialogue line for any seat (when the
    reply is nothing but such lines, the first one's words are kept), bounded."""
    names = "|".join(re.escape(seat) for seat in sorted(seats, key=len, reverse=True))
    text = re.sub(rf"^\s*(?:\*\*)?{re.escape(name)}(?:\*\*)?\s*[:：]\s*", "", text.strip())
    turns = list(re.finditer(rf"(?:^|\s)(?:\*\*)?(?:{names})(?:\*\*)?\s*[:：]", text))
    if turns:
        head = text[:turns[0].start()].strip()
        end = turns[1].start() if len(turns) > 1 else len(text)
        text = head or text[turns[0].end():end]
    return clip(text.strip().strip('"“”').strip(), limit)
