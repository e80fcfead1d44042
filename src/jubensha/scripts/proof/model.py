"""The proof a generated mystery carries in ``truth.proof``: the world's vocabulary, every
fact the solver used with the text that states it and where the game reveals that text, the
verdict on each candidate answer, and the deciding source. ``proof.check`` re-checks it
against the script's own texts (docs/generated.md describes each field)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

FactKind = Literal["at", "alone", "alive", "dead", "scene", "weapons", "used", "unused",
                   "access", "motive"]
Reason = Literal["motive", "opportunity", "means", "contradiction"]
Where = Literal["background", "act", "clue", "timeline", "act_sheet"]
Level = Literal["easy", "medium", "hard"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FactSource(_Model):
    """Where the game reveals a fact: the public background or an act's public text, a clue
    card, or what a character can say (an entry of its timeline, or its sheet of an act).
    A character's words, and a card a character holds, count only when that character is
    not a murderer of the answer being weighed: a murderer may lie or keep a card back."""

    where: Where
    clue: str | None = Field(None, description="The clue's id (where: clue).")
    character: str | None = Field(None, description="The character (timeline, act_sheet).")
    index: int | None = Field(None, description="Timeline entry (0-based) or act number.")

    def key(self) -> str:
        """One string per source, for grouping facts by what reveals them."""
        return ":".join(str(part) for part in (self.where, self.clue, self.character,
                                               self.index) if part is not None)


class ProofFact(_Model):
    """One fact, as the solver reads it and as a sentence of the script states it."""

    id: str
    kind: FactKind
    who: str | None = Field(None, description="A character (at, alone, motive).")
    place: str | None = Field(None, description="at, alone, scene.")
    item: str | None = Field(None, description="used, unused, access.")
    start: str | None = Field(None, description="HH:MM: from (at, alone), seen alive at "
                              "(alive), dead before (dead).")
    end: str | None = Field(None, description="HH:MM, exclusive (at, alone).")
    people: list[str] = Field(default_factory=list, description="Who could reach the item "
                              "(access).")
    items: list[str] = Field(default_factory=list, description="The only objects that "
                             "could have made the wound (weapons).")
    detail: str | None = Field(None, description="The motive's kind (motive).")
    source: FactSource
    text: str = Field(description="The sentence of the source that states the fact.")


class ProofWorld(_Model):
    """The vocabulary the facts speak of: the clock of the evening in slots, the places,
    the objects that could have been the weapon."""

    victim: str
    scene: str
    places: list[str] = Field(min_length=1, max_length=100)
    items: list[str] = Field(min_length=1, max_length=100)
    start: str = Field(description="HH:MM of the first slot.")
    step_minutes: int = Field(ge=1, le=120)
    slots: int = Field(ge=1, le=200)
    murderers: int = Field(1, ge=1, le=3, description="How many murderers the rules say.")


class Exclusion(_Model):
    """Why a candidate answer cannot be the truth, and the facts that together show it
    (none for a missing motive: the rules say the murderer's motive is shown)."""

    reason: Reason
    facts: list[str] = Field(default_factory=list)


class Verdict(_Model):
    candidate: list[str] = Field(description="The murderers this answer names.")
    consistent: bool
    weapon: str | None = Field(None, description="For the consistent answer: the weapon.")
    exclusions: list[Exclusion] = Field(default_factory=list)
    facts: list[str] = Field(default_factory=list, description="For the consistent answer: "
                             "the facts that show its motive, means and opportunity.")


class Deciding(_Model):
    """The source without which the answer is no longer unique, and who it leaves open."""

    source: FactSource
    rivals: list[list[str]] = Field(description="The answers also consistent without it.")


class Knobs(_Model):
    """The difficulty asked for and what the written mystery measures."""

    level: Level
    combine: int = Field(description="Most sources one exclusion has to combine.")
    suspects: int = Field(description="Innocent characters with both a motive and access "
                          "to the weapon.")
    misleading: int = Field(description="Clues that point at an innocent character.")
    pointers: int = Field(description="Clues that point at a murderer by name.")
    decider: Literal["act", "later_act", "investigation", "testimony"] = Field(
        description="Where the deciding source lies.")


class Proof(_Model):
    version: Literal[1] = 1
    world: ProofWorld
    answer: list[str] = Field(description="The murderers the facts prove.")
    weapon: str
    facts: list[ProofFact] = Field(max_length=2_000)
    verdicts: list[Verdict] = Field(max_length=2_000)
    deciding: Deciding
    knobs: Knobs
