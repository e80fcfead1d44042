"""The bundled six-player, two-act mystery with two victims and two murderers.

What the parametrised bundled-script tests do not check: the shape this mystery promises
(two acts, a killer per victim, clues hidden at locations, per-act sheets) and that every
factual question is answerable from the script of the character it belongs to.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from jubensha.scripts import Character, Script, bundled_scripts, load_script, validate

SCRIPT_ID = "halvard-observatory"


@pytest.fixture(scope="module")
def script() -> Script:
    return load_script(bundled_scripts()[SCRIPT_ID])


def _slug(name: str) -> str:
    return re.sub(r"[^a-z]+", "-", name.lower()).strip("-")


def _own_texts(character: Character) -> list[str]:
    """The texts a factual question about ``character`` may quote: story, timeline, act sheets."""
    return [character.story, *(e.text for e in character.timeline),
            *(sheet.text for sheet in character.acts)]


def test_loads_with_no_errors_and_no_warnings(script: Script) -> None:
    assert validate(script).problems == []


def test_six_english_players_in_two_acts(script: Script) -> None:
    assert script.language == "en"
    assert len(script.characters) == 6 == script.metadata.player_count
    assert [act.number for act in script.acts] == [1, 2]
    assert all(act.title and act.public_text.strip() for act in script.acts)


def test_two_victims_each_killed_by_one_distinct_murderer(script: Script) -> None:
    assert script.truth is not None
    kills = {kill.victim: kill.killers for kill in script.truth.kills}
    assert sorted(kills) == sorted(v.name for v in script.victims) and len(kills) == 2
    assert all(len(killers) == 1 for killers in kills.values())
    killers = [killers[0] for killers in kills.values()]
    assert len(set(killers)) == 2 and sorted(killers) == sorted(script.truth.murderers)
    for victim, (killer,) in kills.items():
        assert script.character(killer).killed == [victim]
        assert script.character(killer).side == "murderer"
    assert all(kill.method and kill.motive and kill.time and kill.place
               for kill in script.truth.kills)


def test_act_two_reveals_the_second_body(script: Script) -> None:
    act_two = script.acts[1].public_text
    assert any(v.name in act_two for v in script.victims)
    assert script.clues_for_act(2), "act 2 must release new clues"


def test_every_character_has_a_sheet_with_text_and_goals_for_both_acts(script: Script) -> None:
    for character in script.characters:
        for act in (1, 2):
            sheet = character.act_sheet(act)
            assert sheet is not None, f"{character.name} has no sheet for act {act}"
            assert sheet.text.strip() and sheet.goals, f"{character.name}, act {act}"


def test_characters_are_fully_annotated(script: Script) -> None:
    for c in script.characters:
        assert c.age and c.gender and c.description and c.mission and c.final_goals, c.name
        assert c.secrets and c.needs_to_know and c.performance and c.rules, c.name
        assert 300 <= len(c.story.split()) <= 600, c.name
        assert 6 <= len(c.timeline) <= 12 and all(e.time for e in c.timeline), c.name


def test_every_character_relates_to_every_other_and_to_the_victims(script: Script) -> None:
    everyone = set(script.names) | {v.name for v in script.victims}
    for c in script.characters:
        related = [r.other for r in c.relationships]
        assert set(related) == everyone - {c.name} and len(related) == len(set(related)), c.name
        assert all(r.labels for r in c.relationships), c.name


def test_every_location_holds_one_to_three_clues_of_a_single_act(script: Script) -> None:
    assert 12 <= len(script.clues) <= 18
    per_location = Counter(c.location for c in script.clues if c.location)
    assert per_location and all(1 <= n <= 3 for n in per_location.values()), per_location
    for location in script.locations:
        acts = {c.act for c in script.clues if c.location == location}
        assert len(acts) == 1, f"{location} mixes clues of acts {acts}"
    assert sum(1 for c in script.clues if c.location) > len(script.clues) / 2
    assert any(c.misleading for c in script.clues) and any(c.key for c in script.clues)


def test_factual_sources_are_verbatim_in_the_right_characters_texts(script: Script) -> None:
    for question in script.questions.factual:
        assert question.character is not None and question.answer, question.id
        texts = _own_texts(script.character(question.character))
        assert any(question.source in text for text in texts), question.id
        assert re.fullmatch(rf"f-{_slug(question.character)}-\d\d", question.id), question.id


def test_at_least_ten_factual_questions_per_character(script: Script) -> None:
    counts = Counter(q.character for q in script.questions.factual)
    assert all(counts[name] >= 10 for name in script.names), counts


def test_inferential_questions_have_four_options_and_a_rationale(script: Script) -> None:
    inferential = [q for q in script.questions.choice if q.set == "inferential"]
    assert len(inferential) >= 5
    for q in inferential:
        assert len(q.options) == 4 and q.answer and q.rationale and q.aspect and q.steps, q.id


def test_wellplay_questions_cover_every_character_and_category(script: Script) -> None:
    wellplay = [q for q in script.questions.choice if q.set == "wellplay"]
    for name in script.names:
        own = [q for q in wellplay if q.asked_of == name]
        assert {q.category for q in own} == {"objective", "reasoning", "relations"}, name
    assert {q.worth for q in wellplay} == {10, 5, 2}
    assert any(q.multiple and len(q.answer) > 1 for q in wellplay)
    assert any(not q.multiple and len(q.answer) == 1 for q in wellplay)


def test_who_killed_questions_leave_out_the_answering_character(script: Script) -> None:
    assert script.truth is not None
    killer_of = {kill.victim: kill.killers[0] for kill in script.truth.kills}
    asked = 0
    for q in script.questions.choice:
        victim = next((v for v in killer_of if q.question == f"Who killed {v}?"), None)
        if q.set != "wellplay" or victim is None:
            continue
        asked += 1
        assert q.asked_of not in q.options.values(), q.id
        assert q.asked_of != killer_of[victim], f"{q.id}: a murderer asked about their own victim"
        assert [q.options[letter] for letter in q.answer] == [killer_of[victim]], q.id
    assert asked == 2 * len(script.characters) - 2


def test_motive_and_method_open_questions_for_each_victim(script: Script) -> None:
    for victim in script.victims:
        kinds = {q.kind for q in script.questions.open if q.victim == victim.name}
        assert kinds >= {"motive", "method"}, victim.name
    assert all(q.reference and 3 <= len(q.key_points) <= 6 for q in script.questions.open)


def test_truth_is_written_out_and_the_metadata_marks_it_original(script: Script) -> None:
    assert script.truth is not None
    assert script.truth.narrative and script.truth.solution and script.truth.reasoning_chain
    assert all(name in script.truth.solution for name in script.truth.murderers)
    assert script.metadata.source == "original"
    assert script.metadata.author == "jubensha project" and script.metadata.tags
