"""Times in text, answer length, and which timeline facts a seat keeps to itself."""

from __future__ import annotations

import pytest
from conftest import LIGHTHOUSE, TEA

from jubensha.agents.thinkthrice.timeline import (
    answer_length,
    conceal,
    entry_facts,
    has_time,
    length_unit,
    tied_to_secret,
)
from jubensha.scripts import find_script


@pytest.mark.parametrize("text", [
    "At 21:10 Tom crossed the yard.", "Nora left at 9 pm.", "around 9.30 a.m.",
    "at ten o'clock", "at 10 o'clock", "by midnight", "at half past nine",
    "21：52，钱守仁下了药。", "晚上十点他回了房。", "十点半她出了门。", "三点一刻", "他10点回来。", "子时前后",
])
def test_specific_times_are_found_in_both_languages(text: str) -> None:
    assert has_time(text)


@pytest.mark.parametrize("text", [
    "Tom crossed the yard in the evening.", "He owed 300 pounds.", "The year was 1947.",
    "我有一点累。", "他晚上回了房。", "3.5 miles out",
])
def test_no_time_is_found_where_there_is_none(text: str) -> None:
    assert not has_time(text)


def test_length_counts_words_or_chinese_characters() -> None:
    assert answer_length("I was in the kitchen at 22:15, baking.", "words") == 8
    assert answer_length("我在厨房。", "chars") == 4
    assert answer_length("我在21:52见过Tom。", "chars") == 6  # 4 characters, a time, a name
    assert length_unit("auto", "zh") == "chars" and length_unit("auto", "en") == "words"
    assert length_unit("words", "zh") == "words"


def test_the_murderer_keeps_the_facts_tied_to_its_secrets() -> None:
    script = find_script(LIGHTHOUSE)
    agnes = script.character("Agnes Pike")
    names = [*script.names, *(v.name for v in script.victims)]
    shown, hidden = conceal(entry_facts(agnes.timeline, "en"), agnes.secrets, names, 2)
    assert [fact[:5] for fact in hidden] == ["16:00", "22:20", "22:27", "22:30", "22:36"]
    assert [fact[:5] for fact in shown] == ["19:00", "20:30", "21:55", "22:15", "22:45"]


def test_concealment_works_on_chinese_scripts() -> None:
    script = find_script(TEA)
    killer = script.character("钱守仁")
    names = [*script.names, *(v.name for v in script.victims)]
    _shown, hidden = conceal(entry_facts(killer.timeline, "zh"), killer.secrets, names, 2)
    assert [fact[:5] for fact in hidden] == ["21:52", "00:50"]


def test_names_alone_do_not_tie_a_fact_to_a_secret() -> None:
    names = ["Agnes Pike", "Elias Thorne"]
    secret = "You killed Elias Thorne on the landing."
    assert not tied_to_secret("Agnes Pike brought Elias Thorne his tea.", [secret], names, 2)
    assert tied_to_secret("At 22:30 Agnes went up.", ["You struck him at 22:30."], names, 2)
    assert tied_to_secret("Agnes scrubbed the rolling pin.", ["The rolling pin was the weapon."],
                          names, 2)
