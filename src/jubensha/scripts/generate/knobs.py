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
    """Share of the innocent characters with a motive and the means, among those not kept
    from the weapon (at least one)."""
    means_out: int
    """Innocent characters with a motive but no way to reach the weapon."""
    twins: int
    """Other objects that could have made the same wound (0 or 1)."""
    used_trace: bool
    """Whether the weapon's own traces are a card too (hidden at a place, maybe late),
    beside the card that clears its twin."""
    pointers: int
    """Clues that name the murderer beside the crime: a belonging at the scene, a witness
    who saw the murderer go in, the weapon hidden among the murderer's things."""
    misleading: int
    """Innocent characters who were at the scene before the time of death, each named by
    a belonging found there and by a witness."""
    finder: bool
    """Whether every sheet names who found the body (a name beside the crime)."""
    decider: Decider
    """Where the deciding source lies: a public clue (of act 1, or of the last act), a clue
    found by investigating a place, or a character's words (a question to the right
    person)."""
    located: float
    """Share of the other key clues hidden at places (found by investigating)."""


KNOBS: dict[Level, Knobs] = {
    "easy": Knobs("easy", window="public", suspects=0.0, means_out=0, twins=0,
                  used_trace=False, pointers=3, misleading=0, finder=False, decider="act",
                  located=0.0),
    "medium": Knobs("medium", window="half", suspects=0.5, means_out=1, twins=1,
                    used_trace=False, pointers=1, misleading=1, finder=False,
                    decider="investigation", located=0.4),
    "hard": Knobs("hard", window="hidden", suspects=1.0, means_out=1, twins=1,
                  used_trace=True, pointers=0, misleading=3, finder=True, decider="testimony",
                  located=0.7),
}


def knobs(level: Level, acts: int) -> Knobs:
    """The knobs of ``level``; with several acts the easy deciding clue comes in the last."""
    chosen = KNOBS[level]
    if chosen.decider == "act" and acts > 1:
        return Knobs(**{**chosen.__dict__, "decider": "later_act"})
    return chosen
