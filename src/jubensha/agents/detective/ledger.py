"""Internal.

The detective's evidence ledger: which texts point at which seat, and how strongly.

Every entry is one text (a clue, a sentence of the seat's own sheet, something another
seat said, an accusation) pointing at one seat. Its weight is the ledger's weight for
its kind times how much the text has to do with the crime (``Relevance``) for the kinds
that depend on it. A seat's suspicion is the sum of its entries; the entry that adds most
is the reason the detective gives for a vote and the topic of its questions.

Kinds (weights in ``DetectiveConfig``):

- ``clue_name``: a revealed clue names the seat (a full name or a short form of it);
- ``clue_link``: a clue is close to the seat's public description (the cook and the
  floured rolling pin); each clue's closeness is shared among the seats, so a clue close
  to everyone points at no one;
- ``own``: a sentence of the own sheet names the seat;
- ``heard``: another seat's words name the seat;
- ``told``: the seat's own words;
- ``accused``: a public accusation of the seat (not scaled by relevance);
- ``alibi``: the own sheet puts the seat in the seat's company near the time of death
  (a negative weight, not scaled).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from jubensha.agents.detective.config import DetectiveConfig
from jubensha.agents.detective.relevance import Relevance

SCALED = ("own", "heard", "told", "clue_name")
"""Kinds whose weight is scaled by the text's relevance to the crime."""
LINK_SHARPNESS = 0.02
"""Temperature of the softmax that shares a clue's closeness among the seats' descriptions."""


@dataclass
class Entry:
    kind: str
    text: str
    seat: str
    source: str = ""
    strength: float = 1.0
    relevance: float = 1.0

    def points(self, config: DetectiveConfig) -> float:
        scale = self.relevance if self.kind in SCALED else 1.0
        return float(getattr(config, self.kind)) * self.strength * scale


@dataclass
class Ledger:
    """Entries per seat; ``refresh`` rescores them when the crime's evidence changes."""

    me: str
    seats: list[str]
    profiles: dict[str, str]
    relevance: Relevance
    config: DetectiveConfig
    entries: list[Entry] = field(default_factory=list)

    def add(self, kind: str, text: str, about: Sequence[str], source: str = "",
            strength: float = 1.0) -> None:
        for seat in about:
            if seat != self.me and seat in self.seats:
                self.entries.append(Entry(kind, text, seat, source, strength))

    async def add_clue_links(self, text: str, source: str) -> None:
        """``clue_link`` entries: the clue's closeness to each seat's description, shared
        among the seats by a sharp softmax (no embedder: none)."""
        cache = self.relevance.cache
        named = [s for s in self.seats if self.profiles.get(s)]
        if cache is None or len(named) < 2:
            return
        found = await cache.vectors([text, *(self.profiles[s] for s in named)])
        closeness = found[1:] @ found[0]
        shares = np.exp((closeness - closeness.max()) / LINK_SHARPNESS)
        shares /= shares.sum()
        for seat, share in zip(named, shares, strict=True):
            self.add("clue_link", text, [seat], source, float(share))

    async def refresh(self) -> None:
        scored = [e for e in self.entries if e.kind in SCALED]
        values = await self.relevance.scores([e.text for e in scored])
        for entry, value in zip(scored, values, strict=True):
            entry.relevance = value

    def suspicion(self, candidates: Sequence[str]) -> list[tuple[str, float]]:
        """Candidates (never this seat) from most to least suspicious; ties keep the
        candidates' order."""
        totals = dict.fromkeys([c for c in candidates if c != self.me], 0.0)
        for entry in self.entries:
            if entry.seat in totals:
                totals[entry.seat] += entry.points(self.config)
        ranked = sorted(enumerate(totals.items()), key=lambda item: (-item[1][1], item[0]))
        return [(name, round(score, 4)) for _, (name, score) in ranked]

    def reasons(self, seat: str, count: int = 1,
                kinds: Sequence[str] | None = None) -> list[Entry]:
        """The entries that add most to ``seat``'s suspicion, strongest first."""
        mine = [e for e in self.entries if e.seat == seat and e.points(self.config) > 0
                and (kinds is None or e.kind in kinds)]
        mine.sort(key=lambda e: -e.points(self.config))
        unique: list[Entry] = []
        for entry in mine:
            if all(entry.text != kept.text for kept in unique):
                unique.append(entry)
        return unique[:count]
