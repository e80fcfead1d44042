"""Internal.

What a detective seat asks its model, and when: the texts it has seen, queued as they
arrive, read just before a decision needs them.

A seat reads the texts it may see: the death's sentences of the background, every clue
card it is shown, what other seats say of what they know, and its own sheet's sentences
that name another seat. Each text is read once about each seat it concerns (the seats it
names, and a speaker about itself); the background's sentences about the death, and clue
cards and own sentences that name a victim and write a clock time, are also read for the
window of the death. Reading waits for a decision so that a seat asks
nothing it will not use, and the readings of one decision run side by side (the local
model decodes them together in its parallel slots). ``read_limit`` bounds a seat's
readings in a game; what is left unread is counted in the seat's ledger note.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from jubensha.agents.detective.case import Case, Weighed, Weights
from jubensha.agents.detective.readings import Reader
from jubensha.agents.extractive_text import NameForms, clock_times

PARALLEL = 4
"""Readings asked at once (the local model's parallel slots decode them together)."""


@dataclass
class Inquiry:
    """One seat's readings: queued texts, the case they add up to."""

    reader: Reader
    names: NameForms
    me: str
    victims: list[str]
    limit: int
    weights: Weights = field(default_factory=Weights)
    case: Case = field(init=False)
    queue: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    asked: set[tuple[str, str]] = field(default_factory=set)
    unread: int = 0

    def __post_init__(self) -> None:
        self.case = Case(self.weights)

    @property
    def victim_names(self) -> str:
        joiner = "、" if self.reader.lang == "zh" else " and "
        return joiner.join(self.victims)

    def death(self, text: str, *, known: bool = False) -> None:
        """Queue ``text`` to be read for the window of each victim it names, when it writes
        a clock time; ``known``: a text about the death read whatever it writes (the
        background's), for the first victim when it names none."""
        named = self.names.mentioned(text, self.victims)
        if not known and (not named or not clock_times(text)):
            return
        for victim in named or self.victims[:1]:
            self._queue(("death:" + victim, text), self._read_death(text, victim))

    def text(self, text: str, persons: Sequence[str], source: str) -> None:
        """Queue ``text`` (told by ``source``) to be read about each of ``persons``."""
        for person in dict.fromkeys(persons):
            if person != self.me:
                self._queue((person, text), self._read_text(text, person, source))

    def _queue(self, key: tuple[str, str], read: Callable[[], Awaitable[None]]) -> None:
        if key in self.asked:
            return
        self.asked.add(key)
        if len(self.asked) > self.limit:
            self.unread += 1
            return
        self.queue.append(read)

    def _read_text(self, text: str, person: str, source: str
                   ) -> Callable[[], Awaitable[None]]:
        async def read() -> None:
            found = await self.reader.about(text, person, self.victim_names, source)
            if found is not None:
                self.case.findings.append(found)
        return read

    def _read_death(self, text: str, victim: str) -> Callable[[], Awaitable[None]]:
        async def read() -> None:
            found = await self.reader.death(text, victim)
            if found is not None:
                self.case.deaths.append(found)
        return read

    async def settle(self) -> None:
        """Read every queued text, ``PARALLEL`` at a time."""
        while self.queue:
            batch, self.queue = self.queue[:PARALLEL], self.queue[PARALLEL:]
            await asyncio.gather(*(read() for read in batch))

    async def rank(self, candidates: Sequence[str], victim: str | None,
                   tiebreak: Mapping[str, float]) -> list[Weighed]:
        """The candidates, most suspicious first, after reading what is queued."""
        await self.settle()
        return self.case.weigh(candidates, victim or self.victims[0], tiebreak)
