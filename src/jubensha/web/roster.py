"""Who sits where and how far the game is: the roster of seats every live page shows (a
person or an agent, whose turn, who is thinking, who was removed), the stage and round,
and one colour per person that every page and chart uses for them.

A colour follows the character, not a position in some list: it is chosen by the
character's place in the script, so a person is drawn in the same colour in the roster,
the conversation and every chart of the game and of its review.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel

from jubensha.engine.events import Event, StageStarted
from jubensha.engine.procedure import Procedure
from jubensha.scripts.model import Script

PALETTE = ("#b03a2e", "#1f5f99", "#1a7040", "#8a5a00", "#6c3483", "#0e6e6e", "#9c2a6b",
           "#4d5a14", "#a04000", "#2e4a7a", "#5b4636", "#7a1f1f")
"""Seat colours, each at least 4.5:1 against the pages' backgrounds (a test computes it),
so a name written in its colour stays readable."""

State = Literal["turn", "thinking", "starting", "removed", "waiting"]


def colour_numbers(names: Sequence[str]) -> dict[str, int]:
    """Each seat's place in ``PALETTE`` (the pages' classes ``p0``, ``p1``...), by its place
    among ``names`` (the script's characters)."""
    return {name: number % len(PALETTE) for number, name in enumerate(names)}


def colours(names: Sequence[str]) -> dict[str, str]:
    """Each seat's colour, by its place among ``names`` (the script's characters)."""
    return {name: PALETTE[number] for name, number in colour_numbers(names).items()}


class SeatChip(BaseModel):
    """One seat as the roster shows it."""

    name: str
    colour: int
    """Its place in ``PALETTE``."""
    person: bool
    you: bool = False
    state: State = "waiting"
    doing: str = ""
    """What an agent being asked is doing (``vote``, ``speak``...), shown in its words."""


def roster(names: Sequence[str], *, people: Iterable[str], asked: Iterable[str],
           removed: Iterable[str], me: str | None = None,
           starting: bool = False, doing: Mapping[str, str] | None = None
           ) -> list[SeatChip]:
    """The seats in order: a person whose answer the table waits for has the turn, an
    agent being asked is thinking, and before the first stage (``starting``) the agents
    are reading their scripts (some condense them with their model: minutes on a small
    local one)."""
    people, asked, removed = set(people), set(asked), set(removed)
    palette = colour_numbers(names)

    def state(name: str) -> State:
        if name in removed:
            return "removed"
        if name in asked:
            return "turn" if name in people else "thinking"
        return "starting" if starting and name not in people else "waiting"

    doing = doing or {}
    return [SeatChip(name=name, colour=palette[name], person=name in people,
                     you=name == me, state=state(name),
                     doing=doing.get(name, "") if state(name) == "thinking" else "")
            for name in names]


class Progress(BaseModel):
    """Where the game is: the current stage (its title, its place among the procedure's
    stages) and, in stages played in rounds, the round."""

    title: str = ""
    stage: int = 0
    stages: int
    round: int | None = None
    rounds: int | None = None


def progress(procedure: Procedure, script: Script, events: Sequence[Event]) -> Progress:
    """The progress ``events`` (any seat's, the latest last) show in a game of ``script``
    (a block of stages counts once per act it plays)."""
    stages = procedure.announced_stages(script)
    ids = [spec.id for spec in stages]
    started = next((e for e in reversed(events) if isinstance(e, StageStarted)), None)
    if started is None:
        return Progress(stages=len(ids))
    number = ids.index(started.stage) + 1 if started.stage in ids else 0
    spec = stages[number - 1] if number else None
    rounds = getattr(spec, "rounds", None)
    latest = None
    for event in reversed(events):
        if event is started or event.round is not None:
            latest = event.round
            break
    return Progress(title=started.title or started.kind, stage=number, stages=len(ids),
                    round=latest, rounds=rounds if isinstance(rounds, int) else None)
