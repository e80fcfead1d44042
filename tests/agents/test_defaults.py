"""Shared defaults let any architecture sit at any table: an agent that raises
``UnsupportedDecision`` for an open turn, an accusation or a rating gets an answer built from
what it can do (its own question, its own vote, one structured rating call)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from jubensha.engine.agent import Agent, CharacterSheet, SeatContext, UnsupportedDecision
from jubensha.engine.decisions import (
    Accusation,
    Accuse,
    Action,
    AskQuestions,
    BaseAction,
    BaseDecision,
    CastVote,
    Decision,
    Questions,
    RateStatement,
    Rating,
    Speak,
    Speech,
    TakeTurn,
    Vote,
    decision_kind,
)
from jubensha.engine.events import Failure, Rated, Spoke
from jubensha.engine.game import Game, Seat
from jubensha.engine.procedure import parse_procedure
from jubensha.llm.fake import ScriptedModel
from jubensha.prompts import tracking
from jubensha.scripts import load_script

TINY = Path(__file__).parents[1] / "engine" / "tiny_script.yaml"


async def default_action(agent: Agent, decision: BaseDecision, seen: list = ()) -> BaseAction:
    """The answer the table gives for ``agent`` when its architecture has no method."""
    default = decision_kind(decision.type).default
    assert default is not None
    return await default(agent, decision, seen)


class OldSchool(Agent):
    """Knows speeches, questions and votes only, like a ThinkThrice-era player."""

    architecture = "old"

    async def decide(self, decision: Decision) -> Action:
        if isinstance(decision, Speak):
            return Speech(text="I was asleep.")
        if isinstance(decision, AskQuestions):
            return Questions(target=decision.candidates[-1],
                             questions=["Where were you?"] * decision.count)
        if isinstance(decision, CastVote):
            return Vote(target=decision.candidates[0], reason="a hunch")
        raise UnsupportedDecision(decision.type)


async def seated(name: str = "Bob", model: ScriptedModel | None = None) -> OldSchool:
    agent = OldSchool()
    await agent.start(SeatContext(sheet=CharacterSheet.for_seat(load_script(TINY), name),
                                  model=model))
    return agent


async def test_a_turn_becomes_the_agents_own_single_question() -> None:
    agent = await seated()
    action = await default_action(agent, TakeTurn(candidates=["Ann", "Cara"],
                                                  locations=["study"]))
    assert action == Questions(target="Cara", questions=["Where were you?"])


async def test_an_accusation_is_the_agents_own_vote() -> None:
    agent = await seated()
    action = await default_action(agent, Accuse(candidates=["Dan", "Ann"]))
    assert action == Accusation(target="Dan", reason="a hunch")


async def test_a_rating_is_one_structured_call_with_what_the_seat_saw() -> None:
    model = ScriptedModel(replies={"default.rate": [{"trust": 0, "doubt": 2}]})
    agent = await seated(model=model)
    seen = [Spoke(speaker="Cara", kind="statement", text="The lamp moved at midnight.")]
    statement = Spoke(speaker="Ann", kind="answer", text="I was in the pantry.", index=4)
    action = await default_action(agent, RateStatement(statement=statement), seen)
    assert action == Rating(trust=0, doubt=2)
    request = model.requests[0]
    assert request.purpose == "default.rate" and request.seat == "Bob"
    text = request.messages[0].text
    assert "The lamp moved at midnight." in text and "I was in the pantry." in text


async def test_the_rating_prompt_is_the_engines_own_not_an_architectures() -> None:
    """The table's default is no architecture's: its prompt and the lines of what the seat
    saw come from the engine's templates (``prompts/defaults``, ``prompts/events``)."""
    agent = await seated(model=ScriptedModel())
    seen = [Spoke(speaker="Cara", kind="question", to="Bob", text="Where was the lamp?")]
    statement = Spoke(speaker="Ann", kind="answer", text="I was in the pantry.", index=4)
    with tracking() as used:
        await default_action(agent, RateStatement(statement=statement), seen)
    assert sorted(used) == ["defaults/en/rate.j2", "events/en/line.j2"]


def test_a_table_of_such_agents_plays_a_mirage_conversation_to_the_end() -> None:
    script = load_script(TINY)
    model = ScriptedModel(seed=2)
    seats = {name: Seat(OldSchool(), model=model) for name in script.names}
    procedure = parse_procedure({"name": "m", "stages": [
        {"kind": "conversation", "rounds": 1, "acts": "all"}, {"kind": "accusation_vote"},
        {"kind": "reveal"}]}, "m")
    game = Game(script, procedure, seats, seed=1)
    result = asyncio.run(game.run())
    events = game.table.events
    assert result.failures == 0, [e.error for e in events if isinstance(e, Failure)]
    assert any(isinstance(e, Rated) for e in events)
    assert {a.accuser for a in game.table.state.accusations} == set(script.names)
    assert any(r.purpose == "default.rate" for r in model.requests)
