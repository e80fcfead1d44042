"""The exported formats: a record (one question with the text it is asked about) and the
manifest beside the records. Both are external formats other programs read, so they are
strict pydantic models with a version."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from jubensha.scripts.model import Language
from jubensha.scripts.proof.model import Level

FORMAT_VERSION = 1
"""Raised whenever a field changes meaning; a reader refuses a version it does not know."""
RECORDS = "questions.jsonl"
MANIFEST = "manifest.json"
View = Literal["table", "seat"]


class ExportError(Exception):
    """A set that cannot be written or read; the message names the file, the line or
    field, and the problem."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Record(_Strict):
    """One multiple-choice question and the text it is asked about. ``context`` holds
    only what players can read: no truth, no flag that marks a card as key or misleading,
    no side; ``answer`` is the only field that tells the solution."""

    id: str = Field(description="<script id>/<question id>, unique in the set.")
    script: str
    title: str
    source: str = Field(description="Where the mystery comes from: generated, wellplay, ...")
    language: Language
    level: str | None = Field(None, description="easy, medium or hard (generated only).")
    seed: int | None = Field(None, description="The generator's seed (generated only).")
    players: int = Field(ge=1)
    view: View = Field(description="table: what the whole table can learn (the story, the "
                       "cards, what each person tells); seat: what one character reads.")
    asked_of: str | None = Field(None, description="The character whose view it is (seat).")
    aspect: str | None = Field(None, description="who, how, why, when, relationship, ...")
    points: int = Field(1, ge=0, description="WellPlay's points for a right answer.")
    context: str = Field(min_length=1)
    question: str = Field(min_length=1)
    choices: list[str] = Field(min_length=2, max_length=26)
    answer: list[str] = Field(min_length=1, description="Letters of the right choices (A, "
                              "B, ...), in order.")
    multiple: bool = Field(False, description="More than one choice may be right.")

    @model_validator(mode="after")
    def _answer_in_choices(self) -> Record:
        letters = [chr(ord("A") + i) for i in range(len(self.choices))]
        strays = [a for a in self.answer if a not in letters]
        if strays:
            raise ValueError(f"answer {', '.join(strays)} is not one of the choices "
                             f"{letters[0]}-{letters[-1]}")
        if len(self.answer) > 1 and not self.multiple:
            raise ValueError("several answers for a single-choice question")
        return self


class Generated(BaseModel):
    """The request a generated mystery records in ``metadata.extra.generator``."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    seed: int = Field(ge=0)
    level: Level
    players: int = Field(ge=1)
    acts: int = Field(ge=1)
    version: int | None = None


class Origin(_Strict):
    """How to get one exported script again: the generator's request, or a file."""

    id: str
    source: str
    language: Language
    records: int = Field(ge=0)
    seed: int | None = Field(None, ge=0)
    level: Level | None = None
    players: int | None = Field(None, ge=1)
    acts: int | None = Field(None, ge=1)
    generator_version: int | None = Field(None, description="The generator's version.")
    path: str | None = Field(None, description="The script file (not generated).")
    fingerprint: str = Field(description="sha256 of the script's exported texts: a script "
                             "rebuilt from this entry must give the same.")


class Manifest(_Strict):
    """What a written set holds: its version, counts, the hash of the records file, and
    one entry per script (``runs batch`` plays the set from these)."""

    version: int = FORMAT_VERSION
    records: int = Field(ge=0)
    sha256: str = Field(description="sha256 of the records file, as written.")
    counts: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="Records by level, language, source and aspect.")
    scripts: list[Origin] = Field(default_factory=list)

    @model_validator(mode="after")
    def _known_version(self) -> Manifest:
        if self.version != FORMAT_VERSION:
            raise ValueError(f"version {self.version} is not {FORMAT_VERSION}, the one this "
                             "jubensha reads")
        return self
