"""The MIRAGE agent and its summarised memory: the sheet is condensed at the start (section by
section only when long), the history is condensed when it passes its budget and not before,
keeping the "name: [action]: content" form; turns choose Ask or Investigate; trust and doubt
are two bystander calls by default."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jubensha.agents.mirage import MirageAgent, MirageConfig
from jubensha.agents.registry import AgentSpecError, make_agent
from jubensha.agents.summarise import History, Summariser, SummaryConfig
from jubensha.engine.agent import CharacterSheet, SeatContext
from jubensha.engine.decisions import (
    Accuse,
    CastVote,
    Investigate,
    Questions,
    RateStatement,
    Speak,
    TakeTurn,
)
from jubensha.engine.events import ActStarted, ClueRevealed, Investigated, Spoke
from jubensha.llm.fake import ScriptedModel
from jubensha.llm.structured import StructuredOutputError
from jubensha.scripts import Script, load_script
from jubensha.scripts.model import ActSheet

TINY = Path(__file__).parents[1] / "engine" / "tiny_script.yaml"


def tiny() -> Script:
    return load_script(TINY)


def summary(text: str) -> dict[str, str]:
    return {"thought": "keep the facts", "summary": text}


async def started(config: MirageConfig | None = None, seat: str = "Bob",
                  replies: dict[str, Any] | None = None) -> tuple[MirageAgent, ScriptedModel]:
    model = ScriptedModel(seed=3, replies={"summarise.script": [summary("I am Bob.")] * 5,
                                           **(replies or {})})
    agent = MirageAgent(config)
    await agent.start(SeatContext(sheet=CharacterSheet.for_seat(tiny(), seat), model=model))
    return agent, model


def purposes(model: ScriptedModel) -> list[str]:
    return [request.purpose for request in model.requests]


def said(speaker: str, text: str, index: int, kind: str = "statement",
         to: str | None = None) -> Spoke:
    return Spoke(speaker=speaker, kind=kind, text=text, index=index, to=to)  # type: ignore[arg-type]


async def test_the_sheet_is_condensed_once_at_the_start_into_the_description() -> None:
    agent, model = await started()
    assert purposes(model) == ["summarise.script"]
    assert agent.description == "I am Bob."
    prompt = model.requests[0].messages[0].text
    assert "repotting orchids" in prompt and "pawned the silver snuffbox" in prompt
    assert "Ann struck" not in prompt


async def test_long_sections_are_condensed_first_and_short_ones_kept() -> None:
    sheet = CharacterSheet.for_seat(tiny(), "Bob")
    sheet.me.story = "Bob repots orchids. " * 200
    model = ScriptedModel(replies={"summarise.section": [summary("Bob grows orchids.")],
                                   "summarise.script": [summary("I am Bob.")]})
    config = SummaryConfig(script_tokens=100, section_tokens=50)
    text = await Summariser(model, "en", "Bob", config=config).character(
        "Bob", {"Story": sheet.me.story, "Goals": "Find the killer."})
    assert text == "I am Bob."
    assert purposes(model) == ["summarise.section", "summarise.script"]
    combined = model.requests[1].messages[0].text
    assert "Bob grows orchids." in combined and "Find the killer." in combined


async def test_never_plays_from_the_sheet_as_written_without_a_call() -> None:
    agent, model = await started(MirageConfig(script="never"))
    assert purposes(model) == []
    assert "repotting orchids" in agent.description


async def test_history_is_condensed_when_over_budget_and_not_before() -> None:
    config = SummaryConfig(history_tokens=60, keep_lines=1)
    model = ScriptedModel(replies={"summarise.history": [summary("Ann: [Statement]: short.")]})
    summariser = Summariser(model, "en", "Bob", config=config)
    history = History(config)
    lines = [f"Ann: [Statement]: I was in the pantry at {n} o'clock that night." for n in range(9)]
    condensed_at = None
    for number, line in enumerate(lines, 1):
        history.add(line)
        was_over = history.over_budget()
        if await history.fit(summariser):
            condensed_at = number
            assert was_over
            break
        assert not was_over
    assert condensed_at is not None and purposes(model) == ["summarise.history"]
    assert history.summary == "Ann: [Statement]: short."
    assert history.lines == [lines[condensed_at - 1]]
    sent = model.requests[0].messages[0].text
    assert all(line in sent for line in lines[:condensed_at - 1])
    assert '"name: [action]: content"' in sent
    assert history.tokens <= config.history_tokens


async def test_the_agent_keeps_the_record_as_action_lines_and_condenses_it() -> None:
    agent, model = await started(MirageConfig(history_tokens=50),
                                 replies={"summarise.history": [summary("Older lines.")] * 9})
    await agent.observe(said("Ann", "I was in the pantry all evening long.", 3, "introduction"))
    await agent.observe(said("Cara", "Where were you at midnight, Bob?", 4, "question", "Bob"))
    await agent.observe(Investigated(seat="Dan", location="study", clue_ids=["s1"], index=5))
    await agent.observe(ClueRevealed(clue_id="s1", text="A rag.", location="study",
                                     found_by="Dan", index=6))
    assert "summarise.history" not in purposes(model)
    for n in range(7, 12):
        await agent.observe(said("Ann", "I keep repeating that I was in the pantry.", n))
    assert "summarise.history" in purposes(model)
    sent = next(r for r in model.requests if r.purpose == "summarise.history")
    text = sent.messages[0].text
    assert "Ann: [Introduction]: I was in the pantry" in text
    assert "Cara: [Ask] [Bob]: Where were you at midnight, Bob?" in text
    assert "Dan: [Investigate] [study]" in text and "[Clue] [study]: A rag." in text
    assert agent.history.summary.startswith("Older lines.")


async def test_held_clues_are_self_clues_in_every_prompt() -> None:
    agent, model = await started()
    await agent.observe(ClueRevealed(clue_id="c2", text="A torn dismissal notice.",
                                     audience=["Bob"], index=2))
    assert agent.self_clues and not agent.history.lines
    model.script("introduction", [{"thought": "t", "response": "I am Bob the gardener."}])
    speech = await agent.decide(Speak(kind="introduction", prompt="Introduce yourself."))
    assert speech.text == "I am Bob the gardener."
    prompt = model.requests[-1].messages[0].text
    assert "A torn dismissal notice." in prompt and "I am Bob." in prompt


async def test_a_turn_investigates_with_a_public_remark_or_asks_one_player() -> None:
    agent, model = await started(replies={"turn": [
        {"thought": "the study", "action": "investigate", "place": "study",
         "content": "The study may hide something."},
        {"thought": "Ann", "action": "ask", "target": "Ann", "content": "Where were you?"}]})
    decision = TakeTurn(candidates=["Ann", "Cara"], locations=["study", "cellar"])
    first = await agent.decide(decision)
    assert first == Investigate(location="study", statement="The study may hide something.")
    await agent.observe(ClueRevealed(clue_id="s1", text="A rag.", location="study",
                                     found_by="Bob", index=7))
    assert "[Investigate] [study]" in agent.last_action and "A rag." in agent.last_action
    second = await agent.decide(decision)
    assert second == Questions(target="Ann", questions=["Where were you?"])
    prompt = model.requests[-1].messages[0].text
    assert "The study may hide something." in prompt and "A rag." in prompt
    schema = model.requests[-1].json_schema
    assert schema is not None and set(schema["properties"]["place"]["anyOf"][0]["enum"]) == {
        "study", "cellar"}


async def test_ratings_are_two_bystander_calls_or_one_joint_call() -> None:
    statement = said("Ann", "I never left the pantry.", 9)
    agent, model = await started(replies={"rate.trust": [{"thought": "", "trust": 0}],
                                          "rate.doubt": [{"thought": "", "doubt": 2}]})
    rating = await agent.decide(RateStatement(statement=statement))
    assert (rating.trust, rating.doubt) == (0, 2)
    assert purposes(model)[-2:] == ["rate.trust", "rate.doubt"]
    assert all("I am Bob." not in r.messages[0].text for r in model.requests[-2:])
    assert "I never left the pantry." in model.requests[-1].messages[0].text

    agent, model = await started(MirageConfig(rating="joint", rate_view="character"),
                                 replies={"rate": [{"thought": "", "trust": 1, "doubt": 1}]})
    rating = await agent.decide(RateStatement(statement=statement))
    assert (rating.trust, rating.doubt) == (1, 1)
    assert purposes(model)[-1] == "rate" and "I am Bob." in model.requests[-1].messages[0].text


async def test_vote_and_accusation_name_a_candidate_with_the_reasoning() -> None:
    agent, _ = await started(replies={
        "vote": [{"thought": "Ann lied.", "name": "Ann"}],
        "accuse": [{"thought": "Cara hid the will.", "name": "Cara"}]})
    vote = await agent.decide(CastVote(candidates=["Ann", "Cara"], accused=["Ann"]))
    accusation = await agent.decide(Accuse(candidates=["Ann", "Cara"]))
    assert (vote.target, vote.reason) == ("Ann", "Ann lied.")
    assert (accusation.target, accusation.reason) == ("Cara", "Cara hid the will.")


async def test_a_new_act_is_folded_into_the_description() -> None:
    agent, model = await started(replies={"summarise.script": [summary("I am Bob."),
                                                               summary("Bob, act two.")]})
    await agent.observe(ActStarted(act=1, sheet=ActSheet(act=1, text="again"), index=1))
    assert purposes(model).count("summarise.script") == 1
    await agent.observe(ActStarted(act=2, audience=["Bob"], index=2, sheet=ActSheet(
        act=2, text="The lamp was the housekeeper's.", goals=["Explain the lamp."])))
    assert agent.description == "Bob, act two."
    sent = model.requests[-1].messages[0].text
    assert "I am Bob." in sent and "The lamp was the housekeeper's." in sent


def test_options_are_checked_by_name() -> None:
    agent = make_agent("mirage:rating=joint+history_tokens=800")
    assert isinstance(agent, MirageAgent)
    assert agent.config.rating == "joint" and agent.config.history_tokens == 800
    with pytest.raises(AgentSpecError, match="rating"):
        make_agent("mirage:rating=sometimes")


async def test_unparseable_replies_are_retried_then_fail_clearly() -> None:
    agent, model = await started(replies={"turn": ["not json", json.dumps({"x": 1})]})
    with pytest.raises(StructuredOutputError, match="Turn"):
        await agent.decide(TakeTurn(candidates=["Ann"], locations=[]))
    assert purposes(model).count("turn") == 2

