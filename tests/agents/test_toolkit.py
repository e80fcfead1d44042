"""The toolkit every architecture plays with: one way to call the seat's model (requests
tagged with purpose, seat, seed and the architecture's limits; free text; a line of speech;
structured replies with bounded retries), the reply schemas several architectures ask for,
and the text helpers that keep prompts within budget and tidy replies."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from jubensha.agents.toolkit import (
    Caller,
    RatingReply,
    chat,
    clean_speech,
    clip,
    clip_tokens,
    event_line,
    first_tokens,
    goals,
    nonempty,
    questions_schema,
    recent,
    speak,
    target_schema,
    timeline_lines,
    turn_schema,
    whole_sentences,
    window,
    within,
)
from jubensha.engine import Agent, CharacterSheet, ClueRevealed, SeatContext, Spoke, drafting
from jubensha.engine.defaults import RatingReply as EngineRatingReply
from jubensha.llm import Message, ModelError, Response, ScriptedModel, StructuredOutputError
from jubensha.memory.text import count_tokens
from jubensha.scripts import ActSheet, load_script

TINY = Path(__file__).parents[1] / "engine" / "tiny_script.yaml"
AGENTS = Path(__file__).parents[2] / "src" / "jubensha" / "agents"


def caller(model: ScriptedModel, **settings: object) -> Caller:
    return Caller(model, "Ann", "en", 7, **settings)  # type: ignore[arg-type]


async def seated(model: ScriptedModel | None) -> Agent:
    agent = Agent()
    await agent.start(SeatContext(sheet=CharacterSheet.for_seat(load_script(TINY), "Ann"),
                                  model=model, seed=11))
    return agent


# -- calls --------------------------------------------------------------------------------------
async def test_a_request_carries_the_seat_its_seed_its_purpose_and_the_limits() -> None:
    model = ScriptedModel()
    calls = caller(model, temperature=0.3, text_tokens=90, object_tokens=40)
    await calls.text("answer", chat("Where were you?"))
    await calls.text("answer", chat("Where were you?"), max_tokens=12, sample=2)
    await calls.structured("rate", chat("Rate it."), RatingReply)
    first, second, third = model.requests
    assert (first.purpose, first.seat, first.sample) == ("answer", "Ann", 0)
    assert first.config.model_dump() == {"temperature": 0.3, "max_tokens": 90, "top_p": None,
                                         "seed": 7, "stop": None}
    assert (second.config.max_tokens, second.sample) == (12, 2)
    assert third.config.max_tokens == 40
    assert third.json_schema == RatingReply.model_json_schema()


async def test_a_structured_reply_is_asked_again_only_up_to_its_attempts() -> None:
    model = ScriptedModel(replies={"rate": ["no", "still no", {"trust": 2, "doubt": 0}]})
    with pytest.raises(StructuredOutputError, match="after 2 attempt"):
        await caller(model, attempts=2).structured("rate", chat("Rate it."), RatingReply)
    model = ScriptedModel(replies={"rate": ["no", "still no", {"trust": 2, "doubt": 0}]})
    reply = await caller(model, attempts=3).structured_reply("rate", chat("Rate it."),
                                                              RatingReply)
    assert reply.value == RatingReply(trust=2, doubt=0)
    assert reply.raws[:2] == ["no", "still no"]
    assert "trust" in model.requests[-1].messages[-1].text  # the correction names the schema


async def test_a_seats_caller_has_its_model_name_language_and_seed() -> None:
    model = ScriptedModel()
    calls = Caller.for_seat((await seated(model)).seat, temperature=0.5, attempts=3)
    assert (calls.model, calls.seat, calls.lang, calls.seed) == (model, "Ann", "en", 11)
    assert (calls.temperature, calls.attempts) == (0.5, 3)


async def test_a_seat_without_a_model_fails_the_decision_asking() -> None:
    agent = await seated(None)
    with pytest.raises(ModelError, match="'Ann' has no model"):
        Caller.for_seat(agent.seat)


def test_a_prompt_leaves_out_an_empty_system_part() -> None:
    assert chat("Go.") == [Message(role="user", content="Go.")]
    assert [m.role for m in chat("Go.", "You are Ann.")] == ["system", "user"]


def test_an_empty_reply_is_a_model_error_naming_what_was_asked() -> None:
    assert nonempty("Yes.", "answer") == "Yes."
    with pytest.raises(ModelError, match="empty answer from the model"):
        nonempty("", "answer")


async def test_speech_streams_cleaned_and_a_cut_reply_loses_its_unfinished_sentence() -> None:
    model = ScriptedModel(replies={"statement": [
        "Ann: I was asleep. Bob: Really?",
        Response(text="I was asleep. Then I heard a", model="scripted",
                 finish_reason="length")]})
    agent = await seated(model)
    shown: list[str] = []
    with drafting(shown.append):
        said = await speak(agent, Caller.for_seat(agent.seat), "statement", chat("Speak."),
                           names=["Ann", "Bob"], limit=200, max_tokens=30)
    assert said == "I was asleep."
    assert shown and shown[-1] == "I was asleep." and not any("Ann:" in s for s in shown)
    assert model.requests[0].config.max_tokens == 30
    cut = await speak(agent, Caller.for_seat(agent.seat), "statement", chat("Speak."),
                      names=["Ann", "Bob"], limit=200)
    assert cut == "I was asleep."


def test_only_the_toolkit_builds_requests_in_the_agents_layer() -> None:
    """Every architecture calls its model through ``Caller``: no other module of the
    agents layer makes a ``Request`` or calls ``generate_object`` itself."""
    found = []
    for path in sorted(AGENTS.rglob("*.py")):
        if path.parent.name == "toolkit":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in ("Request", "generate_object"):
                found.append(f"{path.relative_to(AGENTS)}:{node.lineno} {node.func.id}")
    assert found == []


# -- schemas ------------------------------------------------------------------------------------
def test_questions_are_exactly_count_and_name_their_target_when_there_are_candidates() -> None:
    schema = questions_schema(2, ["Bob", "Cara"])
    spec = schema.model_json_schema()
    assert list(spec["properties"]) == ["target", "questions"]
    assert spec["properties"]["target"]["enum"] == ["Bob", "Cara"]
    assert (spec["properties"]["questions"]["minItems"],
            spec["properties"]["questions"]["maxItems"]) == (2, 2)
    plain = questions_schema(1, description="In the first person.").model_json_schema()
    assert list(plain["properties"]) == ["questions"]
    assert plain["properties"]["questions"]["description"] == "In the first person."
    assert questions_schema(2, ("Bob", "Cara")) is schema  # built once per arguments


def test_an_open_turn_may_investigate_only_where_there_are_places() -> None:
    ask_only = turn_schema(["Bob"], []).model_json_schema()["properties"]
    assert ask_only["action"]["const"] == "ask" and "location" not in ask_only
    both = turn_schema(["Bob"], ["study", "tower"]).model_json_schema()["properties"]
    assert both["action"]["enum"] == ["ask", "investigate"]
    assert both["location"]["enum"] == ["study", "tower"]


def test_a_vote_names_a_candidate_and_a_reason() -> None:
    spec = target_schema(["Bob", "Cara"], "accuse").model_json_schema()
    assert spec["title"] == "Accuse" and list(spec["properties"]) == ["target", "reason"]
    assert spec["properties"]["target"]["enum"] == ["Bob", "Cara"]


def test_a_rating_is_the_one_the_tables_default_asks_for() -> None:
    assert RatingReply is EngineRatingReply
    with pytest.raises(ValueError):
        RatingReply(trust=3, doubt=0)


# -- text ---------------------------------------------------------------------------------------
def test_an_event_reads_as_one_plain_line_in_the_games_language() -> None:
    asked = Spoke(speaker="Ann", to="Bob", kind="question", text="Where were you?")
    assert event_line(asked, "en") == "Ann asks Bob: Where were you?"
    assert event_line(asked, "zh") == "Ann问Bob：Where were you?"
    clue = ClueRevealed(clue_id="c1", title="Note", text="Meet at ten.", audience=["Ann"])
    assert event_line(clue, "en") == 'Clue "Note": Meet at ten.'


def test_the_goals_are_the_acts_then_the_final_ones_then_the_mission() -> None:
    me = load_script(TINY).character("Ann").model_copy(
        update={"final_goals": ["Find the thief."], "mission": "Stay calm."})
    assert goals(me, ActSheet(act=2, goals=["Hide the key."])) == ["Hide the key."]
    assert goals(me, ActSheet(act=2)) == ["Find the thief."]
    assert goals(me.model_copy(update={"final_goals": []}), None) == ["Stay calm."]
    assert goals(me.model_copy(update={"final_goals": [], "mission": ""}), None) == []


def test_a_timeline_entry_reads_time_then_text() -> None:
    me = load_script(TINY).character("Ann")
    lines = timeline_lines(me)
    assert len(lines) == len(me.timeline)
    for line, entry in zip(lines, me.timeline, strict=True):
        assert line == (f"{entry.time} {entry.text}" if entry.time else entry.text)


@pytest.mark.parametrize(("raw", "expected"), [
    ("Ann: I was in the scullery.", "I was in the scullery."),
    ('"I saw a lamp."', "I saw a lamp."),
    ("I was asleep. Bob: Really? Ann: Yes.", "I was asleep."),
    ("**Ann**: Fine.", "Fine."),
    ("Bob: Where were you? Ann: Asleep.", "Where were you?"),
])
def test_speech_is_cleaned_of_speaker_labels_and_other_seats_lines(raw: str,
                                                                   expected: str) -> None:
    assert clean_speech(raw, "Ann", ["Ann", "Bob"], 200) == expected


def test_long_speech_is_cut_at_a_word() -> None:
    assert clean_speech("word " * 100, "Ann", ["Ann"], 23) == "word word word word…"
    assert clip("one two three", 100) == "one two three"


def test_a_reply_cut_by_its_token_limit_keeps_its_whole_sentences() -> None:
    assert whole_sentences("I slept. Then I heard a") == "I slept."
    assert whole_sentences("我睡了。后来我听见") == "我睡了。"
    assert whole_sentences("no sentence ended") == "no sentence ended"


def test_the_history_window_start_moves_in_jumps_within_budget() -> None:
    lines = [f"Line {n}: someone said something of length {'x' * (n % 7)}." for n in range(200)]
    starts = []
    for count in range(1, len(lines) + 1):
        kept = window(lines[:count], 300)
        assert kept and kept[-1] == lines[count - 1]
        assert sum(len(line) + 1 for line in kept) <= 300
        starts.append(count - len(kept))
    assert starts == sorted(starts)  # the window only moves forward
    assert len(set(starts)) <= len(starts) / 3  # and stays put while half the budget fills


def test_the_newest_lines_fit_a_budget_of_characters_or_tokens() -> None:
    lines = [f"line number {n} of the game" for n in range(50)]
    kept = recent(lines, 100)
    assert kept == lines[-len(kept):] and sum(len(line) + 1 for line in kept) <= 101
    by_tokens = within(lines, 40)
    assert by_tokens == lines[-len(by_tokens):]
    assert sum(count_tokens(line) for line in by_tokens) <= 40


def test_a_text_is_cut_to_a_token_budget() -> None:
    text = "The lamp went out at nine. Nobody saw who left the tower. " * 20
    cut = clip_tokens(text, 30)
    assert cut.endswith("…") and count_tokens(cut[:-1]) <= 30
    assert clip_tokens("Short.", 30) == "Short."
    start = first_tokens(text, 30)
    assert text.startswith(start.removesuffix("…")) and start.endswith("…")
    assert first_tokens(text, 0) == ""
