"""Every bundled mystery is complete, coherent and fair; the two small ones keep their promises.

The parametrised tests run over every script that ``bundled_scripts()`` finds, so a new bundled
mystery is held to the same standard the moment its folder appears.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.scripts import (
    DEFAULT_SCRIPT,
    PUBLIC,
    Character,
    ChoiceQuestion,
    Script,
    bundled_scripts,
    load_script,
    validate,
)

BUNDLED = sorted(bundled_scripts())
ENGLISH_MYSTERY = "lighthouse-keeper"
CHINESE_MYSTERY = "tingsong-tea-estate"
CJK = re.compile(r"[\u3400-\u9fff]")
LATIN = re.compile(r"[A-Za-z]")


@pytest.fixture(scope="module", params=BUNDLED)
def script(request: pytest.FixtureRequest) -> Script:
    return load_script(bundled_scripts()[request.param])


def _own_texts(character: Character) -> list[str]:
    """Where a factual question about ``character`` may quote from."""
    return [character.story, *(e.text for e in character.timeline),
            *(sheet.text for sheet in character.acts)]


def _wellplay(script: Script) -> list[ChoiceQuestion]:
    return [q for q in script.questions.choice if q.set == "wellplay"]


def _player_texts(script: Script) -> Iterator[str]:
    """Every text a player, the host or an evaluator reads (not the metadata notes)."""
    yield from (script.title, script.background, script.rules)
    yield from (v.description for v in script.victims)
    for c in script.characters:
        yield from (c.name, c.description, c.mission, c.story, c.performance)
        yield from (*c.final_goals, *c.secrets, *c.needs_to_know, *c.rules)
        yield from (e.text for e in c.timeline)
        for r in c.relationships:
            yield from (*r.labels, r.description)
    for clue in script.clues:
        yield from (clue.title, clue.text, clue.location or "")
    assert script.truth is not None
    yield from (script.truth.narrative, script.truth.solution, *script.truth.reasoning_chain)
    for kill in script.truth.kills:
        yield from (kill.method, kill.motive, kill.place)
    questions = script.questions
    yield from (t for q in questions.factual for t in (q.question, q.answer, q.source))
    for q in questions.choice:
        yield from (q.question, q.rationale, *q.options.values())
    yield from (t for q in questions.open for t in (q.question, q.reference, *q.key_points))


# -- every bundled script --------------------------------------------------------------------
def test_loads_and_validates_with_no_errors_and_no_warnings(script: Script) -> None:
    assert validate(script).problems == []


def test_every_factual_source_is_verbatim_in_its_characters_own_texts(script: Script) -> None:
    for q in script.questions.factual:
        assert q.character is not None, q.id
        assert q.answer.strip() and q.source.strip(), q.id
        texts = _own_texts(script.character(q.character))
        assert any(q.source in text for text in texts), f"{q.id}: {q.source!r}"


def test_every_character_has_ten_factual_questions_with_per_character_ids(
        script: Script) -> None:
    for character in script.characters:
        ids = [q.id for q in script.questions.factual if q.character == character.name]
        assert len(ids) >= 10, character.name
        assert len({re.sub(r"-\d+$", "", i) for i in ids}) == 1, ids
        assert all(re.fullmatch(r"f-[a-z0-9-]+-\d{2}", i) for i in ids), ids


def test_five_inferential_questions_with_four_options_and_a_rationale(script: Script) -> None:
    inferential = [q for q in script.questions.choice if q.set == "inferential"]
    assert len(inferential) >= 5
    for q in inferential:
        assert len(q.options) == 4 and len(q.answer) == 1, q.id
        assert q.rationale.strip() and q.aspect and q.steps, q.id


def test_wellplay_questions_cover_all_categories_for_every_character(script: Script) -> None:
    questions = _wellplay(script)
    assert {q.category for q in questions} == {"objective", "reasoning", "relations"}
    assert {q.asked_of for q in questions} == set(script.names)
    assert any(q.multiple and len(q.answer) > 1 for q in questions)
    assert any(not q.multiple for q in questions)


def test_wellplay_who_killed_options_leave_out_the_answering_character(script: Script) -> None:
    for q in _wellplay(script):
        if q.category == "objective":
            assert q.asked_of is not None, q.id
            names = script.character(q.asked_of).all_names
            assert not set(q.options.values()) & set(names), q.id


def test_motive_and_method_open_questions_for_every_victim(script: Script) -> None:
    single = len(script.victims) == 1
    for victim in script.victims:
        for kind in ("motive", "method"):
            matching = [q for q in script.questions.open if q.kind == kind
                        and (q.victim == victim.name or (single and q.victim is None))]
            assert matching, f"no {kind} question for {victim.name}"
            for q in matching:
                assert q.reference.strip() and 3 <= len(q.key_points) <= 6, q.id


def test_sides_and_kills_agree_with_the_truth(script: Script) -> None:
    truth = script.truth
    assert truth is not None
    assert {c.name for c in script.characters if c.side == "murderer"} == set(truth.murderers)
    for kill in truth.kills:
        assert kill.method and kill.motive and kill.time and kill.place, kill.victim
        for killer in kill.killers:
            assert kill.victim in script.character(killer).killed
    for murderer in truth.murderers:
        assert script.character(murderer).killed, murderer


def test_the_truth_explains_itself(script: Script) -> None:
    truth = script.truth
    assert truth is not None
    assert truth.narrative.strip() and truth.solution.strip()
    assert len(truth.reasoning_chain) >= 3


def test_every_character_relates_to_every_other(script: Script) -> None:
    for character in script.characters:
        related = {r.other for r in character.relationships if r.labels}
        others = {c.name for c in script.characters} - {character.name}
        assert others <= related, f"{character.name} lacks {others - related}"


def test_characters_are_fully_annotated(script: Script) -> None:
    for c in script.characters:
        assert c.age and c.gender and c.description and c.mission and c.final_goals, c.name
        assert c.story.strip() and c.secrets and c.needs_to_know, c.name
        assert c.performance and c.rules, c.name
        assert 6 <= len(c.timeline) <= 12 and all(e.time for e in c.timeline), c.name


def test_clue_holders_locations_and_acts_are_coherent(script: Script) -> None:
    acts = {act.number for act in script.acts}
    for clue in script.clues:
        assert clue.act in acts, clue.id
        if clue.holder != PUBLIC:
            script.character(clue.holder)
            assert clue.location is None, f"{clue.id}: a card dealt to a player is not hidden"
        if clue.location is not None:
            assert clue.location.strip() == clue.location != "", clue.id
    assert any(clue.misleading for clue in script.clues)
    assert any(clue.key for clue in script.clues)
    assert not any(clue.key and clue.misleading for clue in script.clues)


def test_metadata_marks_an_original_script(script: Script) -> None:
    meta = script.metadata
    assert meta.source == "original" and meta.author == "jubensha project" and meta.tags
    assert meta.player_count == len(script.characters)


def test_texts_are_in_the_scripts_language(script: Script) -> None:
    clue_ids = re.compile("|".join(re.escape(clue.id) for clue in script.clues) or "$^")
    for text in filter(None, _player_texts(script)):
        prose = clue_ids.sub("", text)  # citations such as "c-yiti" are identifiers, not prose
        for sentence in re.split(r"[。！？!?\n]|\. ", prose):
            cjk, latin = len(CJK.findall(sentence)), len(LATIN.findall(sentence))
            if script.language == "en":
                assert cjk == 0, sentence
            elif cjk + latin:
                assert cjk / (cjk + latin) >= 0.8, sentence


def test_scripts_list_shows_every_bundled_mystery() -> None:
    result = CliRunner().invoke(app, ["scripts", "list"])
    assert result.exit_code == 0, result.output
    assert all(script_id in result.output for script_id in BUNDLED)


# -- the two small mysteries -----------------------------------------------------------------
@pytest.fixture(scope="module", params=[ENGLISH_MYSTERY, CHINESE_MYSTERY])
def small(request: pytest.FixtureRequest) -> Script:
    return load_script(bundled_scripts()[request.param])


def test_the_default_script_is_the_english_four_player_mystery() -> None:
    assert DEFAULT_SCRIPT == ENGLISH_MYSTERY
    script = load_script(bundled_scripts()[DEFAULT_SCRIPT])
    assert script.language == "en" and len(script.characters) == 4


def test_english_mystery_is_short_enough_for_the_tiny_local_model() -> None:
    script = load_script(bundled_scripts()[ENGLISH_MYSTERY])
    for character in script.characters:
        assert 300 <= len(character.story.split()) <= 600, character.name


def test_chinese_mystery_has_four_or_five_players() -> None:
    script = load_script(bundled_scripts()[CHINESE_MYSTERY])
    assert script.language == "zh" and 4 <= len(script.characters) <= 5


def test_one_victim_one_murderer(small: Script) -> None:
    assert small.truth is not None
    assert len(small.victims) == 1 and len(small.truth.murderers) == 1
    (kill,) = small.truth.kills
    assert kill.victim == small.victims[0].name and kill.killers == small.truth.murderers


def test_closed_circle_with_no_outsiders(small: Script) -> None:
    cast = {name for c in small.characters for name in c.all_names}
    cast |= {v.name for v in small.victims}
    assert any(tag in small.metadata.tags for tag in ("closed", "封闭"))
    for character in small.characters:
        assert {r.other for r in character.relationships} <= cast, character.name


def test_six_to_ten_clue_cards_some_hidden_at_places(small: Script) -> None:
    assert 6 <= len(small.clues) <= 10
    assert small.locations and any(c.location is None for c in small.clues)


def test_at_least_two_innocents_hold_secrets_and_two_clues_mislead(small: Script) -> None:
    innocents = [c.name for c in small.characters if c.side == "civilian" and c.secrets]
    assert len(innocents) >= 2
    assert sum(clue.misleading for clue in small.clues) >= 2


def test_reasoning_chain_cites_every_key_clue_and_only_real_sources(small: Script) -> None:
    assert small.truth is not None
    chain = "\n".join(small.truth.reasoning_chain)
    cited = set(re.findall(r"\bc-[a-z0-9-]+[a-z0-9]", chain))
    clue_ids = {clue.id for clue in small.clues}
    assert cited <= clue_ids, cited - clue_ids
    assert {clue.id for clue in small.clues if clue.key} <= cited
    scripts = re.findall(r"(?:scripts?: |剧本：)([^;)；）]+)", chain)
    names = {name for group in scripts for name in re.split(r", |、", group)}
    assert names and names <= set(small.names), names - set(small.names)
