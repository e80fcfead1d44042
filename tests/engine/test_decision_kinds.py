"""Decision kinds are open: a stage plug-in registers a kind with its decision model, the
actions that answer it, its fallback and how an agent answers it by default, and the
table asks it like any built-in kind: an agent with a method ``on_<type>`` answers itself,
one without answers with the kind's default, a seat that fails gets the kind's fallback."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Literal

import pytest
from engine_helpers import TableAgent, tiny

from jubensha.engine import (
    Agent,
    BaseAction,
    BaseDecision,
    CastVote,
    CharacterSheet,
    DecisionKind,
    Failure,
    SeatContext,
    Table,
    Vote,
    register_decision,
)
from jubensha.engine.decisions import DECISION_KINDS, decision_kind
from jubensha.engine.voting import VotingRules
from jubensha.registry import UnknownName


class Wager(BaseDecision):
    type: Literal["wager"] = "wager"
    candidates: list[str]


class Stake(BaseAction):
    type: Literal["stake"] = "stake"
    target: str | None = None
    confidence: int = 0


async def by_vote(agent: Agent, decision: Wager, seen: object) -> Stake:
    vote = await agent.decide(CastVote(candidates=decision.candidates))
    assert isinstance(vote, Vote)
    return Stake(target=vote.target, confidence=50)


class Voter(Agent):
    """An architecture written before wagers: it only votes (for the first candidate)."""

    async def on_vote(self, decision: CastVote) -> Vote:
        return Vote(target=decision.candidates[0])


class Wagerer(Voter):
    async def on_wager(self, decision: Wager) -> Stake:
        return Stake(target=decision.candidates[-1], confidence=90)


class Broken(Voter):
    async def on_wager(self, decision: Wager) -> Stake:
        raise RuntimeError("no idea")


@pytest.fixture
def wager() -> Iterator[DecisionKind]:
    kind = DecisionKind("wager", Wager, (Stake,), default=by_vote,
                        fallback=lambda decision: Stake(confidence=0))
    register_decision(kind)
    yield kind
    DECISION_KINDS.remove("wager")


def ask_everyone(agents: dict[str, Agent]) -> tuple[dict[str, BaseAction], Table]:
    script = tiny()
    order = list(agents)
    table = Table(script, VotingRules(), agents, order, seed=0, language="en")

    async def play() -> dict[str, BaseAction]:
        for name, agent in agents.items():
            await agent.start(SeatContext(sheet=CharacterSheet.for_seat(script, name)))
        return {seat: await table.ask(seat, Wager(candidates=table.others(seat)))
                for seat in order}

    return asyncio.run(play()), table


def test_each_agent_answers_a_new_kind_its_own_way_or_the_kinds(wager: DecisionKind) -> None:
    agents: dict[str, Agent] = {"Ann": Wagerer(), "Bob": Voter(), "Cara": Broken(),
                                "Dan": Voter()}
    answers, table = ask_everyone(agents)
    assert answers["Ann"] == Stake(target="Dan", confidence=90)  # its own on_wager
    assert answers["Bob"] == Stake(target="Ann", confidence=50)  # the default: its vote
    assert answers["Cara"] == Stake(target=None, confidence=0)  # the kind's fallback
    failures = [e for e in table.events if isinstance(e, Failure)]
    assert [(f.seat, f.purpose) for f in failures] == [("Cara", "wager")]
    assert (table.state.decisions, table.state.fallbacks) == (4, 1)


def test_an_answer_of_the_wrong_type_falls_back(wager: DecisionKind) -> None:
    agents: dict[str, Agent] = {name: TableAgent(lambda agent, decision: Vote(target=None))
                                for name in ("Ann", "Bob", "Cara", "Dan")}
    answers, table = ask_everyone(agents)
    assert list(answers.values()) == [Stake(confidence=0)] * 4
    assert "expected Stake" in next(e for e in table.events if isinstance(e, Failure)).error


def test_a_type_is_registered_once_unless_replaced(wager: DecisionKind) -> None:
    with pytest.raises(ValueError, match="wager"):
        register_decision(DecisionKind("wager", Wager, (Stake,)))
    register_decision(DecisionKind("wager", Wager, (Stake, Vote)), replace=True)
    assert decision_kind("wager").actions == (Stake, Vote)


def test_a_kind_must_name_its_decisions_type() -> None:
    with pytest.raises(TypeError, match="Wager.type must default to 'bet'"):
        register_decision(DecisionKind("bet", Wager, (Stake,)))
    with pytest.raises(UnknownName, match="unknown decision kind 'bet'"):
        decision_kind("bet")


def test_a_kind_without_a_fallback_needs_the_stages() -> None:
    register_decision(DecisionKind("wager", Wager, (Stake,)))
    try:
        with pytest.raises(TypeError, match="the stage must give one"):
            ask_everyone({"Ann": Voter()})
    finally:
        DECISION_KINDS.remove("wager")
