"""The proof of a generated mystery: the fact language reads back what it writes, the solver
weighs motive, means and opportunity with a murderer's words set aside, and `validate`
refuses a script whose proof no longer holds."""

from __future__ import annotations

import re

import pytest

from jubensha.scripts.generate.build import Request, generate
from jubensha.scripts.model import Script
from jubensha.scripts.proof.model import FactSource
from jubensha.scripts.proof.phrases import Phrasebook, Reader, phrase_data
from jubensha.scripts.proof.solver import (
    ACCESS,
    ALIVE,
    ALONE,
    AT,
    DEAD,
    MOTIVE,
    UNUSED,
    WEAPONS,
    Answer,
    Case,
    Fact,
    answers,
    judge,
)
from jubensha.scripts.validation import validate

NAMES = {"en": (["Nora Vance", "Tom Hale", "Agnes Pike"], ["Elias Thorne"],
                ["library", "billiard room"], ["brass poker", "ivory letter opener"]),
         "zh": (["沈青禾", "许松", "钱守仁"], ["沈墨山"], ["书房", "焙房"], ["火钳", "裁纸刀"])}
TIMES = ("t", "t1", "t2")
"""Times are digits: next to a time, a slot of words still splits one way."""


def _filled(lang: str) -> dict[str, str]:
    persons, victims, places, items = NAMES[lang]
    book = Phrasebook(lang)  # type: ignore[arg-type]
    return {"me": persons[0], "who": persons[1], "victim": victims[0], "place": places[1],
            "item": items[0], "t": "22:10", "t1": "22:00", "t2": "22:30",
            "people": book.people(persons[:2]), "items": book.items(items),
            "record": "the porter's book" if lang == "en" else "门房的登记簿",
            "amount": "300 pounds" if lang == "en" else "三百块大洋"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_sentence_of_the_fact_language_reads_back_whoever_says_it(lang: str) -> None:
    """Written about a third person, on a sheet ("you") or aloud ("I"), with or without
    knowing the places and objects, each sentence states the facts of its kind."""
    persons, victims, places, items = NAMES[lang]
    book = Phrasebook(lang)  # type: ignore[arg-type]
    knowing = Reader(lang, persons, victims, places, items)  # type: ignore[arg-type]
    learning = Reader(lang, persons, victims)  # type: ignore[arg-type]
    for kind in book.data["kinds"]:
        for variant in range(book.count(kind)):
            for form in ("third", "second", "first"):
                sentence = book.render(kind, variant, form, **_filled(lang))  # type: ignore[arg-type]
                read = knowing.read(sentence, owner=persons[0])
                assert read and read == learning.read(sentence, owner=persons[0]), sentence
                expected = "motive" if kind.startswith("motive.") else None
                assert expected is None or read[0].kind == expected
                if kind == "with":
                    assert {r.who for r in read} == {persons[0], persons[1]}
                if kind == "access":
                    assert read[0].people == tuple(persons[:2])
                if kind == "weapons":
                    assert read[0].items == tuple(items)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_slot_is_followed_by_fixed_words_so_a_sentence_splits_one_way(lang: str) -> None:
    for kind, templates in phrase_data(lang)["kinds"].items():  # type: ignore[arg-type]
        for template in templates:
            adjacent = re.findall(r"\{(\w+)\}\s?\{(\w+)\}", template)
            assert all(first in TIMES or second in TIMES or second in ("was", "has")
                       for first, second in adjacent), (kind, template)


def test_a_sentence_with_an_unknown_name_states_nothing() -> None:
    persons, victims, places, items = NAMES["en"]
    reader = Reader("en", persons, victims, places, items)
    assert reader.read("From 22:00 to 22:30 Nora Vance was in the library with Bob Stone.") == []
    assert reader.read("From 22:00 to 22:30 Nora Vance was in the attic with Tom Hale.") == []
    assert reader.read("Nora Vance lit a cigarette in the library.") == []


CASE = Case(persons=3, places=3, scene=0, items=2, slots=10)


def _window(source: int = 0) -> list[Fact]:
    return [Fact(ALIVE, start=4, source=source), Fact(DEAD, start=7, source=source)]


def _motives() -> list[Fact]:
    return [Fact(MOTIVE, who=p, source=9) for p in range(3)]


def test_an_alibi_over_the_time_of_death_rules_out_only_with_the_time_of_death() -> None:
    """Tom (1) was in the billiard room (1) from slot 3 to 8 by Nora's (0) word; the death
    fell in slots 4-6: without the window Tom had time, with it he had none."""
    alibi = Fact(AT, who=1, place=1, start=3, end=8, source=1, speaker=0)
    assert not judge(CASE, [alibi, *_motives()], (1,)).exclusions
    verdict = judge(CASE, [alibi, *_motives(), *_window()], (1,), supports=True)
    assert set(verdict.exclusions) == {"opportunity"}
    assert set(verdict.exclusions["opportunity"]) == {alibi, *_window()}


def test_a_murderers_own_words_clear_nobody() -> None:
    """Tom's alibi rests on Agnes's word: if Agnes is the murderer, it may be a lie, so it
    clears Tom only in the answers where Agnes is innocent."""
    alibi = Fact(AT, who=1, place=1, start=3, end=8, source=1, speaker=2)
    facts = [alibi, *_motives(), *_window()]
    assert judge(CASE, facts, (1,)).exclusions
    assert not judge(CASE, [*facts, Fact(AT, who=2, place=2, start=0, end=10, source=2,
                                         speaker=2)], (2,)).exclusions


def test_no_motive_shown_no_murderer_and_the_weapon_is_pinned_by_wound_traces_and_keys() -> None:
    facts = [Fact(MOTIVE, who=2, source=1), *_window(),
             Fact(WEAPONS, items=frozenset({0, 1}), source=2), Fact(UNUSED, item=1, source=3),
             Fact(ACCESS, item=0, people=frozenset({2}), source=4)]
    assert answers(CASE, facts) == [Answer((2,), 0)]
    assert set(judge(CASE, facts, (0,)).exclusions) == {"motive", "means"}
    without_trace = [f for f in facts if f.source != 3]
    assert answers(CASE, without_trace) == [Answer((2,), 0), Answer((2,), 1)]


def test_someone_alone_at_the_scene_narrows_the_time_of_death() -> None:
    """Nora alone in the library (the scene) over slots 4-5, by her own word: if she is
    innocent, the death fell in slot 6, when Agnes was elsewhere."""
    facts = [*_motives()[1:], *_window(), Fact(ALONE, who=0, place=0, start=4, end=6,
                                               source=1, speaker=0),
             Fact(AT, who=2, place=1, start=6, end=7, source=2, speaker=1)]
    assert answers(CASE, facts) == [Answer((1,), 0), Answer((1,), 1)]


# -- validate re-checks the proof -----------------------------------------------------------
@pytest.fixture(scope="module")
def hard() -> Script:
    return generate(Request(seed=11, players=5, acts=2, level="hard"))[0]


def _problems(script: Script) -> list[str]:
    return [f"{p.field}: {p.message}" for p in validate(script).errors]


def test_a_generated_script_validates_with_its_proof(hard: Script) -> None:
    assert _problems(hard) == []
    assert hard.truth is not None and hard.truth.proof is not None
    assert hard.truth.proof.answer == hard.murderers


def test_validate_refuses_a_fact_its_source_no_longer_states(hard: Script) -> None:
    broken = hard.model_copy(deep=True)
    assert broken.truth is not None and broken.truth.proof is not None
    fact = next(f for f in broken.truth.proof.facts if f.source.where == "clue")
    clue = next(c for c in broken.clues if c.id == fact.source.clue)
    clue.text = clue.text.replace(fact.text, "Nothing to see here.")
    assert any("does not say" in p for p in _problems(broken))


def test_validate_refuses_a_sentence_that_does_not_mean_its_fact(hard: Script) -> None:
    broken = hard.model_copy(deep=True)
    assert broken.truth is not None and broken.truth.proof is not None
    fact = next(f for f in broken.truth.proof.facts if f.kind == "at" and f.end)
    fact.end = fact.start
    assert any("does not state this at fact" in p for p in _problems(broken))


def test_validate_refuses_a_proof_without_its_deciding_source(hard: Script) -> None:
    broken = hard.model_copy(deep=True)
    proof = broken.truth.proof  # type: ignore[union-attr]
    assert proof is not None
    deciding = proof.deciding.source.key()
    proof.facts = [f for f in proof.facts if f.source.key() != deciding]
    problems = _problems(broken)
    assert any("answers" in p for p in problems), problems


def test_validate_refuses_another_murderer(hard: Script) -> None:
    broken = hard.model_copy(deep=True)
    innocent = next(c for c in broken.characters if c.side == "civilian")
    broken.truth.murderers = [innocent.name]  # type: ignore[union-attr]
    assert any("not the truth's murderers" in p for p in _problems(broken))


def test_validate_reads_the_whole_script_and_refuses_a_text_that_opens_another_answer(
        hard: Script) -> None:
    """A character's timeline that no longer clears the rival: read whole, the script
    leaves two answers, whatever the proof's own facts say."""
    broken = hard.model_copy(deep=True)
    proof = broken.truth.proof  # type: ignore[union-attr]
    assert proof is not None
    source = proof.deciding.source
    assert source.where in ("timeline", "act_sheet") and source.character
    character = broken.character(source.character)
    sheet = character.act_sheet(source.index or 0) if source.where == "act_sheet" else None
    holder = sheet if sheet is not None else character.timeline[source.index or 0]
    fact = next(f for f in proof.facts if f.source == source)
    holder.text = holder.text.replace(fact.text, "")
    problems = _problems(broken)
    assert any("does not say" in p for p in problems)
    proof.facts = [f for f in proof.facts if f.source != source]
    proof.deciding.source = FactSource(where="background")
    assert any("leave" in p for p in _problems(broken))


def test_a_hostile_proof_or_text_is_an_error_not_a_crash_or_a_hang(hard: Script) -> None:
    """A clock too short for the facts' times, and a clue of 100,000 characters in one
    sentence: errors naming the field, in well under a second."""
    import time

    short = hard.model_copy(deep=True)
    short.truth.proof.world.slots = 3  # type: ignore[union-attr]
    assert any("outside the clock's 3 slots" in p for p in _problems(short))
    long = hard.model_copy(deep=True)
    long.clues[0].text = "Only the " + "x" * 100_000 + " or the y could have made such a wound."
    started = time.perf_counter()
    problems = _problems(long)
    assert time.perf_counter() - started < 1.0
    assert any(p.startswith("truth.proof.facts[") for p in problems)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_sentence_reads_one_way_even_without_the_places_known(lang: str) -> None:
    """A place slot never swallows a person: "...in the library with Tom Hale" is Tom
    Hale's company, not a place called "library with Tom Hale", whichever kind of
    sentence the reader tries first."""
    persons, victims, _, _ = NAMES[lang]
    book = Phrasebook(lang)  # type: ignore[arg-type]
    learning = Reader(lang, persons, victims)  # type: ignore[arg-type]
    learning.patterns = tuple(reversed(learning.patterns))
    for variant in range(book.count("with")):
        sentence = book.render("with", variant, "third", **_filled(lang))  # type: ignore[arg-type]
        read = learning.read(sentence)
        assert {r.who for r in read} == {persons[0], persons[1]}, sentence
        assert all(persons[1] not in (r.place or "") for r in read), sentence


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_sentence_puts_two_slots_side_by_side(lang: str) -> None:
    """Fixed words between every two slots but a verb or a time after a slot: the file's
    own rule, so a sentence splits into its slots one way only."""
    for kind, templates in phrase_data(lang)["kinds"].items():  # type: ignore[arg-type]
        for template in templates:
            pairs = re.findall(r"\{(\w+)\}\{(\w+)\}", template)
            assert not pairs, (kind, template)
