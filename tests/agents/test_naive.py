"""The naive agent: what its prompts hold, the schemas it asks for, and its budgets."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest

from jubensha.agents.disclosure import SeatText, screen_speech
from jubensha.agents.naive import NaiveAgent
from jubensha.agents.person import first_person
from jubensha.agents.registry import AgentSpecError, architectures, make_agent
from jubensha.engine.agent import CharacterSheet, SeatContext
from jubensha.engine.decisions import (
    Accuse,
    AskQuestions,
    CastVote,
    Investigate,
    Questions,
    RateStatement,
    Speak,
    Speech,
    TakeTurn,
)
from jubensha.engine.events import ActStarted, ClueRevealed, HostSpoke, Spoke
from jubensha.engine.game import Game, Seat
from jubensha.engine.procedure import find_procedure
from jubensha.llm.base import ModelError, Response
from jubensha.llm.calls import CallLog
from jubensha.llm.fake import ScriptedModel
from jubensha.scripts import ActSheet, Script, bundled_scripts, load_script

TINY = Path(__file__).parents[1] / "engine" / "tiny_script.yaml"
INTRO = Speak(kind="introduction", prompt="Introduce yourself.")


async def seated(name: str, model: ScriptedModel, script: Script | None = None,
                 spec: str = "naive") -> NaiveAgent:
    agent = make_agent(spec)
    assert isinstance(agent, NaiveAgent)
    sheet = CharacterSheet.for_seat(script or load_script(TINY), name)
    await agent.start(SeatContext(sheet=sheet, model=model, seed=42))
    return agent


def prompt(model: ScriptedModel, index: int = -1) -> tuple[str, str]:
    messages = model.requests[index].messages
    return messages[0].text, messages[-1].text


def test_agents_are_made_by_name_with_options() -> None:
    assert "naive" in architectures()
    agent = make_agent("naive:history_chars=300+temperature=0.1")
    assert isinstance(agent, NaiveAgent)
    assert (agent.config.history_chars, agent.config.temperature) == (300, 0.1)
    assert make_agent("naive") is not make_agent("naive")


@pytest.mark.parametrize(("spec", "words"), [
    ("wizard", r"unknown architecture 'wizard' \(known: .*naive"),
    ("naive:colour=red", "colour"),
    ("naive:history_chars", "write key=value"),
    ("naive:history_chars=-5", "history_chars"),
])
def test_bad_specs_say_what_is_wrong(spec: str, words: str) -> None:
    with pytest.raises(AgentSpecError, match=words):
        make_agent(spec)


async def test_the_murderer_is_told_it_may_lie_and_civilians_to_be_honest() -> None:
    model = ScriptedModel()
    ann = await seated("Ann", model)
    await ann.decide(Speak(kind="introduction", prompt="Introduce yourself."))
    system, user = prompt(model)
    assert "You are the murderer" in system and "may lie" in system
    assert "bloody gloves" in system and "Introduce yourself." in user
    bob = await seated("Bob", model)
    await bob.decide(Speak(kind="introduction", prompt="Introduce yourself."))
    system, _ = prompt(model)
    assert "You are innocent" in system and "Answer honestly" in system
    assert "forty pounds" in system and "candlestick" not in system


async def test_speech_requests_carry_purpose_seat_and_seat_seed() -> None:
    model = ScriptedModel()
    agent = await seated("Cara", model)
    question = Spoke(index=3, speaker="Dan", kind="question", text="Where were you?", to="Cara")
    speech = await agent.decide(Speak(kind="answer", question=question))
    request = model.requests[-1]
    assert (request.purpose, request.seat, request.config.seed) == ("answer", "Cara", 42)
    assert request.json_schema is None and speech.text
    assert "Dan asks you: Where were you?" in request.messages[-1].text


async def test_votes_use_an_enum_of_the_candidates() -> None:
    model = ScriptedModel(replies={"vote": [{"target": "Dan", "reason": "He lied."}]})
    agent = await seated("Bob", model)
    vote = await agent.decide(CastVote(candidates=["Ann", "Cara", "Dan"], victim="Lord Vale"))
    assert (vote.target, vote.reason) == ("Dan", "He lied.")
    schema = model.requests[-1].json_schema
    assert schema["properties"]["target"]["enum"] == ["Ann", "Cara", "Dan"]
    assert "killed Lord Vale" in prompt(model)[1]


async def test_a_vote_outside_the_enum_is_retried_then_given_up() -> None:
    model = ScriptedModel(replies={"vote": [{"target": "Zed"}, {"target": "Zed"}]})
    agent = await seated("Bob", model)
    with pytest.raises(ModelError):
        await agent.decide(CastVote(candidates=["Ann", "Cara"]))
    assert len(model.requests) == agent.config.attempts


async def test_questions_match_the_count_asked_for() -> None:
    model = ScriptedModel()
    agent = await seated("Dan", model)
    action = await agent.decide(AskQuestions(candidates=["Ann", "Bob"], count=2))
    assert isinstance(action, Questions)
    assert action.target in ("Ann", "Bob") and len(action.questions) == 2
    questions = model.requests[-1].json_schema["properties"]["questions"]
    assert (questions["minItems"], questions["maxItems"]) == (2, 2)


async def test_accusations_ratings_and_open_turns() -> None:
    model = ScriptedModel(replies={"turn": [{"action": "investigate", "target": "Ann",
                                              "question": "?", "location": "study"}]})
    agent = await seated("Dan", model)
    accusation = await agent.decide(Accuse(candidates=["Ann", "Bob"]))
    assert accusation.target in ("Ann", "Bob")
    statement = Spoke(speaker="Ann", kind="statement", text="I was asleep.")
    rating = await agent.decide(RateStatement(statement=statement))
    assert 0 <= rating.trust <= 2 and 0 <= rating.doubt <= 2
    turn = await agent.decide(TakeTurn(candidates=["Ann"], locations=["study"]))
    assert turn == Investigate(location="study")


async def test_history_keeps_the_newest_events_within_budget() -> None:
    model = ScriptedModel()
    agent = await seated("Bob", model, spec="naive:history_chars=200")
    for number in range(50):
        await agent.observe(Spoke(index=number, speaker="Ann", kind="statement",
                                  text=f"Remark number {number} about the library."))
    await agent.observe(HostSpoke(text="Host instructions are not history."))
    await agent.decide(Speak(kind="statement", prompt="Speak."))
    _, user = prompt(model)
    assert "Remark number 49" in user and "Remark number 10 " not in user
    history = user.split("\n\n")[0]
    assert len(history) < 260 and "Host instructions" not in user


async def test_new_acts_reach_the_system_prompt_and_clues_open_the_user_message() -> None:
    model = ScriptedModel()
    agent = await seated("Bob", model)
    await agent.observe(ClueRevealed(clue_id="c2", title="Note", text="A torn notice.",
                                     audience=["Bob"]))
    await agent.observe(ActStarted(act=2, sheet=ActSheet(act=2, text="You recall the lamp.",
                                                         goals=["Explain the lamp."])))
    await agent.decide(Speak(kind="statement", prompt="Speak."))
    system, user = prompt(model)
    assert "I recall the lamp." in system and "Explain the lamp" in system  # 1st person
    assert user.startswith("Clues you know: Clue \"Note\": A torn notice.")
    assert "A torn notice." not in system  # a clue would change the sheet's cached prefix


async def test_chinese_scripts_get_chinese_prompts() -> None:
    script = load_script(bundled_scripts()["tingsong-tea-estate"])
    model = ScriptedModel()
    agent = await seated(script.names[0], model, script=script)
    await agent.decide(CastVote(candidates=script.names[1:]))
    system, user = prompt(model)
    assert system.startswith("你正在剧本杀游戏") and "现在投票" in user


async def test_an_empty_speech_is_a_model_error() -> None:
    model = ScriptedModel(replies={"statement": ["   "]})
    agent = await seated("Ann", model)
    with pytest.raises(ModelError, match="empty statement"):
        await agent.decide(Speak(kind="statement", prompt="Speak."))


async def test_a_seat_without_a_model_cannot_decide() -> None:
    agent = NaiveAgent()
    await agent.start(SeatContext(sheet=CharacterSheet.for_seat(load_script(TINY), "Ann")))
    with pytest.raises(ModelError, match="no model"):
        await agent.decide(Speak(kind="statement"))


async def test_a_seats_stable_prompt_part_is_a_prefix_of_its_next_prompt() -> None:
    """Sheet, clues and history come before the decision, so for consecutive calls of a
    seat with the same clues the earlier system message and clues-and-history text open the
    later prompt (a server's prefix cache reuses them)."""
    script = load_script(bundled_scripts()["lighthouse-keeper"])
    log = CallLog()
    model = ScriptedModel()
    seats = {name: Seat(make_agent("naive:history_chars=100000"),
                        model=log.seat(model, name, access="seat")) for name in script.names}
    await Game(script, find_procedure("player"), seats, seed=1).run()
    checked = 0
    for name in script.names:
        calls = [r for r in log.sink.records if r.seat == name and not r.error]
        for before, after in pairwise(calls):
            system, user = (m.text for m in before.messages)
            stable = user.rsplit("\n\n", 1)[0] if "What happened so far" in user else ""
            if after.messages[1].text.split("What happened")[0] != user.split(
                    "What happened")[0]:
                continue  # a new clue: the clues block changed
            assert after.messages[0].text == system
            assert after.messages[1].text.startswith(stable), (name, before.purpose)
            checked += 1
    assert checked > 3 * len(script.names)


async def test_a_civilians_story_is_in_the_first_person_and_secrets_stay_addressed() -> None:
    script = load_script(TINY)
    bob = script.character("Bob").model_copy(update={
        "story": "You repotted orchids. Your hands were muddy.", "secrets": ["You owe money."]})
    ann = script.character("Ann").model_copy(update={
        "story": "You struck Lord Vale. Your gloves were wet.", "secrets": ["You hid them."]})
    script = script.model_copy(update={"characters": [ann, bob, *script.characters[2:]]})
    model = ScriptedModel()
    await (await seated("Bob", model, script)).decide(INTRO)
    system, _ = prompt(model)
    assert "I repotted orchids. My hands were muddy." in system and "You owe money" in system
    await (await seated("Ann", model, script)).decide(INTRO)
    system, _ = prompt(model)  # a murderer told "I struck Lord Vale" says it
    assert "You struck Lord Vale. Your gloves were wet." in system and "You hid them" in system


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_murderer_is_reminded_last_in_words_that_confess_nothing(lang: str) -> None:
    script = load_script(TINY).model_copy(update={"language": lang})
    model = ScriptedModel()
    await (await seated("Ann", model, script)).decide(INTRO)
    reminder = prompt(model)[1].splitlines()[-1]
    assert reminder in (
        "Keep what you did that night to yourself, and deny it if anyone accuses you.",
        "那天夜里你做过的事不要说出来；有人指认你时，要否认。")
    # small models read instructions aloud: read aloud, the reminder confesses nothing
    murderer = SeatText.of(script.character("Ann"), [], 6, murderer=True,
                           victims=["Lord Vale"])
    assert screen_speech(first_person(reminder, lang), murderer).confession is None
    await (await seated("Bob", model, script)).decide(INTRO)
    assert prompt(model)[1].splitlines()[-1] != reminder


@pytest.mark.parametrize(("reply", "finish", "said"), [
    ("I was in the glasshouse. I saw a lamp in the", "length", "I was in the glasshouse."),
    ("I was in the glasshouse. I saw a lamp", "stop", "I was in the glasshouse. I saw a lamp"),
    ("I saw a lamp in the", "length", "I saw a lamp in the"),
])
async def test_a_speech_cut_by_its_token_limit_ends_at_its_last_whole_sentence(
        reply: str, finish: str, said: str) -> None:
    model = ScriptedModel(replies={"statement": [Response(text=reply, model="scripted",
                                                          finish_reason=finish)]})
    agent = await seated("Bob", model)
    assert await agent.decide(Speak(kind="statement", prompt="Speak.")) == Speech(text=said)
