"""The agent base class routes each decision kind to one method, ``on_`` and the kind's
``type``; a kind the architecture wrote no method for is ``UnsupportedDecision``, which the
table answers with the shared default."""

from __future__ import annotations

from typing import get_args

import pytest
from engine_helpers import tiny

from jubensha import engine
from jubensha.agents.registry import make_agent
from jubensha.engine import Agent, Decision

DECISIONS: list[Decision] = [
    engine.Speak(kind="statement"),
    engine.AskQuestions(candidates=["Bob"]),
    engine.TakeTurn(candidates=["Bob"], locations=["Study"]),
    engine.RateStatement(statement=engine.Spoke(speaker="Bob", kind="statement",
                                                text="I was out.")),
    engine.Accuse(candidates=["Bob"]),
    engine.CastVote(candidates=["Bob"]),
]


class Recorder(Agent):
    """Answers every kind, noting which method answered."""

    def __init__(self) -> None:
        self.called: list[str] = []

    async def on_speak(self, decision: engine.Speak) -> engine.Speech:
        self.called.append("on_speak")
        return engine.Speech(text="")

    async def on_ask(self, decision: engine.AskQuestions) -> engine.Questions:
        self.called.append("on_ask")
        return engine.Questions(target="Bob", questions=[])

    async def on_turn(self, decision: engine.TakeTurn) -> engine.Questions | engine.Investigate:
        self.called.append("on_turn")
        return engine.Investigate(location="Study")

    async def on_rate(self, decision: engine.RateStatement) -> engine.Rating:
        self.called.append("on_rate")
        return engine.Rating(trust=1, doubt=1)

    async def on_accuse(self, decision: engine.Accuse) -> engine.Accusation:
        self.called.append("on_accuse")
        return engine.Accusation(target=None)

    async def on_vote(self, decision: engine.CastVote) -> engine.Vote:
        self.called.append("on_vote")
        return engine.Vote(target=None)


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
    with pytest.raises(engine.UnsupportedDecision, match=repr(decision.type)):
        await Agent().decide(decision)


async def test_an_architecture_writes_only_the_kinds_it_knows() -> None:
    class Voter(Agent):
        async def on_vote(self, decision: engine.CastVote) -> engine.Vote:
            return engine.Vote(target=decision.candidates[0], reason="first")

        async def on_ask(self, decision: engine.AskQuestions) -> engine.Questions:
            return engine.Questions(target=decision.candidates[0], questions=["Where were you?"])

    voter = Voter()
    vote = await voter.decide(engine.CastVote(candidates=["Bob"]))
    assert vote == engine.Vote(target="Bob", reason="first")
    assert await voter.decide(engine.AskQuestions(candidates=["Bob"])) == engine.Questions(
        target="Bob", questions=["Where were you?"])
    with pytest.raises(engine.UnsupportedDecision):
        await voter.decide(engine.Accuse(candidates=["Bob"]))


async def test_routes_serve_what_is_not_an_agent() -> None:
    class Page(engine.DecisionRoutes):
        async def on_accuse(self, decision: engine.Accuse) -> engine.Accusation:
            return engine.Accusation(target=None)

    assert await Page().route(engine.Accuse(candidates=["Bob"])) == engine.Accusation(target=None)
    assert not isinstance(Page(), Agent)


BUILT_IN = ["naive", "player", "mirage", "whodunit", "extractive", "werewolf", "ocot",
            "thinkthrice"]


@pytest.mark.parametrize("name", BUILT_IN)
def test_every_model_architecture_answers_through_the_routing(name: str) -> None:
    """Only what wraps a whole decision overrides ``decide``: a person's seat (it hands the
    decision to a page or the terminal) and the speech guard (it checks the inner agent)."""
    agent = make_agent(name)
    assert type(agent).decide is Agent.decide
    assert not isinstance(agent, engine.PersonAgent)


def test_a_persons_seat_is_the_one_the_table_does_not_time() -> None:
    assert isinstance(make_agent("human"), engine.PersonAgent)


async def test_start_tells_every_agent_its_seat_name_and_language() -> None:
    script = tiny().model_copy(update={"language": "zh"})
    seat = engine.SeatContext(sheet=engine.CharacterSheet.for_seat(script, "Bob"), seed=7)
    agent = Agent()
    await agent.start(seat)
    assert (agent.seat, agent.name, agent.lang) == (seat, "Bob", "zh")
