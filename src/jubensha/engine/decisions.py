"""What the engine asks a seat to decide, and the actions a seat answers with.

A procedure stage sends a ``Decision`` to a seat's agent; the agent returns the matching
``Action``. The engine validates the action (a real seat, an existing location, a question
count) and substitutes a safe fallback, recorded as a ``Failure`` event, when it is not.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from jubensha.engine.events import SpeechKind, Spoke


class _Decision(BaseModel):
    stage: str = ""
    round: int | None = None


class Speak(_Decision):
    """Say something: introduce yourself, answer a question, make a statement, share clues,
    or state your reasoning. ``question`` is set when answering."""

    type: Literal["speak"] = "speak"
    kind: SpeechKind
    prompt: str = Field("", description="What the host asks for, in the game's language.")
    question: Spoke | None = None


class AskQuestions(_Decision):
    """Choose one seat among ``candidates`` and ask it ``count`` questions."""

    type: Literal["ask"] = "ask"
    candidates: list[str]
    count: int = 1
    victim: str | None = None


class TakeTurn(_Decision):
    """An open-conversation turn (MIRAGE): ask one seat a question or investigate a place."""

    type: Literal["turn"] = "turn"
    candidates: list[str]
    locations: list[str]


class RateStatement(_Decision):
    """Give trust and doubt, 0 to 2 each, to another seat's statement."""

    type: Literal["rate"] = "rate"
    statement: Spoke


class Accuse(_Decision):
    type: Literal["accuse"] = "accuse"
    candidates: list[str]


class CastVote(_Decision):
    """Vote for the seat you think killed ``victim`` (or the murderer when there is one
    victim); ``accused`` lists the accusations made, when the procedure has them."""

    type: Literal["vote"] = "vote"
    candidates: list[str]
    victim: str | None = None
    accused: list[str] = Field(default_factory=list)


Decision = Annotated[
    Speak | AskQuestions | TakeTurn | RateStatement | Accuse | CastVote,
    Field(discriminator="type"),
]


class Speech(BaseModel):
    type: Literal["speech"] = "speech"
    text: str


class Questions(BaseModel):
    type: Literal["questions"] = "questions"
    target: str
    questions: list[str]


class Investigate(BaseModel):
    type: Literal["investigate"] = "investigate"
    location: str
    statement: str = Field("", description="What the seat says to everyone as it searches "
                                           "(MIRAGE: its reasoning is public).")


class Rating(BaseModel):
    type: Literal["rating"] = "rating"
    trust: int = Field(ge=0, le=2)
    doubt: int = Field(ge=0, le=2)


class Accusation(BaseModel):
    type: Literal["accusation"] = "accusation"
    target: str | None = Field(None, description="None: accuse no one.")
    reason: str = ""


class Vote(BaseModel):
    type: Literal["vote"] = "vote"
    target: str | None = Field(None, description="None is an abstention.")
    reason: str = ""


Action = Annotated[
    Speech | Questions | Investigate | Rating | Accusation | Vote,
    Field(discriminator="type"),
]
