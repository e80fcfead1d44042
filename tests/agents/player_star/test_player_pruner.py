"""The pruner: after every round but the last it narrows each victim's suspect list from the
refinement sensors; the list may grow back; a reply that never validates keeps it."""

from __future__ import annotations

from player_helpers import about, halvard, purposes, seated, sent, user_text, victim_of

from jubensha.engine.decisions import AskQuestions
from jubensha.engine.events import Spoke
from jubensha.llm.base import Request
from jubensha.llm.fake import ScriptedModel

OTHERS = ["Ann", "Cara", "Dan"]


def ask(round_: int, stage: str = "questioning") -> AskQuestions:
    return AskQuestions(stage=stage, round=round_, candidates=OTHERS)


async def test_the_pruner_shrinks_the_list_then_lets_it_grow_back() -> None:
    model = ScriptedModel(replies={"pruner": [{"suspicion": ["Ann"]},
                                              {"suspicion": ["Ann", "Cara"]}]})
    bob = await seated("Bob", model)
    assert bob.suspects == {"Lord Vale": OTHERS}
    await bob.decide(ask(1))
    assert purposes(model)["pruner"] == 0
    await bob.decide(ask(2))
    assert bob.suspects == {"Lord Vale": ["Ann"]}
    assert (await bob.decide(ask(2))).target == "Ann"  # same round: no new pruning
    await bob.decide(ask(3))
    assert bob.suspects == {"Lord Vale": ["Ann", "Cara"]}
    assert purposes(model)["pruner"] == 2
    updates = [(u.before, u.after) for u in bob.core.state.updates]
    assert updates == [(OTHERS, ["Ann"]), (["Ann"], ["Ann", "Cara"])]
    regrow = sent(model, "pruner")[1]
    assert "You no longer suspect Cara, Dan" in user_text(regrow)
    items = regrow.json_schema["properties"]["suspicion"]["items"]
    assert items["enum"] == OTHERS


async def test_refinement_asks_every_sensor_about_every_other_seat_in_one_call() -> None:
    """The authors' released code: all refinement sensors in one prompt per other agent,
    so a seat dropped from the list still gets fresh readings and can come back."""
    model = ScriptedModel(replies={"pruner": [{"suspicion": ["Dan"]}, {"suspicion": ["Dan"]}]})
    bob = await seated("Bob", model)
    await bob.decide(ask(1))
    await bob.observe(Spoke(index=1, speaker="Dan", kind="statement",
                            text="I was in bed when Lord Vale died."))
    await bob.decide(ask(2))
    counts = purposes(model)
    assert counts["sensors"] == 3 and counts["sensor.information_value"] == 0
    assert counts["sensor.emotion"] == 3  # round 1 only: refinement readings serve round 2
    first = sent(model, "sensors")[0]
    assert set(first.json_schema["required"]) == {
        "emotion", "motivation", "suspicion", "information_value", "emotion_reason",
        "motivation_reason", "suspicion_reason", "information_value_reason"}
    await bob.observe(Spoke(index=2, speaker="Ann", kind="statement",
                            text="Lord Vale was alive at eleven, Cara said so."))
    await bob.decide(ask(3))
    assert sorted(about(r, OTHERS) for r in sent(model, "sensors")[3:]) == OTHERS
    summary = user_text(sent(model, "pruner")[1])
    for name in OTHERS:  # Ann and Cara were dropped, yet read again
        assert f"About {name}:" in summary
    assert "On value of further questioning, your view of Ann:" in summary


async def test_the_earlier_code_reads_current_suspects_one_sensor_per_call() -> None:
    """``refine_targets=suspects+refine_call=separate``: the authors' earlier code (and
    this agent's earlier behaviour)."""
    model = ScriptedModel(replies={"pruner": [{"suspicion": ["Dan"]}, {"suspicion": ["Dan"]}]})
    bob = await seated("Bob", model, spec="player:refine_targets=suspects+refine_call=separate")
    await bob.decide(ask(1))
    await bob.observe(Spoke(index=1, speaker="Dan", kind="statement",
                            text="I was in bed when Lord Vale died."))
    await bob.decide(ask(2))
    counts = purposes(model)
    assert counts["sensor.information_value"] == 3 and counts["sensors"] == 0
    assert counts["sensor.emotion"] == 6  # 3 to question in round 1, 3 to refine
    await bob.observe(Spoke(index=2, speaker="Ann", kind="statement",
                            text="Lord Vale was alive at eleven."))
    await bob.decide(ask(3))
    info = sent(model, "sensor.information_value")
    assert [about(r, OTHERS) for r in info[3:]] == ["Dan"]
    summary = user_text(sent(model, "pruner")[0])
    for name in OTHERS:
        assert f"About {name}:" in summary
    assert "On value of further questioning, your view of Ann:" in summary


async def test_without_regrowth_only_current_suspects_can_be_kept() -> None:
    model = ScriptedModel(replies={"pruner": [{"suspicion": ["Cara", "Dan"]}]})
    bob = await seated("Bob", model, spec="player:regrow=false")
    await bob.decide(ask(1))
    await bob.decide(ask(2))
    await bob.decide(ask(3))
    last = sent(model, "pruner")[1]
    assert last.json_schema["properties"]["suspicion"]["items"]["enum"] == ["Cara", "Dan"]
    assert "no longer suspect" not in user_text(last)


async def test_an_invalid_pruner_reply_keeps_the_list() -> None:
    model = ScriptedModel(replies={"pruner": lambda request: {"suspicion": ["Nobody"]}})
    bob = await seated("Bob", model)
    await bob.decide(ask(1))
    await bob.decide(ask(2))
    assert bob.suspects == {"Lord Vale": OTHERS}
    assert purposes(model)["pruner"] == bob.config.attempts


async def test_pruning_can_be_switched_off() -> None:
    model = ScriptedModel()
    bob = await seated("Bob", model, spec="player:prune=false")
    for round_ in (1, 2, 3):
        await bob.decide(ask(round_))
    assert purposes(model)["pruner"] == 0
    assert purposes(model)["sensors"] == purposes(model)["sensor.information_value"] == 0


async def test_a_new_stage_counts_as_a_new_round() -> None:
    model = ScriptedModel()
    bob = await seated("Bob", model)
    await bob.decide(ask(None, stage="introduction"))
    await bob.decide(ask(None, stage="introduction"))
    assert purposes(model)["pruner"] == 0
    await bob.decide(ask(1))
    assert purposes(model)["pruner"] == 1


async def test_each_victim_has_its_own_list_and_the_murderer_prunes_in_disguise() -> None:
    script = halvard()
    victims = [v.name for v in script.victims]
    others = [c.name for c in script.characters if c.name != "Clara Vale"]
    model = ScriptedModel(replies={"pruner": [{"suspicion": [others[0]]},
                                              {"suspicion": others[1:3]}]})
    clara = await seated("Clara Vale", model, script)
    for round_ in (1, 2):
        await clara.decide(AskQuestions(stage="questioning", round=round_, candidates=others))
    assert clara.suspects == {victims[0]: [others[0]], victims[1]: others[1:3]}
    prompts = {victim_of(r, victims): user_text(r) for r in sent(model, "pruner")}
    killed = script.character("Clara Vale").killed[0]
    for victim, text in prompts.items():
        disguised = "You are the one who did it" in text
        assert disguised == (victim == killed)


async def test_information_value_never_picks_the_questioning_target() -> None:
    """Appendix C.5: information value is exclusive to action-space refinement. Dan is
    the one worth asking by that sensor alone; the questioning sensors tie, so the seat
    asked least is asked (Ann, then Cara), not Dan."""
    same = {"emotion": "Neutral", "motivation": "Yes", "suspicion": "Yes"}

    def reading(request: Request) -> dict:
        worth = "High" if about(request, OTHERS) == "Dan" else "Low"
        return {**same, "information_value": worth,
                **{f"{name}_reason": "." for name in (*same, "information_value")}}

    model = ScriptedModel(replies={
        "sensors": reading, "pruner": lambda request: {"suspicion": OTHERS},
        **{f"sensor.{name}": lambda r, v=value: {"answer": v, "reason": "."}
           for name, value in same.items()}})
    bob = await seated("Bob", model)
    assert (await bob.decide(ask(1))).target == "Ann"
    await bob.observe(Spoke(index=1, speaker="Dan", kind="statement",
                            text="Lord Vale was alive at eleven."))
    assert (await bob.decide(ask(2))).target == "Cara"
    assert purposes(model)["sensors"] == 3
    assert bob.core.state.readings("Lord Vale", "Dan")[-1].value == "High"
