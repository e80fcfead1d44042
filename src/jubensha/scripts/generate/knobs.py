"""What the difficulty levels change: what the deduction needs, never who is named where.
Every character has a motive, a belonging found and as many mentions as anyone; a level
sets how many sources one exclusion has to combine (the time of death's two ends), whether
the murderer's lie is caught in one step or only by elimination, how many innocent
visitors to the scene hide their visit (red herrings that survive one step), objects of
the weapon's kind to tell apart, and where the deciding source lies.
The values were chosen on seeds 0-99 of each level (docs/generated.md has the figures)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from jubensha.scripts.proof.model import Level

Window = Literal["public", "half", "hidden"]
Caught = Literal["joined", "seen", "no"]
Decider = Literal["act", "later_act", "investigation", "testimony"]
LEVELS: tuple[Level, ...] = ("easy", "medium", "hard")


@dataclass(frozen=True)
class Knobs:
    level: Level
    window: Window
    """public: the background gives both ends of the time of death; half: it gives when the
    victim was last seen, a clue gives the other end; hidden: a clue found by investigating
    where the victim was last seen gives one end, one found at the scene in the last act
    the other."""
    means_out: int
    """Innocent characters with a motive but no way to reach the weapon (everyone else
    with a motive is cleared only by an alibi)."""
    twins: int
    """Other objects that could have made the same wound (0 or 1)."""
    used_trace: bool
    """Whether the weapon's own traces are a card too (hidden at a place, maybe late),
    beside the card that clears its twin."""
    caught: Caught
    """Whether witnesses saw the murderer go into the scene at the murder, the very time
    the murderer's own account puts them elsewhere: "joined", going in where the victim
    was (one step), "seen", going in (set against the time of death: two steps), or
    "no": nobody saw it, and only eliminating everyone else is left."""
    witnesses: int
    """How many saw the murderer go in at the murder (when ``caught``)."""
    visit_witnesses: int
    """How many saw each visitor who hides the visit go in."""
    visitors: float
    """Share of the innocent characters (the finder aside) seen at the scene before the
    time of death, each there for a secret of their own, each with a belonging found
    there: red herrings. As many as the murderer's traces make them look like the
    murderer to anyone who counts instead of reasoning."""
    hidden_visits: int
    """How many visitors leave the visit out of their own account: a lie by omission that
    looks like the murderer's until the times are combined."""
    traces: bool
    """Whether those who were in the scene (the visitors, the murderer) left a belonging
    there: red herrings beside the visits themselves."""
    finder: bool
    """Whether every sheet names who found the body (a name beside the crime)."""
    quiet: bool
    """Whether the sheets keep quiet about the victim and the death (no quarrel overheard,
    no passing sight of the victim, an alarm raised rather than a body found): the
    murderer, who never speaks of either, then sounds like everyone else, and only the
    facts tell them apart."""
    decider: Decider
    """Where the deciding source lies: a public clue (of act 1, or of the last act), a clue
    found by investigating a place, or a character's words (a question to the right
    person)."""
    located: float
    """Share of the other key clues hidden at places (found by investigating)."""


KNOBS: dict[Level, Knobs] = {
    "easy": Knobs("easy", window="public", means_out=0, twins=0, used_trace=False,
                  caught="joined", witnesses=3, visit_witnesses=1, visitors=1.0, hidden_visits=0, traces=False, finder=False, quiet=False, decider="act",
                  located=0.0),
    "medium": Knobs("medium", window="half", means_out=1, twins=1, used_trace=False,
                    caught="seen", witnesses=1, visit_witnesses=1, visitors=1.0, hidden_visits=1, traces=True, finder=False, quiet=False,
                    decider="investigation", located=0.4),
    "hard": Knobs("hard", window="hidden", means_out=1, twins=1, used_trace=True,
                  caught="no", witnesses=0, visit_witnesses=2, visitors=1.0, hidden_visits=10, traces=True, finder=True, quiet=True,
                  decider="testimony", located=0.7),
}


def knobs(level: Level, acts: int) -> Knobs:
    """The knobs of ``level``; with several acts the easy deciding clue comes in the last."""
    chosen = KNOBS[level]
    if chosen.decider == "act" and acts > 1:
        return Knobs(**{**chosen.__dict__, "decider": "later_act"})
    return chosen
