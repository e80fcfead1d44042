"""Internal.

What the model reads out of one text: the detective's narrow questions.

A small model loses the thread of a whole case but reads one sentence well. So the seat's
model is asked one narrow question at a time, with a reply schema that leaves it a short
choice (``TextReading``: does this text give the person a motive, put them near the
weapon, say where they were, or none of these; then ``PlaceReading``: where, from when to
when; ``DeathReading``: was the victim alive at a time, or dead by one, and found where). The framework adds the readings up (``case.Case``).

A reading is kept only as far as its text bears it out: a time the text does not write
and a place it does not name are dropped, so the model cannot invent an alibi. Every
request is deterministic (temperature 0, no seed) and holds only the text and the
question, so two seats reading the same clue send the same request and a game's cache
answers the second (``runs.play``); ``bench/sensors.py`` grades these readings against
generated mysteries' known facts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Literal

from pydantic import BaseModel, Field, create_model

from jubensha.agents.extractive_text import clock_times
from jubensha.agents.toolkit import Caller, chat
from jubensha.llm import ModelError, declare
from jubensha.prompts import render

READ = declare("detective.read", "seat")
PLACE = declare("detective.place", "seat")
DEATH = declare("detective.death", "seat")
FACTS = ("motive", "weapon", "whereabouts", "none")
Fact = Literal["motive", "weapon", "whereabouts", "none"]
NIGHT_ENDS = 6 * 60
"""Clock times before 06:00 belong to the night after the evening (a story that passes
midnight keeps its order)."""
READ_TOKENS = 64
"""A reading's reply: one small JSON object."""


class TextReading(BaseModel):
    """The reply to "what does this text say about this person?"."""

    fact: Fact


class PlaceReading(BaseModel):
    """The reply to "where was this person, from when to when?" (asked after a reading of
    whereabouts)."""

    place: str = Field("", max_length=60)
    start: str = ""
    end: str = ""


class DeathReading(BaseModel):
    """The reply to "what does this text say of the victim?": alive or dead at a time."""

    state: Literal["alive", "dead", "none"]
    time: str = ""
    place: str = Field("", max_length=60)


@cache
def place_schema(times: tuple[str, ...]) -> type[PlaceReading]:
    """``PlaceReading`` whose times can only be the clock times the text writes (or none):
    a model constrained by the schema cannot invent one, and writes fewer tokens."""
    written = Literal[(*times, "")]  # type: ignore[valid-type]
    return create_model("PlaceReading", __base__=PlaceReading, start=(written, ""),
                        end=(written, ""))


@cache
def death_schema(times: tuple[str, ...]) -> type[DeathReading]:
    """``DeathReading`` with the text's clock times as the only times."""
    written = Literal[(*times, "")]  # type: ignore[valid-type]
    return create_model("DeathReading", __base__=DeathReading, time=(written, ""))


def written_times(text: str) -> tuple[str, ...]:
    """The clock times ``text`` writes, in the order of the day, as HH:MM."""
    found = {minute(t): t for t in clock_times(text) if minute(t) is not None}
    return tuple(f"{int(t.split(':')[0]):02d}:{t.split(':')[1]}"
                 for _, t in sorted(found.items()))


@dataclass(frozen=True)
class Finding:
    """A reading kept: what ``text`` (told by ``source``) says of ``person``; times in
    minutes of the day, None where the text gives none."""

    person: str
    fact: str
    text: str
    source: str
    place: str = ""
    start: int | None = None
    end: int | None = None


@dataclass(frozen=True)
class DeathFinding:
    """What ``text`` says of a victim's death, as far as the text bears it out."""

    victim: str
    text: str
    alive_at: int | None
    dead_by: int | None
    found_in: str


def minute(time: str) -> int | None:
    """``"21:40"`` → the minute of the evening (times before 06:00 count after midnight);
    None when ``time`` is no clock time."""
    found = re.fullmatch(r"\s*(\d{1,2})[:：](\d{2})\s*", time)
    if found is None:
        return None
    hours, mins = int(found.group(1)), int(found.group(2))
    if hours > 23 or mins > 59:
        return None
    value = hours * 60 + mins
    return value + 24 * 60 if value < NIGHT_ENDS else value


def borne_time(time: str, text: str) -> int | None:
    """``time`` as a minute when ``text`` writes that clock time, else None."""
    value = minute(time)
    written = {minute(t) for t in clock_times(text)}
    return value if value is not None and value in written else None


def borne_place(place: str, text: str) -> str:
    """``place`` when ``text`` names it (letter case aside), else ""."""
    cleaned = place.strip().strip("\"'“”「」").strip()
    if len(cleaned) < 2 or cleaned.casefold() not in text.casefold():
        return ""
    return cleaned


@dataclass
class Reader:
    """Asks one seat's model the narrow questions; a failed reading is None (counted)."""

    caller: Caller
    lang: str
    failures: int = 0

    @classmethod
    def of(cls, caller: Caller) -> Reader:
        """A reader on ``caller``'s model, deterministic and unseeded (shareable)."""
        fixed = Caller(caller.model, caller.seat, caller.lang, seed=None, temperature=0.0,
                       attempts=2, object_tokens=READ_TOKENS)
        return cls(fixed, caller.lang)

    async def about(self, text: str, person: str, victim: str, source: str
                    ) -> Finding | None:
        """What ``text`` says of ``person``: a motive, the weapon, where they were, or None
        (nothing, or no usable reply). Where they were is a second question, asked only
        then: with the place and times in the first, the 1.5B model read far more texts
        as whereabouts (a will, a list of who had a key)."""
        asked = render("detective", "read_text", self.lang, text=text, person=person,
                       victim=victim)
        reading = await self._ask(READ, victim, asked, TextReading)
        if not isinstance(reading, TextReading) or reading.fact == "none":
            return None
        if reading.fact != "whereabouts":
            return Finding(person, reading.fact, text, source)
        asked = render("detective", "read_place", self.lang, text=text, person=person)
        where = await self._ask(PLACE, victim, asked, place_schema(written_times(text)))
        if not isinstance(where, PlaceReading):
            return None
        place = borne_place(where.place, text)
        start, end = borne_time(where.start, text), borne_time(where.end, text)
        if not place and start is None:
            return None
        return Finding(person, "whereabouts", text, source, place, start, end)

    async def death(self, text: str, victim: str) -> DeathFinding | None:
        """When ``text`` says ``victim`` was alive, or dead by and where found; None when it
    says neither."""
        asked = render("detective", "read_death", self.lang, text=text, victim=victim)
        reading = await self._ask(DEATH, victim, asked, death_schema(written_times(text)))
        if not isinstance(reading, DeathReading) or reading.state == "none":
            return None
        time = borne_time(reading.time, text)
        dead = reading.state == "dead"
        found = DeathFinding(victim, text, None if dead else time, time if dead else None,
                             borne_place(reading.place, text) if dead else "")
        if found.alive_at is None and found.dead_by is None and not found.found_in:
            return None
        return found

    async def _ask(self, purpose: str, victim: str, asked: str,
                   schema: type[TextReading | PlaceReading | DeathReading]
                   ) -> TextReading | PlaceReading | DeathReading | None:
        """The question follows the text it is about (a small model answers a question
        asked before the text far worse: measured, docs/agents/detective.md)."""
        system = render("detective", "read_system", self.lang, victim=victim)
        try:
            return await self.caller.structured(purpose, chat(asked, system), schema)
        except ModelError:
            self.failures += 1
            return None
