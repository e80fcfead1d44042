"""The agent base class routes each decision kind to one method, ``on_`` and the kind's
``type``; a kind the architecture wrote no method for is ``UnsupportedDecision``, which the
table answers with the shared default."""

from __future__ import annotations

from typing import get_args

import pytest
from engine_helpers import tiny

from jubensha.agents.registry import make_agent
from jubensha.engine import (
    Accusation,
    Accuse,
    Agent,
    AskQuestions,
    CastVote,
    CharacterSheet,
    Decision,
    DecisionRoutes,
    Investigate,
    PersonAgent,
    Questions,
    RateStatement,
    Rating,
    SeatContext,
    Speak,
    Speech,
    Spoke,
    TakeTurn,
    UnsupportedDecision,
    Vote,
)

DECISIONS: list[Decision] = [
    Speak(kind="statement"),
    AskQuestions(candidates=["Bob"]),
    TakeTurn(candidates=["Bob"], locations=["Study"]),
    RateStatement(statement=Spoke(speaker="Bob", kind="statement", text="I was out.")),
    Accuse(candidates=["Bob"]),
    CastVote(candidates=["Bob"]),
]


class Recorder(Agent):
    """Answers every kind, noting which method answered."""

    def __init__(self) -> None:
        self.called: list[str] = []

    async def on_speak(self, decision: Speak) -> Speech:
        self.called.append("on_speak")
        return Speech(text="")

    async def on_ask(self, decision: AskQuestions) -> Questions:
        self.called.append("on_ask")
        return Questions(target="Bob", questions=[])

    async def on_turn(self, decision: TakeTurn) -> Questions | Investigate:
        self.called.append("on_turn")
        return Investigate(location="Study")

    async def on_rate(self, decision: RateStatement) -> Rating:
        self.called.append("on_rate")
        return Rating(trust=1, doubt=1)

    async def on_accuse(self, decision: Accuse) -> Accusation:
        self.called.append("on_accuse")
        return Accusation(target=None)

    async def on_vote(self, decision: CastVote) -> Vote:
        self.called.append("on_vote")
        return Vote(target=None)


def test_the_examples_cover_every_decision_kind() -> None:
    kinds = get_args(get_args(Decision)[0])
    assert sorted(kind.__name__ for kind in kinds) == sorted(
        type(decision).__name__ for decision in DECISIONS)


@pytest.mark.parametrize("decision", DECISIONS, ids=lambda d: d.type)
async def test_each_decision_kind_goes_to_the_method_named_for_its_type(
        decision: Decision) -> None:
    agent = Recorder()
    await agent.decide(decision)
    assert agent.called == [f"on_{decision.type}"]


@pytest.mark.parametrize("decision", DECISIONS, ids=lambda d: d.type)
async def test_a_kind_without_a_method_is_unsupported(decision: Decision) -> None:
    with pytest.raises(UnsupportedDecision, match=repr(decision.type)):
        await Agent().decide(decision)


async def test_an_architecture_writes_only_the_kinds_it_knows() -> None:
    class Voter(Agent):
        async def on_vote(self, decision: CastVote) -> Vote:
            return Vote(target=decision.candidates[0], reason="first")

        async def on_ask(self, decision: AskQuestions) -> Questions:
            return Questions(target=decision.candidates[0], questions=["Where were you?"])

    voter = Voter()
    assert await voter.decide(CastVote(candidates=["Bob"])) == Vote(target="Bob",
                                                                    reason="first")
    assert await voter.decide(AskQuestions(candidates=["Bob"])) == Questions(
        target="Bob", questions=["Where were you?"])
    with pytest.raises(UnsupportedDecision):
        await voter.decide(Accuse(candidates=["Bob"]))


async def test_routes_serve_what_is_not_an_agent() -> None:
    class Page(DecisionRoutes):
        async def on_accuse(self, decision: Accuse) -> Accusation:
            return Accusation(target=None)

    assert await Page().route(Accuse(candidates=["Bob"])) == Accusation(target=None)
    assert not isinstance(Page(), Agent)


BUILT_IN = ["naive", "player", "mirage", "whodunit", "extractive", "werewolf", "ocot",
            "thinkthrice"]


@pytest.mark.parametrize("name", BUILT_IN)
def test_every_model_architecture_answers_through_the_routing(name: str) -> None:
    """Only what wraps a whole decision overrides ``decide``: a person's seat (it hands the
    decision to a page or the terminal) and the speech guard (it checks the inner agent)."""
    agent = make_agent(name)
    assert type(agent).decide is Agent.decide
    assert not isinstance(agent, PersonAgent)


def test_a_persons_seat_is_the_one_the_table_does_not_time() -> None:
    assert isinstance(make_agent("human"), PersonAgent)


async def test_start_tells_every_agent_its_seat_name_and_language() -> None:
    script = tiny().model_copy(update={"language": "zh"})
    seat = SeatContext(sheet=CharacterSheet.for_seat(script, "Bob"), seed=7)
    agent = Agent()
    await agent.start(seat)
    assert (agent.seat, agent.name, agent.lang) == (seat, "Bob", "zh")
