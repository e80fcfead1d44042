"""Sensors are data: the paper's four by default, replaceable from a YAML file, and every
mistake in such a file is reported with the file, the item and the field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from jubensha.agents.player_star import PlayerConfig, default_sensors, load_sensors
from jubensha.agents.registry import AgentSpecError, make_agent
from jubensha.engine.agent import CharacterSheet, SeatContext
from jubensha.llm.fake import ScriptedModel
from jubensha.scripts import bundled_scripts, load_script

CUSTOM = [{
    "name": "alibi",
    "label": {"en": "alibi", "zh": "不在场证明"},
    "question": {"en": "Can anyone vouch for {{ character }} when {{ victim }} died?",
                 "zh": "{{ victim }}遇害时，有人能为{{ character }}作证吗？"},
    "choices": [{"value": "Solid", "score": 0.0}, {"value": "Weak", "score": 1.0}],
}]


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "sensors.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def test_the_defaults_are_the_papers_four_sensors_and_their_phases() -> None:
    sensors = {s.name: s for s in default_sensors()}
    assert list(sensors) == ["emotion", "motivation", "suspicion", "information_value"]
    assert sensors["emotion"].shown_choices("en") == ["Positive", "Neutral", "Negative"]
    assert sensors["emotion"].shown_choices("zh") == ["积极", "中立", "消极"]
    assert sensors["motivation"].shown_choices("en") == ["Yes", "No"]
    assert sensors["information_value"].shown_choices("en") == ["High", "Medium", "Low"]
    questioning = [n for n, s in sensors.items() if s.used_in("questioning")]
    refinement = [n for n, s in sensors.items() if s.used_in("refinement")]
    assert questioning == ["emotion", "motivation", "suspicion"]
    assert refinement == list(sensors)


def test_a_sensor_asks_about_the_suspect_and_the_victim_in_either_language() -> None:
    motivation = default_sensors()[1]
    assert "Bob" in motivation.ask("en", "Bob", "Lord Vale")
    assert "Lord Vale" in motivation.ask("en", "Bob", "Lord Vale")
    assert "许松" in motivation.ask("zh", "许松", "沈墨山")


def test_a_reading_schema_is_an_enum_of_the_choices_shown_in_the_language() -> None:
    schema = default_sensors()[0].reading_schema("zh").model_json_schema()
    assert schema["properties"]["answer"]["enum"] == ["积极", "中立", "消极"]
    assert list(schema["properties"]) == ["answer", "reason"]


def test_users_replace_the_sensors_with_a_file(tmp_path: Path) -> None:
    path = write(tmp_path, [*CUSTOM, {**CUSTOM[0], "name": "rumour", "questioning": False}])
    agent = make_agent(f"player:sensors={path}")
    assert [s.name for s in agent.config.sensors] == ["alibi", "rumour"]
    assert load_sensors(path)[0].ask("en", "Bob", "Lord Vale") == (
        "Can anyone vouch for Bob when Lord Vale died?")


@pytest.mark.parametrize(("change", "words"), [
    ({"choices": [{"value": "Only"}]}, r"\[0\]\.choices: List should have at least 2"),
    ({"name": "Bad Name"}, r"\[0\]\.name: String should match pattern"),
    ({"colour": "red"}, r"\[0\]\.colour: Extra inputs are not permitted"),
    ({"question": {"en": "{{ character"}}, r"\[0\]: Value error, question\.en:"),
    ({"choices": [{"value": "A", "score": 3}, {"value": "B"}]},
     r"\[0\]\.choices\[0\]\.score: Input should be less than or equal to 1"),
])
def test_a_bad_sensors_file_names_the_file_item_and_field(tmp_path: Path, change: dict,
                                                           words: str) -> None:
    path = write(tmp_path, [{**CUSTOM[0], **change}])
    with pytest.raises(ValueError, match=rf"sensors {path}: .*{words}"):
        load_sensors(path)


def test_sensor_sets_need_distinct_names_and_both_phases(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="sensor names repeat: alibi"):
        load_sensors(write(tmp_path, CUSTOM * 2))
    with pytest.raises(ValueError, match="no sensor is used for questioning"):
        load_sensors(write(tmp_path, [{**CUSTOM[0], "questioning": False}]))


def test_missing_or_broken_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="sensors .*nowhere.yaml: cannot read"):
        load_sensors(tmp_path / "nowhere.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("- name: [unclosed\n", encoding="utf-8")
    with pytest.raises(ValueError, match="broken.yaml: invalid YAML at line"):
        load_sensors(broken)


async def test_a_sensor_without_the_games_language_fails_at_the_start(tmp_path: Path) -> None:
    path = write(tmp_path, [{**CUSTOM[0], "question": {"en": "Is {{ character }} lying?"}}])
    agent = make_agent(f"player:sensors={path}")
    script = load_script(bundled_scripts()["tingsong-tea-estate"])
    sheet = CharacterSheet.for_seat(script, script.names[0])
    with pytest.raises(ValueError, match="player sensors alibi: no 'zh' question"):
        await agent.start(SeatContext(sheet=sheet, model=ScriptedModel()))


def test_options_set_the_papers_switches_and_budgets() -> None:
    config = PlayerConfig.parse("prune=false+sensing=false+script_tokens=2000+summary=model")
    assert (config.prune, config.sensing, config.script_tokens, config.summary) == (
        False, False, 2000, "model")
    defaults = PlayerConfig()
    assert (defaults.script_tokens, defaults.dialogue_tokens, defaults.chunk_tokens) == (
        4000, 4000, 50)
    assert (defaults.refine_targets, defaults.refine_call) == ("others", "combined")


@pytest.mark.parametrize(("spec", "words"), [
    ("player:colour=red", "colour"),
    ("player:prune", "write key=value"),
    ("player:summary=poem", "summary"),
    ("player:refine_targets=everyone", "refine_targets"),
    ("player:sensors=/no/such/file.yaml", "cannot read"),
])
def test_bad_options_say_what_is_wrong(spec: str, words: str) -> None:
    with pytest.raises(AgentSpecError, match=words):
        make_agent(spec)


async def test_a_users_sensors_are_read_together_in_refinement(tmp_path: Path) -> None:
    """A combined reading keys each answer by the sensor's name, whatever the names."""
    from jubensha.engine.decisions import AskQuestions

    path = write(tmp_path, [*CUSTOM, {**CUSTOM[0], "name": "rumour", "questioning": False,
                                      "label": {"en": "rumours heard", "zh": "传闻"},
                                      "choices": [{"value": "Loud", "score": 1.0},
                                                  {"value": "Quiet"}]}])
    agent = make_agent(f"player:sensors={path}")
    script = load_script(bundled_scripts()["lighthouse-keeper"])
    name, others = script.names[0], script.names[1:]
    model = ScriptedModel(replies={"sensors": lambda request: {
        "alibi": "Weak", "rumour": "Loud", "alibi_reason": "No one.", "rumour_reason": "."}})
    await agent.start(SeatContext(sheet=CharacterSheet.for_seat(script, name), model=model))
    for round_ in (1, 2):
        await agent.decide(AskQuestions(stage="q", round=round_, candidates=others))
    combined = [r for r in model.requests if r.purpose == "sensors"]
    assert len(combined) == len(others) * len(agent.core.victims)
    readings = agent.core.state.readings(agent.core.victims[0], others[0])
    assert {(r.sensor, r.value, r.reason) for r in readings} >= {("rumour", "Loud", ".")}
    assert "- rumour (rumours heard): " in combined[0].messages[-1].text
