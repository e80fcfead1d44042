"""The data model of a murder mystery (剧本杀 script).

One model holds what the four founding papers' datasets hold (ThinkThrice JSON, WellPlay,
Conan, WhodunitBench, MIRAGE) so that importers never drop a field: whatever has no typed
home goes into the ``extra`` mapping of the object it belongs to. Cross-reference checks
(names that must exist, victims that need a killer) live in ``validation.py`` so that a
model can be built from imperfect real data and then reported on.
"""

from __future__ import annotations

import unicodedata
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from jubensha.scripts.proof.model import Proof

Language = Literal["en", "zh"]
Side = Literal["murderer", "civilian"]
PUBLIC = "public"
"""Holder value of a clue that every seat may see once it is released."""

ChoiceCategory = Literal["objective", "reasoning", "relations"]
CATEGORY_POINTS: dict[str, int] = {"objective": 10, "reasoning": 5, "relations": 2}
"""WellPlay's points per question category (PLAYER* paper, section 3)."""

MAX_CHARACTERS = 50
MAX_VICTIMS = 50
MAX_CLUES = 2_000
MAX_ACTS = 50
MAX_QUESTIONS = 5_000
MAX_TEXT_CHARS = 5_000_000
"""Count limits no real script reaches (the largest of the 160 bundled and public-dataset
scripts: 13 characters, 5 victims, 45 clues, 7 acts, 488 choice and 72 factual questions,
347,000 characters of text), checked when a script is read: a script of 10,000 characters validated and then made
``play`` run out of memory. See docs/script-format.md."""

Aspect = Literal["who", "how", "why", "where", "when", "suspect", "relationship", "other"]
OpenKind = Literal["motive", "method", "other"]


def name_key(name: str) -> str:
    """A name as names are compared: NFKC-normalised, case-folded, without spaces or
    invisible characters (zero-width spaces, joiners, direction marks, controls). "TOM
    HALE", " Tom Hale" and "Tom\u200bHale" are one name; a name whose key is empty is none."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return "".join(char for char in folded
                   if not char.isspace() and unicodedata.category(char)[0] not in "CZ")


class _Model(BaseModel):
    """Strict about unknown keys so a typo in a hand-written script is an error, not lost data."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class TimelineEntry(_Model):
    """One line of a character's timeline of the day of the crime."""

    time: str | None = None
    text: str


class Relationship(_Model):
    """How a character relates to another person (labels as in Conan, e.g. "Hate of X")."""

    other: str
    labels: list[str] = Field(default_factory=list)
    description: str = ""


class ActSheet(_Model):
    """What one character reads and aims for in one act of a phased script."""

    act: int = Field(ge=1)
    text: str = ""
    goals: list[str] = Field(default_factory=list)
    performance: str = ""
    notes: dict[str, str] = Field(
        default_factory=dict,
        description="Other per-act sections of the source (e.g. MIRAGE's Relationship or "
        "Ability text when it changes between stages).",
    )


class Character(_Model):
    """A playable role: its private script and what it must and must not do."""

    name: str
    aliases: list[str] = Field(
        default_factory=list,
        description="Other spellings used for this character in the source (question sets "
        "of real datasets do not always use the main name).",
    )
    age: str | None = None
    gender: str | None = None
    description: str = Field("", description="Public description, known to every player.")
    side: Side = "civilian"
    mission: str = Field("", description="The role's task (角色任务), e.g. 'find the killer'.")
    final_goals: list[str] = Field(default_factory=list)
    story: str = Field("", description="The private script: the character's story.")
    acts: list[ActSheet] = Field(default_factory=list, max_length=MAX_ACTS)
    timeline: list[TimelineEntry] = Field(default_factory=list)
    secrets: list[str] = Field(
        default_factory=list, description="Things the character must not volunteer."
    )
    needs_to_know: list[str] = Field(default_factory=list)
    relationships: list[Relationship] = Field(default_factory=list)
    performance: str = Field("", description="Speaking style and how to play the role.")
    rules: list[str] = Field(default_factory=list, description="Other rules for this role.")
    killed: list[str] = Field(default_factory=list, description="Victims this character killed.")
    extra: dict[str, Any] = Field(default_factory=dict)

    def act_sheet(self, act: int) -> ActSheet | None:
        """The character's sheet for ``act`` (1-based), if the script is phased."""
        return next((sheet for sheet in self.acts if sheet.act == act), None)

    @property
    def all_names(self) -> list[str]:
        return [self.name, *self.aliases]


class Victim(_Model):
    name: str
    description: str = ""
    extra: dict[str, Any] = Field(default_factory=dict)


class Clue(_Model):
    """A clue card. ``holder`` is a character name or ``public``; a clue with a ``location``
    is hidden there until someone investigates it (MIRAGE's Investigate action)."""

    id: str
    title: str = ""
    text: str
    image: str | None = Field(None, description="Image path, relative to the script file.")
    caption: str | None = Field(None, description="Text for models that cannot see images.")
    holder: str = PUBLIC
    location: str | None = None
    act: int = Field(1, ge=1, description="The act in which the clue is released.")
    key: bool = False
    misleading: bool = False
    extra: dict[str, Any] = Field(default_factory=dict)


class Act(_Model):
    """One phase of the game: its number, title and the text the host reads out."""

    number: int = Field(ge=1)
    title: str = ""
    public_text: str = ""


class Kill(_Model):
    """Who killed one victim, and how, why, when and where."""

    victim: str
    killers: list[str] = Field(min_length=1)
    method: str = ""
    motive: str = ""
    time: str = ""
    place: str = ""


class Truth(_Model):
    murderers: list[str]
    kills: list[Kill] = Field(default_factory=list)
    method: str = ""
    motive: str = ""
    time: str = ""
    place: str = ""
    narrative: str = Field("", description="The full story of what happened, as prose.")
    reasoning_chain: list[str] = Field(
        default_factory=list, description="Ordered deduction steps from clues to the answer."
    )
    solution: str = Field(
        "", description="A short written solution showing the case can be deduced."
    )
    killed_offstage: list[str] = Field(
        default_factory=list,
        description="Victims no character at the table killed (an earlier death, a killer "
        "outside the cast, as in WellPlay's Ghost Revenge); they need no Kill.",
    )
    proof: Proof | None = Field(
        None, description="The proof that exactly one answer is consistent with what the "
        "game reveals (generated mysteries; `scripts validate` re-checks it).")


class FactualQuestion(_Model):
    """A question whose answer is a fact stated in one character's script (ThinkThrice)."""

    id: str
    question: str
    answer: str
    source: str = Field("", description="The sentence of the script the answer comes from.")
    character: str | None = Field(None, description="Whose script the fact comes from.")


class ChoiceQuestion(_Model):
    """A multiple-choice question (WellPlay, ThinkThrice inferential, WhodunitBench)."""

    id: str
    question: str
    options: dict[str, str] = Field(description="Option letter (a, b, ...) to option text.")
    answer: list[str] = Field(default_factory=list, description="Correct option letters.")
    multiple: bool = Field(False, description="True when several options may be correct.")
    category: ChoiceCategory | None = None
    points: int | None = Field(None, description="Overrides the category's WellPlay points.")
    aspect: Aspect | None = None
    steps: int | None = Field(None, ge=1, description="Reasoning steps needed to answer.")
    rationale: str = ""
    asked_of: str | None = Field(
        None, description="The character who must answer it; None: any player or observer."
    )
    set: str = Field("default", description="Which question set it belongs to.")
    image: str | None = None
    source: str = ""

    @property
    def worth(self) -> int:
        """Points awarded when correct: explicit points, else the category's, else 1."""
        if self.points is not None:
            return self.points
        return CATEGORY_POINTS.get(self.category or "", 1)

    @model_validator(mode="after")
    def _normalise_letters(self) -> ChoiceQuestion:
        self.options = {key.strip().lower(): text for key, text in self.options.items()}
        self.answer = [letter.strip().lower() for letter in self.answer]
        return self


class OpenQuestion(_Model):
    """A free-answer question such as the motive or the method, judged against key points."""

    id: str
    kind: OpenKind = "other"
    question: str
    reference: str = ""
    key_points: list[str] = Field(default_factory=list)
    victim: str | None = None


class QuestionSets(_Model):
    factual: list[FactualQuestion] = Field(default_factory=list, max_length=MAX_QUESTIONS)
    choice: list[ChoiceQuestion] = Field(default_factory=list, max_length=MAX_QUESTIONS)
    open: list[OpenQuestion] = Field(default_factory=list, max_length=MAX_QUESTIONS)


class Evidence(_Model):
    """One sentence the truth derivation read, and what it added to a name's score."""

    rule: str = Field(description="The pattern that matched, e.g. 'named as the dead'.")
    source: str = Field("", description="Where the sentence was read.")
    text: str = Field("", description="The sentence (at most 400 characters).")
    weight: float = 0.0


class Candidate(_Model):
    """A person the truth derivation weighed for a fact, with its score and evidence."""

    name: str
    score: float
    confidence: float = Field(0.0, description="How clearly the evidence singles it out, 0-1.")
    derived: bool = False
    aliases: list[str] = Field(default_factory=list,
                               description="Other names the texts give the same person.")
    evidence: list[Evidence] = Field(default_factory=list,
                                     description="The strongest sentences, one per pattern.")


DerivationOrigin = Literal["text", "field", "file", "release"]


class Derivation(_Model):
    """Where an importer found a fact of the truth, so a reader can check it."""

    fact: str = Field(description="What was derived: 'murderers', 'victims', 'culprits_release'...")
    value: list[str] = Field(default_factory=list)
    source: str = Field("", description="The file it was read from, relative to the import.")
    evidence: str = Field("", description="The sentence it was read from (at most 400 chars).")
    method: str = Field("", description="How it was read, e.g. which phrasing matched.")
    origin: DerivationOrigin = Field(
        "text", description="text: weighed from the texts; field: a field of the source that "
        "states it; file: a truth file the user supplied; release: the release's own code.")
    confidence: float | None = Field(
        None, description="For a fact weighed from the texts: how clearly, 0-1.")
    candidates: list[Candidate] = Field(
        default_factory=list, description="The persons weighed, best first (text origin).")
    overridden_by: str = Field(
        "", description="The truth file whose answer replaced this one, if any.")


class Metadata(_Model):
    source: str = Field("original", description="Where the script comes from (dataset name).")
    source_path: str | None = None
    player_count: int | None = None
    has_truth: bool = True
    author: str = ""
    tags: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    derivations: list[Derivation] = Field(
        default_factory=list, description="How an importer derived the truth's facts."
    )
    extra: dict[str, Any] = Field(default_factory=dict)


class Script(_Model):
    """A whole mystery: public text, the roles, the clues, the acts, the truth and the tests."""

    id: str
    title: str
    language: Language
    background: str = Field("", description="The public story every player is told.")
    rules: str = Field("", description="The game-rule text read to every player.")
    victims: list[Victim] = Field(default_factory=list, max_length=MAX_VICTIMS)
    characters: list[Character] = Field(min_length=1, max_length=MAX_CHARACTERS)
    clues: list[Clue] = Field(default_factory=list, max_length=MAX_CLUES)
    acts: list[Act] = Field(default_factory=lambda: [Act(number=1)], max_length=MAX_ACTS)
    truth: Truth | None = None
    questions: QuestionSets = Field(default_factory=QuestionSets)
    metadata: Metadata = Field(default_factory=Metadata)
    extra: dict[str, Any] = Field(default_factory=dict)

    def character(self, name: str) -> Character:
        """The character called ``name`` (main name or alias); KeyError if there is none."""
        for character in self.characters:
            if name in character.all_names:
                return character
        raise KeyError(name)

    @property
    def names(self) -> list[str]:
        return [character.name for character in self.characters]

    @property
    def murderers(self) -> list[str]:
        """Murderers by the truth when there is one, else by the characters' sides."""
        if self.truth is not None and self.truth.murderers:
            return list(self.truth.murderers)
        return [c.name for c in self.characters if c.side == "murderer"]

    def clues_for_act(self, act: int) -> list[Clue]:
        return [clue for clue in self.clues if clue.act == act]

    @property
    def locations(self) -> list[str]:
        """Places that the Investigate action can search, in first-seen order."""
        return list(dict.fromkeys(c.location for c in self.clues if c.location))
