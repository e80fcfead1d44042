"""What the engine asks a seat to decide, and the actions a seat answers with.

A procedure stage sends a decision to a seat's agent; the agent returns the matching
action. The engine validates the action (a real seat, an existing location, a question
count) and substitutes a safe fallback, recorded as a ``Failure`` event, when it is not.

The kinds of decision are open: each is a ``DecisionKind`` in ``DECISION_KINDS`` (its
decision model, the actions that answer it, its fallback, and how an agent whose
architecture has no method for it answers by default), and a stage plug-in adds its own
with ``register_decision``. ``Decision`` and ``Action`` name the built-in kinds.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from jubensha.engine.events import Event, SpeechKind, Spoke
from jubensha.registry import Registry, UnknownName, importing


class BaseDecision(BaseModel):
    """What every decision carries; a kind sets ``type`` with a ``Literal`` default, and
    an agent answers it with its method ``on_<type>``."""

    type: str
    stage: str = ""
    round: int | None = None


class BaseAction(BaseModel):
    """What every action carries; a kind sets ``type`` with a ``Literal`` default."""

    type: str


class Speak(BaseDecision):
    """Say something: introduce yourself, answer a question, make a statement, share clues,
    or state your reasoning. ``question`` is set when answering."""

    type: Literal["speak"] = "speak"
    kind: SpeechKind
    prompt: str = Field("", description="What the host asks for, in the game's language.")
    question: Spoke | None = None


class AskQuestions(BaseDecision):
    """Choose one seat among ``candidates`` and ask it ``count`` questions."""

    type: Literal["ask"] = "ask"
    candidates: list[str]
    count: int = 1
    victim: str | None = None


class TakeTurn(BaseDecision):
    """An open-conversation turn (MIRAGE): ask one seat a question or investigate a place."""

    type: Literal["turn"] = "turn"
    candidates: list[str]
    locations: list[str]


class RateStatement(BaseDecision):
    """Give trust and doubt, 0 to 2 each, to another seat's statement."""

    type: Literal["rate"] = "rate"
    statement: Spoke


class RateRound(BaseDecision):
    """Trust and doubt, 0 to 2 each, for each of several statements at once: what a
    person is asked instead of one ``RateStatement`` per statement (a form with every
    speaker of a round on one screen). An architecture without ``on_rate_round`` rates
    each statement as it would rate it alone."""

    type: Literal["rate_round"] = "rate_round"
    statements: list[Spoke]


class Accuse(BaseDecision):
    type: Literal["accuse"] = "accuse"
    candidates: list[str]


class CastVote(BaseDecision):
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


class Speech(BaseAction):
    type: Literal["speech"] = "speech"
    text: str


class Questions(BaseAction):
    type: Literal["questions"] = "questions"
    target: str
    questions: list[str]


class Investigate(BaseAction):
    type: Literal["investigate"] = "investigate"
    location: str
    statement: str = Field("", description="What the seat says to everyone as it searches "
                                           "(MIRAGE: its reasoning is public).")


class Rating(BaseAction):
    type: Literal["rating"] = "rating"
    trust: int = Field(ge=0, le=2)
    doubt: int = Field(ge=0, le=2)


class Ratings(BaseAction):
    """One ``Rating`` per statement of a ``RateRound``, in its order (None: left unrated)."""

    type: Literal["ratings"] = "ratings"
    ratings: list[Rating | None]


class Accusation(BaseAction):
    type: Literal["accusation"] = "accusation"
    target: str | None = Field(None, description="None: accuse no one.")
    reason: str = ""


class Vote(BaseAction):
    type: Literal["vote"] = "vote"
    target: str | None = Field(None, description="None is an abstention.")
    reason: str = ""


Action = Annotated[
    Speech | Questions | Investigate | Rating | Accusation | Vote,
    Field(discriminator="type"),
]


DefaultAnswer = Callable[[Any, Any, Sequence[Event]], Awaitable[Any]]
"""``default(agent, decision, seen)``: the answer of an agent whose architecture has no
method for the kind, from what it does know (``seen``: the events its seat may see)."""


@dataclass(frozen=True)
class DecisionKind:
    """One kind of decision: what is asked, what answers it, and what happens when the
    seat cannot answer (``fallback``, for a stage that names none) or its architecture
    has no method for it (``default``; None: the stage's fallback is used)."""

    name: str
    """The decisions' ``type``."""
    decision: type[BaseDecision]
    actions: tuple[type[BaseAction], ...]
    fallback: Callable[[Any], BaseAction] | None = None
    default: DefaultAnswer | None = None
    asks_culprit: bool = False
    """Asks who the culprit is: never before every act of the script was played."""


def _unknown_kind(name: str, known: list[str]) -> UnknownName:
    return UnknownName(f"unknown decision kind {name!r} (known: {', '.join(sorted(known))})")


DECISION_KINDS: Registry[DecisionKind] = Registry(
    unknown=_unknown_kind, sources=[importing("jubensha.engine.defaults")])
"""The decision kinds by ``type``; the built-in ones register with their defaults."""


def register_decision(kind: DecisionKind, *, replace: bool = False) -> None:
    """Add a kind of decision (a stage plug-in's new kind of move); a type already taken is
    refused unless ``replace``."""
    declared = kind.decision.model_fields["type"].default
    if declared != kind.name:
        raise TypeError(f"{kind.decision.__name__}.type must default to {kind.name!r}")
    DECISION_KINDS.put(kind.name, kind, replace=replace)


def decision_kind(type_: str) -> DecisionKind:
    """The kind of decision ``type_``; ``UnknownName`` lists the known kinds."""
    return DECISION_KINDS.get(type_)


def action_type(name: str) -> type[BaseAction]:
    """The action class whose ``type`` is ``name``, among every registered kind's answers
    (reading an action back from a log: a plug-in's kinds included)."""
    for registered in DECISION_KINDS:
        for action in DECISION_KINDS.get(registered).actions:
            if action.model_fields["type"].default == name:
                return action
    raise UnknownName(f"unknown action type {name!r}")
