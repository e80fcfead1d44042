"""The Werewolf baseline: it picks from the ten prepared questions and rewrites them for the
case, answers in three steps (draft, reflection, final answer), and plays whole games."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from jubensha.agents.registry import make_agent
from jubensha.agents.werewolf import WerewolfAgent, predefined_questions
from jubensha.engine.agent import CharacterSheet, SeatContext
from jubensha.engine.decisions import AskQuestions, CastVote, Questions, Speak, Speech
from jubensha.engine.events import Failure, GameEnded, Spoke
from jubensha.engine.game import Game, Seat
from jubensha.engine.procedure import find_procedure
from jubensha.llm.base import Request
from jubensha.llm.calls import CallLog
from jubensha.llm.fake import ScriptedModel
from jubensha.scripts import Script, bundled_scripts, load_script
from jubensha.scripts.importers.wellplay import import_wellplay

TINY = Path(__file__).parents[1] / "engine" / "tiny_script.yaml"
PURPOSES = {"introduction", "question.pick", "question.rewrite", "answer.draft",
            "answer.reflect", "answer.final", "statement", "vote"}


async def seated(name: str, model: ScriptedModel, spec: str = "werewolf") -> WerewolfAgent:
    agent = make_agent(spec)
    assert isinstance(agent, WerewolfAgent)
    sheet = CharacterSheet.for_seat(load_script(TINY), name)
    await agent.start(SeatContext(sheet=sheet, model=model, seed=7))
    return agent


def user(request: Request) -> str:
    return request.messages[-1].text


def own(request: Request) -> str:
    """The system message: who the seat is and what only it knows or thought."""
    return request.messages[0].text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_there_are_ten_prepared_questions_about_the_victim(lang: str) -> None:
    questions = predefined_questions(lang, "Lord Vale")
    assert len(questions) == 10 and len(set(questions)) == 10
    assert sum("Lord Vale" in q for q in questions) >= 5
    assert predefined_questions(lang)[1] != questions[1]


def test_it_picks_prepared_questions_and_rewrites_them_for_the_case() -> None:
    model = ScriptedModel(replies={
        "question.pick": [{"target": "Bob", "picks": ["11"]},  # not on the list: asked again
                          {"target": "Bob", "picks": ["3", "9"]}],
        "question.rewrite": [{"questions": ["Bob, did you see Lord Vale after the orchids?",
                                            "Bob, whose is the dented candlestick?"]}]})

    async def ask() -> Questions | object:
        agent = await seated("Cara", model)
        return await agent.decide(AskQuestions(candidates=["Ann", "Bob", "Dan"], count=2))

    action = asyncio.run(ask())
    assert action == Questions(target="Bob", questions=[
        "Bob, did you see Lord Vale after the orchids?", "Bob, whose is the dented candlestick?"])
    assert [r.purpose for r in model.requests] == ["question.pick", "question.pick",
                                                   "question.rewrite"]
    prepared = predefined_questions("en", "Lord Vale")
    pick = user(model.requests[0])
    assert all(q in pick for q in prepared) and "Ann, Bob, Dan" in pick
    rewrite = user(model.requests[-1])
    assert prepared[2] in rewrite and prepared[8] in rewrite and prepared[0] not in rewrite
    assert "Bob" in rewrite
    assert model.requests[0].json_schema["properties"]["picks"]["maxItems"] == 2


def test_it_answers_in_three_steps_each_seeing_the_last() -> None:
    model = ScriptedModel(replies={
        "answer.draft": ["I was repotting orchids all evening."],
        "answer.reflect": ["The draft forgets the lamp I saw at 23:50."],
        "answer.final": ["I was repotting orchids, and at 23:50 I saw a lamp in the library."]})

    async def answer() -> Speech | object:
        agent = await seated("Bob", model)
        question = Spoke(speaker="Dan", kind="question", to="Bob", text="Where were the orchids?")
        return await agent.decide(Speak(kind="answer", question=question))

    action = asyncio.run(answer())
    assert action == Speech(text="I was repotting orchids, and at 23:50 I saw a lamp in the "
                                 "library.")
    draft, reflect, final = model.requests
    assert [r.purpose for r in model.requests] == ["answer.draft", "answer.reflect",
                                                   "answer.final"]
    # Its script (retrieved), its draft and its critique are its own: the system prompt's;
    # the question and the request are the user prompt's.
    assert "repotting orchids in the glasshouse" in own(draft)
    assert "repotting orchids in the glasshouse" not in user(draft)
    assert "Where were the orchids?" in user(draft) and "truthful" in user(draft)
    assert "Your draft answer: I was repotting orchids all evening." in own(reflect)
    assert "Your critique of the draft: The draft forgets the lamp" in own(final)
    assert "orchids all evening" in own(final) and "Where were the orchids?" in user(final)
    assert not any(words in user(r) for r in (reflect, final)
                   for words in ("orchids all evening", "forgets the lamp"))


def test_the_murderer_drafts_with_the_murderer_prompts() -> None:
    model = ScriptedModel(replies={"*": lambda r: None if r.json_schema else "Not me."})

    async def answer() -> None:
        agent = await seated("Ann", model)
        question = Spoke(speaker="Dan", kind="question", to="Ann", text="Where were you?")
        await agent.decide(Speak(kind="answer", question=question))

    asyncio.run(answer())
    draft, reflect, _ = model.requests
    assert "You are the murderer" in draft.messages[0].text
    assert "bloody gloves" in draft.messages[0].text
    assert "your own version of events" in user(draft)
    assert "point to you" in user(reflect)


def test_votes_are_one_of_the_candidates() -> None:
    model = ScriptedModel(replies={"vote": [{"target": "Dan", "reason": "The candlestick."}]})

    async def vote() -> object:
        agent = await seated("Bob", model)
        return await agent.decide(CastVote(candidates=["Ann", "Cara", "Dan"]))

    assert asyncio.run(vote()).target == "Dan"  # type: ignore[attr-defined]
    assert model.requests[0].json_schema["properties"]["target"]["enum"] == ["Ann", "Cara", "Dan"]


def plain_text(request: Request) -> str | None:
    """Speeches get a plain line; structured requests get the fake's schema-valid objects."""
    return None if request.json_schema else "I was in the house all evening and saw nothing."


def play(script: Script, spec: str, procedure: str = "demo") -> tuple[Game, CallLog]:
    model = ScriptedModel(seed=4, replies={"*": plain_text})
    log = CallLog()
    game = Game(script, find_procedure(procedure),
                {n: Seat(make_agent(spec), model=log.seat(model, n)) for n in script.names},
                seed=4)
    asyncio.run(game.run())
    return game, log


@pytest.mark.parametrize("script_id", list(bundled_scripts()))
def test_it_finishes_every_bundled_mystery(script_id: str) -> None:
    script = load_script(bundled_scripts()[script_id])
    game, log = play(script, "werewolf")
    assert not [e.error for e in game.table.events if isinstance(e, Failure)]
    assert any(isinstance(e, GameEnded) for e in game.table.events)
    purposes = [r.purpose for r in log.sink.records]
    assert set(purposes) <= PURPOSES
    assert purposes.count("answer.draft") == purposes.count("answer.final") > 0
    assert purposes.count("question.pick") == purposes.count("question.rewrite") > 0


@pytest.mark.datasets
@pytest.mark.parametrize("folder", ["english/Sin (4 people closed)", "chinese/罪恶（4人封闭）"])
def test_it_finishes_imported_wellplay_scripts(datasets: Path, folder: str) -> None:
    script = import_wellplay(datasets / "wellplay" / folder)
    game, _ = play(script, "werewolf:script_tokens=300")
    assert not [e.error for e in game.table.events if isinstance(e, Failure)]
    assert any(isinstance(e, GameEnded) for e in game.table.events)
