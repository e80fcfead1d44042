"""The conversation as the pages draw it: each event's lines (``engine.narration``, as at the
terminal) with who said it, in their colour, whether it is the reader's own, and whether
only some seats saw it; and the clue cards a seat has seen."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from jubensha.engine.events import (
    Accused,
    ClueRevealed,
    Event,
    GameEnded,
    Investigated,
    Spoke,
    VoteCast,
)
from jubensha.engine.narration import describe
from jubensha.web.roster import colour_numbers


class Entry(BaseModel):
    """One line of the timeline."""

    index: int
    style: str
    text: str
    speaker: str = ""
    tag: str = ""
    colour: int | None = None
    """The speaker's palette number (``roster.PALETTE``), when a seat speaks."""
    mine: bool = False
    private: bool = False
    only_me: bool = False


def author(event: Event) -> str | None:
    """The seat that made ``event`` happen, if a seat did."""
    if isinstance(event, Spoke):
        return event.speaker
    if isinstance(event, Accused):
        return event.accuser
    if isinstance(event, Investigated):
        return event.seat
    if isinstance(event, VoteCast):
        return event.voter
    return None


def timeline(events: Sequence[Event], lang: str, seats: Sequence[str],
             me: str | None = None) -> list[Entry]:
    """The lines of ``events`` for a reader at seat ``me`` (None: a spectator or the
    review); ``seats`` (the script's characters in order) choose the colours. The end of
    the game (the votes, who was eliminated, the murderer, the winner, the truth) is left
    to the ending panel every page shows once the game has ended: it is told once."""
    numbers = colour_numbers(seats)
    entries = []
    for event in events:
        if isinstance(event, GameEnded):
            continue
        who = author(event)
        private = event.audience != "public"
        only_me = private and me is not None and event.audience == [me]
        for line in describe(event, lang):
            entries.append(Entry(
                index=event.index, style=line.style, text=line.text, speaker=line.speaker,
                tag="" if only_me else line.tag, colour=numbers.get(who) if who else None,
                mine=who is not None and who == me, private=private, only_me=only_me))
    return entries


class Card(BaseModel):
    """A clue card as the seat page shows it."""

    title: str
    text: str
    caption: str = ""
    location: str = ""
    found_by: str = ""
    only_me: bool = False


def cards(clues: Sequence[ClueRevealed], me: str | None) -> list[Card]:
    """The clue cards in the order they were revealed, each once."""
    out, shown = [], set()
    for clue in clues:
        if clue.clue_id in shown:
            continue
        shown.add(clue.clue_id)
        out.append(Card(title=clue.title or clue.clue_id, text=clue.text,
                        caption=clue.caption or "", location=clue.location or "",
                        found_by=clue.found_by or "",
                        only_me=me is not None and clue.audience == [me]))
    return out
