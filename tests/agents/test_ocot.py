"""The O-CoT baseline: before asking it reflects once on each of its objectives, asks from
those reflections, answers in one call from its script and the dialogue, and plays games."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from jubensha.agents.ocot import OCoTAgent
from jubensha.agents.registry import AgentSpecError, make_agent
from jubensha.engine.agent import CharacterSheet, SeatContext
from jubensha.engine.decisions import AskQuestions, Questions, Speak, Speech
from jubensha.engine.events import ActStarted, Failure, GameEnded, Spoke
from jubensha.engine.game import Game, Seat
from jubensha.engine.procedure import find_procedure
from jubensha.llm.base import Request
from jubensha.llm.calls import CallLog
from jubensha.llm.fake import ScriptedModel
from jubensha.scripts import ActSheet, Script, bundled_scripts, load_script
from jubensha.scripts.importers.wellplay import import_wellplay

TINY = Path(__file__).parents[1] / "engine" / "tiny_script.yaml"
PURPOSES = {"introduction", "objective.reflect", "question", "answer", "statement", "vote"}


async def seated(script: Script, name: str, model: ScriptedModel,
                 spec: str = "ocot") -> OCoTAgent:
    agent = make_agent(spec)
    assert isinstance(agent, OCoTAgent)
    await agent.start(SeatContext(sheet=CharacterSheet.for_seat(script, name), model=model,
                                  seed=7))
    return agent


def with_goals(goals: list[str]) -> Script:
    script = load_script(TINY)
    script.character("Bob").final_goals = goals
    return script


def purposes(model: ScriptedModel) -> list[str]:
    return [r.purpose for r in model.requests]


def test_it_reflects_once_on_each_objective_then_asks() -> None:
    goals = ["Find who killed Lord Vale.", "Hide that you pawned the snuffbox.",
             "Learn why the lamp moved."]
    thoughts = [{"achieved": False, "reflection": f"Thought {i}."} for i in range(3)]
    model = ScriptedModel(replies={
        "objective.reflect": thoughts * 2,
        "question": [{"target": "Dan", "questions": ["Dan, where is the candlestick?"]},
                     {"target": "Ann", "questions": ["Ann, why was your lamp lit?"]}]})

    async def two_turns() -> list[Questions]:
        agent = await seated(with_goals(goals), "Bob", model)
        decision = AskQuestions(candidates=["Ann", "Cara", "Dan"], count=1)
        return [await agent.decide(decision), await agent.decide(decision)]  # type: ignore

    first, second = asyncio.run(two_turns())
    assert first == Questions(target="Dan", questions=["Dan, where is the candlestick?"])
    assert second.target == "Ann"
    turn = ["objective.reflect"] * 3 + ["question"]
    assert purposes(model) == turn * 2
    # The objective and the thoughts are the seat's own: its system prompt's, apart from
    # what was said at the table (the user prompt).
    for goal, request in zip(goals, model.requests[:3], strict=True):
        system, user = request.messages[0].text, request.messages[-1].text
        assert f"The objective you are thinking about: {goal}" in system and goal not in user
    system, user = (m.text for m in model.requests[3].messages)
    assert all(goal in system for goal in goals)
    assert all(f"Thought {i}." in system and f"Thought {i}." not in user for i in range(3))


def test_objectives_follow_the_act_and_default_to_the_side() -> None:
    model = ScriptedModel()

    async def objectives() -> tuple[list[str], list[str], list[str]]:
        script = load_script(TINY)
        ann = await seated(script, "Ann", model)
        bob = await seated(script, "Bob", model)
        before = ann.objectives()
        await ann.observe(ActStarted(act=2, sheet=ActSheet(act=2, goals=["Blame the gardener."]),
                                     audience=["Ann"]))
        return before, ann.objectives(), bob.objectives()

    murderer, act_two, civilian = asyncio.run(objectives())
    assert len(murderer) == 2 and "you killed Lord Vale" in murderer[0]
    assert act_two == ["Blame the gardener."]
    assert len(civilian) == 2 and "Find out who killed Lord Vale" in civilian[0]


def test_max_objectives_caps_the_reflections() -> None:
    model = ScriptedModel()

    async def ask() -> None:
        agent = await seated(with_goals([f"Goal {i}." for i in range(6)]), "Bob", model,
                             "ocot:max_objectives=2")
        await agent.decide(AskQuestions(candidates=["Ann", "Dan"], count=1))

    asyncio.run(ask())
    assert purposes(model) == ["objective.reflect", "objective.reflect", "question"]
    with pytest.raises(AgentSpecError, match="max_objectives"):
        make_agent("ocot:max_objectives=0")


def test_it_answers_in_one_call_from_its_script_and_the_dialogue() -> None:
    model = ScriptedModel(replies={"answer": ["I saw a lamp in the library at 23:50."]})

    async def answer() -> object:
        agent = await seated(load_script(TINY), "Bob", model)
        await agent.observe(Spoke(index=1, speaker="Dan", kind="question", to="Cara",
                                  text="Cara, when did you go to bed?"))
        await agent.observe(Spoke(index=2, speaker="Cara", kind="answer", to="Dan", reply_to=1,
                                  text="At ten, with a sleeping draught."))
        question = Spoke(speaker="Dan", kind="question", to="Bob",
                         text="Bob, what did you see in the library window?")
        return await agent.decide(Speak(kind="answer", question=question))

    assert asyncio.run(answer()) == Speech(text="I saw a lamp in the library at 23:50.")
    assert purposes(model) == ["answer"]
    system, prompt = (m.text for m in model.requests[0].messages)
    assert "lamp moving in the library window" in system  # its script: its own
    assert "lamp moving" not in prompt
    assert "sleeping draught" in prompt and "Bob, what did you see" in prompt


def plain_text(request: Request) -> str | None:
    return None if request.json_schema else "I was in the house all evening and saw nothing."


def play(script: Script, spec: str) -> tuple[Game, CallLog]:
    model = ScriptedModel(seed=4, replies={"*": plain_text})
    log = CallLog()
    game = Game(script, find_procedure("demo"),
                {n: Seat(make_agent(spec), model=log.seat(model, n)) for n in script.names},
                seed=4)
    asyncio.run(game.run())
    return game, log


@pytest.mark.parametrize("script_id", list(bundled_scripts()))
def test_it_finishes_every_bundled_mystery(script_id: str) -> None:
    script = load_script(bundled_scripts()[script_id])
    game, log = play(script, "ocot")
    assert not [e.error for e in game.table.events if isinstance(e, Failure)]
    assert any(isinstance(e, GameEnded) for e in game.table.events)
    used = [r.purpose for r in log.sink.records]
    assert set(used) <= PURPOSES and used.count("objective.reflect") >= used.count("question")


@pytest.mark.datasets
@pytest.mark.parametrize("folder", ["english/Deadly Fountain (4 people closed)",
                                    "chinese/致命喷泉（4人封闭）"])
def test_it_finishes_imported_wellplay_scripts(datasets: Path, folder: str) -> None:
    script = import_wellplay(datasets / "wellplay" / folder)
    game, _ = play(script, "ocot:script_tokens=300")
    assert not [e.error for e in game.table.events if isinstance(e, Failure)]
    assert any(isinstance(e, GameEnded) for e in game.table.events)
