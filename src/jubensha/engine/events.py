"""What happens at the table, as typed events with an audience.

The engine alone creates events and decides who observes each one: ``audience`` is
``"public"`` or the list of seats (character names) that may see it. An empty list means
no seat sees it: it exists only in the run log (votes before the reveal, trust ratings,
failures). Spectator views that are not omniscient show public events only.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from jubensha.scripts.model import ActSheet

Audience = Literal["public"] | list[str]
SpeechKind = Literal[
    "introduction", "question", "answer", "statement", "clue_share", "reasoning", "accusation"
]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class _Event(BaseModel):
    index: int = -1
    """Position in the game's event stream; the engine assigns it when the event happens."""
    stage: str = ""
    round: int | None = None
    audience: Audience = "public"
    time: str = Field(default_factory=_now)

    def visible_to(self, seat: str) -> bool:
        return self.audience == "public" or seat in self.audience


class StageStarted(_Event):
    type: Literal["stage_started"] = "stage_started"
    kind: str
    title: str = ""


class HostSpoke(_Event):
    """The host addressing everyone (instructions) or one seat (a private prompt)."""

    type: Literal["host_spoke"] = "host_spoke"
    text: str
    to: str | None = None


class Spoke(_Event):
    """A seat said something: an introduction, a question, an answer, a statement..."""

    type: Literal["spoke"] = "spoke"
    speaker: str
    kind: SpeechKind
    text: str
    to: str | None = Field(None, description="The seat addressed (asked or answered).")
    reply_to: int | None = Field(None, description="Index of the question this answers.")


class ClueRevealed(_Event):
    """A clue card is shown to its audience (given by the host, or found by investigating)."""

    type: Literal["clue_revealed"] = "clue_revealed"
    clue_id: str
    title: str = ""
    text: str
    image: str | None = None
    caption: str | None = None
    location: str | None = None
    found_by: str | None = None


class Investigated(_Event):
    type: Literal["investigated"] = "investigated"
    seat: str
    location: str
    clue_ids: list[str] = Field(default_factory=list)
    clue_titles: list[str] = Field(default_factory=list, description="What people read of "
                                   "the clues found: their titles (logs before: none).")


class ActStarted(_Event):
    """A new act begins; ``sheet`` carries the seat's new text and goals (private events)."""

    type: Literal["act_started"] = "act_started"
    act: int
    public_text: str = ""
    sheet: ActSheet | None = None


class Rated(_Event):
    """One seat's trust and doubt (0, 1 or 2 each) in another seat's statement (MIRAGE)."""

    type: Literal["rated"] = "rated"
    rater: str
    speaker: str
    statement: int
    trust: int = Field(ge=0, le=2)
    doubt: int = Field(ge=0, le=2)


class Accused(_Event):
    type: Literal["accused"] = "accused"
    accuser: str
    accused: str | None
    reason: str = ""


class VoteCast(_Event):
    type: Literal["vote_cast"] = "vote_cast"
    voter: str
    target: str | None = Field(None, description="None is an abstention.")
    victim: str | None = None
    reason: str = ""


class VictimOutcome(BaseModel):
    victim: str | None
    tally: dict[str, int]
    eliminated: list[str]
    murderers: list[str]
    caught: bool


class GameEnded(_Event):
    """The reveal: the vote per victim, who the murderers were, and which side won."""

    type: Literal["game_ended"] = "game_ended"
    outcomes: list[VictimOutcome]
    winner: Literal["civilians", "murderers", "none"]
    truth: str = ""
    solution: bool = Field(True, description="False: the script records no solution, so "
                           "the vote names nobody as caught and nobody won.")


class Failure(_Event):
    """A seat's model failed after retries; the engine used ``fallback`` instead."""

    type: Literal["failure"] = "failure"
    seat: str
    purpose: str
    error: str
    fallback: str = ""
    details: dict[str, Any] = Field(default_factory=dict)


Event = Annotated[
    StageStarted | HostSpoke | Spoke | ClueRevealed | Investigated | ActStarted | Rated
    | Accused | VoteCast | GameEnded | Failure,
    Field(discriminator="type"),
]
