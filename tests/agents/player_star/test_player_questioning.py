"""Search by questioning: the sensors are read about every suspect of every victim, the most
suspicious suspect is asked m questions, and murderers use the murderer's prompts."""

from __future__ import annotations

from collections import Counter

from player_helpers import (
    about,
    halvard,
    own_text,
    purposes,
    seated,
    sent,
    user_text,
    victim_of,
)

from jubensha.engine.decisions import AskQuestions, TakeTurn
from jubensha.engine.events import Spoke
from jubensha.llm.base import Request
from jubensha.llm.fake import ScriptedModel
from jubensha.scripts import bundled_scripts, load_script

QUESTIONING_SENSORS = ["sensor.emotion", "sensor.motivation", "sensor.suspicion"]


def ask(count: int = 1, round_: int = 1, candidates: list[str] | None = None) -> AskQuestions:
    return AskQuestions(stage="questioning", round=round_, count=count,
                        candidates=candidates or ["Ann", "Cara", "Dan"])


async def test_each_questioning_sensor_reads_each_suspect_once() -> None:
    model = ScriptedModel()
    bob = await seated("Bob", model)
    await bob.decide(ask())
    counts = purposes(model)
    assert [counts[p] for p in QUESTIONING_SENSORS] == [3, 3, 3]
    assert counts["sensor.information_value"] == 0  # refinement only
    for purpose in QUESTIONING_SENSORS:
        assert sorted(about(r, ["Ann", "Cara", "Dan"]) for r in sent(model, purpose)) == [
            "Ann", "Cara", "Dan"]
    assert counts["question"] == 1


async def test_with_two_victims_every_victim_and_suspect_pair_is_read() -> None:
    script = halvard()
    owen = await seated("Owen Pryce", ScriptedModel(), script)
    model = owen.core.seat.model
    others = [c.name for c in script.characters if c.name != "Owen Pryce"]
    victims = [v.name for v in script.victims]
    await owen.decide(AskQuestions(stage="questioning", round=1, candidates=others))
    for purpose in QUESTIONING_SENSORS:
        pairs = Counter((victim_of(r, victims), about(r, others))
                        for r in sent(model, purpose))
        assert pairs == Counter({(v, s): 1 for v in victims for s in others})


async def test_m_questions_are_asked_in_one_json_reply() -> None:
    model = ScriptedModel()
    bob = await seated("Bob", model)
    action = await bob.decide(ask(count=3))
    assert len(action.questions) == 3
    request = sent(model, "question")[0]
    assert "You may ask" in user_text(request) and "3 questions" in user_text(request)
    questions = request.json_schema["properties"]["questions"]
    assert (questions["minItems"], questions["maxItems"]) == (3, 3)


def choose_by_suspect(suspicious: str):
    """Sensor replies that find ``suspicious`` guilty on every sensor, everyone else not."""
    answers = {"sensor.emotion": ("Negative", "Positive"),
               "sensor.motivation": ("Yes", "No"), "sensor.suspicion": ("Yes", "No"),
               "sensor.information_value": ("High", "Low")}

    def reply(request: Request) -> dict | None:
        if request.purpose not in answers:
            return None
        guilty = about(request, ["Ann", "Bob", "Cara", "Dan"]) == suspicious
        return {"answer": answers[request.purpose][0 if guilty else 1], "reason": "Because."}

    return reply


async def test_the_target_is_the_suspect_the_sensors_find_most_suspicious() -> None:
    model = ScriptedModel(replies={"*": choose_by_suspect("Cara")})
    bob = await seated("Bob", model)
    action = await bob.decide(ask())
    assert action.target == "Cara"
    [question] = sent(model, "question")[:1]
    assert "What your script says about Cara:" in own_text(question)
    assert "On motive for the crime, your view of Cara: Yes. Because." in user_text(question)


async def test_readings_are_reused_until_what_they_read_changes() -> None:
    model = ScriptedModel()
    bob = await seated("Bob", model, spec="player:prune=false")
    first = await bob.decide(ask())
    calls = purposes(model)
    await bob.decide(ask())
    assert purposes(model) - calls == Counter({"question": 1})  # nothing new to read
    assert bob.core.state.asked[first.target] == 1
    await bob.observe(Spoke(index=5, speaker="Bob", kind="statement", text="Nice weather."))
    calls = purposes(model)
    await bob.decide(ask())
    assert (purposes(model) - calls)["sensor.emotion"] == 0  # not retrieved for anyone
    await bob.observe(Spoke(index=6, speaker="Dan", kind="statement",
                            text="Cara was near Lord Vale's library at midnight."))
    calls = purposes(model)
    await bob.decide(ask())
    new = [about(r, ["Ann", "Cara", "Dan"]) for r in sent(model, "sensor.emotion")[3:]]
    assert (purposes(model) - calls)["sensor.emotion"] == len(new) == 3  # the victim's name
    assert sorted(new) == ["Ann", "Cara", "Dan"]


async def test_with_equal_readings_the_seat_asked_least_is_asked() -> None:
    model = ScriptedModel(replies={"*": lambda r: {"answer": "Yes", "reason": "."}
                                   if r.purpose in ("sensor.motivation", "sensor.suspicion")
                                   else {"answer": "Neutral", "reason": "."}
                                   if r.purpose == "sensor.emotion" else None})
    bob = await seated("Bob", model, spec="player:prune=false")
    targets = [(await bob.decide(ask())).target for _ in range(3)]
    assert targets == ["Ann", "Cara", "Dan"]


async def test_only_the_allowed_candidates_are_read_and_asked() -> None:
    model = ScriptedModel()
    bob = await seated("Bob", model)
    action = await bob.decide(ask(candidates=["Dan"]))
    assert action.target == "Dan"
    assert {about(r, ["Ann", "Cara", "Dan"]) for r in sent(model, "sensor.emotion")} == {"Dan"}


async def test_an_open_conversation_turn_is_a_questioning_turn() -> None:
    model = ScriptedModel()
    bob = await seated("Bob", model)
    action = await bob.decide(TakeTurn(stage="open", round=1, candidates=["Ann", "Cara"],
                                       locations=["study"]))
    assert action.type == "questions" and action.target in ("Ann", "Cara")
    assert len(action.questions) == 1


async def test_a_sensor_reply_that_never_fits_reads_as_nothing() -> None:
    model = ScriptedModel(replies={"sensor.emotion": lambda r: "I feel fine about them."})
    bob = await seated("Bob", model)
    action = await bob.decide(ask())
    assert action.target in ("Ann", "Cara", "Dan")
    assert all(r.sensor != "emotion" for r in bob.core.state.readings("Lord Vale", "Ann"))


async def test_murderer_seats_use_the_murderers_prompts() -> None:
    model = ScriptedModel()
    ann = await seated("Ann", model)
    await ann.decide(ask(candidates=["Bob", "Cara", "Dan"]))
    sensor = user_text(sent(model, "sensor.emotion")[0])
    question = user_text(sent(model, "question")[0])
    assert "You are the one who did it" in sensor and "You did not do it" not in sensor
    assert "question the others as if you suspected them" in question
    assert "You are the murderer: you killed Lord Vale" in sent(model, "question")[0] \
        .messages[0].text
    bob_model = ScriptedModel()
    bob = await seated("Bob", bob_model)
    await bob.decide(ask())
    sensor = user_text(sent(bob_model, "sensor.emotion")[0])
    assert "You did not do it" in sensor and "may be meant to mislead you" in sensor
    assert "You are not the murderer" in sent(bob_model, "question")[0].messages[0].text


async def test_with_two_murderers_the_variant_follows_who_killed_which_victim() -> None:
    script = halvard()
    julian = next(c for c in script.characters if c.name == "Julian Ashby")
    killed, spared = julian.killed[0], next(v.name for v in script.victims
                                            if v.name not in julian.killed)
    model = ScriptedModel()
    agent = await seated("Julian Ashby", model, script)
    others = [c.name for c in script.characters if c.name != julian.name]
    await agent.decide(AskQuestions(stage="questioning", round=1, candidates=others))
    for request in sent(model, "sensor.motivation"):
        text = user_text(request)
        if f"\n{killed} has been murdered" in text:
            assert "You are the one who did it" in text
        else:
            assert f"\n{spared} has been murdered" in text and "You did not do it" in text


async def test_requests_carry_purpose_seat_and_the_seat_seed() -> None:
    model = ScriptedModel()
    bob = await seated("Bob", model)
    await bob.decide(ask())
    assert {r.seat for r in model.requests} == {"Bob"}
    assert {r.config.seed for r in model.requests} == {7}
    readings = {r.sensor: r.value for r in bob.core.state.readings("Lord Vale", "Ann")}
    assert set(readings) == {"emotion", "motivation", "suspicion"}
    assert readings["emotion"] in ("Positive", "Neutral", "Negative")


async def test_chinese_games_get_chinese_prompts_and_choices() -> None:
    script = load_script(bundled_scripts()["tingsong-tea-estate"])
    me, *others = script.names
    model = ScriptedModel()
    agent = await seated(me, model, script)
    await agent.decide(AskQuestions(stage="questioning", round=1, candidates=others))
    text = user_text(sent(model, "sensor.motivation")[0])
    assert "被杀害了" in text and "请从“是”或“否”中选择一个回答" in text
    schema = sent(model, "sensor.motivation")[0].json_schema
    assert schema["properties"]["answer"]["enum"] == ["是", "否"]
    assert {r.value for r in agent.core.state.readings(script.victims[0].name, others[0])
            if r.sensor == "motivation"} <= {"Yes", "No"}


async def test_a_model_summary_condenses_the_readings_of_the_chosen_suspect() -> None:
    model = ScriptedModel(replies={"summary": lambda r: "Condensed: very suspicious."})
    bob = await seated("Bob", model, spec="player:summary=model")
    first = await bob.decide(ask())
    assert purposes(model)["summary"] == 1
    summarise = user_text(sent(model, "summary")[0])
    assert f"On motive for the crime, your view of {first.target}" in summarise
    assert "Condensed: very suspicious." in user_text(sent(model, "question")[0])
    await bob.decide(ask(candidates=[first.target]))  # same readings: summary reused
    assert purposes(model)["summary"] == 1
