"""What the difficulty levels change. Each knob is something a player feels: how many
sources one exclusion has to combine, how many innocent characters had both a motive and
the means (so only their alibis clear them), objects of the weapon's kind to tell apart,
clues that point at an innocent or at the murderer, and where the deciding source lies.
The values were chosen on seeds 0-99 of each level (docs/generated.md has the figures)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from jubensha.scripts.proof.model import Level

Window = Literal["public", "half", "hidden"]
Decider = Literal["act", "later_act", "investigation", "testimony"]
LEVELS: tuple[Level, ...] = ("easy", "medium", "hard")


@dataclass(frozen=True)
class Knobs:
    level: Level
    window: Window
    """public: the background gives both ends of the time of death; half: it gives when the
    victim was last seen, a clue gives the other end; hidden: a witness's words give one end
    and a clue found by investigating the other."""
    suspects: float
    """Share of the innocent characters who had a motive and the means (at least one)."""
    means_out: int
    """Innocent characters with a motive but no way to reach the weapon."""
    twins: int
    """Other objects that could have made the same wound."""
    split: bool
    """Alibis over the time of death pieced together from two witnesses."""
    pointers: int
    """Clues that name the murderer beside the crime."""
    misleading: int
    """Clues that name an innocent character beside the crime."""
    decider: Decider
    """Where the deciding source lies: a public clue (of act 1, or of the last act), a clue
    found by investigating a place, or a character's words (a question to the right
    person)."""
    located: float
    """Share of the other key clues hidden at places (found by investigating)."""


KNOBS: dict[Level, Knobs] = {
    "easy": Knobs("easy", window="public", suspects=0.0, means_out=0, twins=0, split=False,
                  pointers=2, misleading=0, decider="act", located=0.0),
    "medium": Knobs("medium", window="half", suspects=0.5, means_out=1, twins=1, split=False,
                    pointers=1, misleading=1, decider="investigation", located=0.4),
    "hard": Knobs("hard", window="hidden", suspects=1.0, means_out=1, twins=2, split=True,
                  pointers=0, misleading=3, decider="testimony", located=0.7),
}


def knobs(level: Level, acts: int) -> Knobs:
    """The knobs of ``level``; with several acts the easy deciding clue comes in the last."""
    chosen = KNOBS[level]
    if chosen.decider == "act" and acts > 1:
        return Knobs(**{**chosen.__dict__, "decider": "later_act"})
    return chosen
