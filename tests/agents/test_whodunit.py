"""The WhodunitBench agent: the paper's system parts (rules, role script with faction, live
dialogue), image clue cards attached for vision models and read as captions otherwise, one
discussion call that shares clues and picks whom to question, and the free-text vote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jubensha.agents.whodunit import WhodunitAgent, WhodunitConfig, parse_killer
from jubensha.engine.agent import CharacterSheet, SeatContext
from jubensha.engine.decisions import AskQuestions, CastVote, Speak
from jubensha.engine.events import ClueRevealed, Spoke
from jubensha.llm.base import ImagePart
from jubensha.llm.fake import ScriptedModel
from jubensha.scripts import load_script

TINY = Path(__file__).parents[1] / "engine" / "tiny_script.yaml"


async def started(seat: str = "Ann", config: WhodunitConfig | None = None,
                  replies: dict[str, Any] | None = None) -> tuple[WhodunitAgent, ScriptedModel]:
    model = ScriptedModel(seed=5, replies=replies)
    agent = WhodunitAgent(config)
    await agent.start(SeatContext(sheet=CharacterSheet.for_seat(load_script(TINY), seat),
                                  model=model))
    return agent, model


def test_the_killer_is_read_from_the_papers_format_or_a_single_name() -> None:
    names = ["Ann", "Bob", "Dan"]
    assert parse_killer("After thinking... I think the killer is: [Bob]", names) == "Bob"
    assert parse_killer("I think the killer is: dan.", names) == "Dan"
    assert parse_killer("我认为凶手是：【Ann】", names) == "Ann"
    assert parse_killer("It must be Bob, no doubt.", names) == "Bob"
    assert parse_killer("Either Ann or Bob.", names) is None
    assert parse_killer("I think the killer is: [option]", names) is None


async def test_the_system_prompt_states_the_faction_mission_and_text_clues() -> None:
    agent, model = await started("Ann", replies={"introduction": ["I am Ann."]})
    await agent.observe(ClueRevealed(clue_id="c1", title="Candlestick", text="Dented base.",
                                     index=1))
    await agent.observe(Spoke(speaker="Bob", kind="introduction", text="I am Bob.", index=2))
    speech = await agent.decide(Speak(kind="introduction", prompt="Introduce yourself."))
    assert speech.text == "I am Ann."
    system = model.requests[0].messages[0].text
    assert "Your faction: the murderer" in system
    assert "Candlestick: Dented base." in system and "Bob: I am Bob." in system
    assert "Ann struck Lord Vale" in system and "Never reveal your faction" in system
    assert "Bob spent the evening" not in system


async def test_image_cards_are_attached_when_the_file_exists_and_captioned_otherwise(
        tmp_path: Path) -> None:
    card = tmp_path / "card.png"
    card.write_bytes(b"\x89PNG\r\n\x1a\n")
    agent, model = await started(replies={"reasoning": ["Modus operandi: x\nMotive: y"]})
    await agent.observe(ClueRevealed(clue_id="img-1", title="1", text="", image=str(card),
                                     caption="A note: meet at 14:00.", index=1))
    await agent.observe(ClueRevealed(clue_id="img-2", title="2", text="",
                                     image=str(tmp_path / "missing.png"),
                                     caption="A torn ticket.", index=2))
    await agent.decide(Speak(kind="reasoning", prompt="Reason."))
    user = model.requests[-1].messages[-1]
    images = [p for p in user.content if isinstance(p, ImagePart)]
    assert [(i.url, i.caption) for i in images] == [(str(card), "A note: meet at 14:00.")]
    assert "A torn ticket." in user.text and "[image: A note: meet at 14:00.]" in user.text

    agent, model = await started(config=WhodunitConfig(images="caption"),
                                 replies={"reasoning": ["Modus operandi: x\nMotive: y"]})
    await agent.observe(ClueRevealed(clue_id="img-1", text="", image=str(card),
                                     caption="A note: meet at 14:00.", index=1))
    await agent.decide(Speak(kind="reasoning", prompt="Reason."))
    user = model.requests[-1].messages[-1]
    assert isinstance(user.content, str) and "A note: meet at 14:00." in user.content


async def test_one_discussion_call_shares_clues_and_chooses_whom_to_question() -> None:
    agent, model = await started("Bob", replies={"clue_share": [
        {"clues": "I hold a dismissal notice for Ann.", "target": "Ann",
         "question": "Why were you dismissed?"}]})
    speech = await agent.decide(Speak(kind="clue_share", prompt="Share and ask."))
    assert speech.text == "I hold a dismissal notice for Ann."
    questions = await agent.decide(AskQuestions(candidates=["Ann", "Cara", "Dan"]))
    assert (questions.target, questions.questions) == ("Ann", ["Why were you dismissed?"])
    assert [r.purpose for r in model.requests] == ["clue_share"]
    schema = model.requests[0].json_schema
    assert schema is not None and "Bob" not in schema["properties"]["target"]["enum"]


async def test_the_vote_is_free_text_and_asked_again_as_a_choice_when_unreadable() -> None:
    agent, model = await started(replies={"vote": ["I think the killer is: [Cara]",
                                                   "Hmm, hard to say."],
                                          "vote.retry": [{"killer": "Dan"}]})
    first = await agent.decide(CastVote(candidates=["Bob", "Cara", "Dan"]))
    second = await agent.decide(CastVote(candidates=["Bob", "Cara", "Dan"]))
    assert (first.target, second.target) == ("Cara", "Dan")
    assert [r.purpose for r in model.requests] == ["vote", "vote", "vote.retry"]
    assert "I think the killer is: [option]" in model.requests[0].messages[-1].text
