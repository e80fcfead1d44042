"""A round's ratings as the seat's form lays them out: the statements grouped under each
speaker (the name once, in the order they first spoke), each statement a line with what
kind of speech it was and its field number on the form (``trust{n}``, ``doubt{n}``: the
statement's place in the decision, which the answer is read back by)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from jubensha.engine.events import Spoke
from jubensha.engine.narration import labels, purpose_label
from jubensha.web.strings import text


class RatingLine(BaseModel):
    number: int
    """The statement's place in the decision: its fields are ``trust{n}`` and ``doubt{n}``."""
    kind: str
    """What it was, in the game's language ("asks Nora Vance", "answers", "introduction")."""
    text: str


class RatingGroup(BaseModel):
    speaker: str
    lines: list[RatingLine]


def rating_groups(statements: Sequence[Spoke], lang: str) -> list[RatingGroup]:
    """``statements`` under their speakers, each speaker once, in the order they spoke."""
    words = labels(lang)
    groups: dict[str, RatingGroup] = {}
    for number, spoke in enumerate(statements):
        kind = (text(lang, f"rate_{spoke.kind}", name=spoke.to)
                if spoke.to and spoke.kind in ("question", "answer")
                else purpose_label(spoke.kind, words))
        group = groups.setdefault(spoke.speaker, RatingGroup(speaker=spoke.speaker, lines=[]))
        group.lines.append(RatingLine(number=number, kind=kind, text=spoke.text))
    return list(groups.values())
