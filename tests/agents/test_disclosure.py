"""What a speech gives away and how it fails: the checks shared by the guard and the
self-disclosure metric, and the first-person sheet small models are given."""

from __future__ import annotations

import pytest

from jubensha.agents.disclosure import (
    DisclosureSettings,
    SeatText,
    screen_speech,
    units,
)
from jubensha.agents.person import first_person
from jubensha.scripts.model import Character, TimelineEntry

AGNES = Character(
    name="Agnes Pike", side="murderer", killed=["Elias Thorne"],
    description="Housekeeper and cook at Gull Rock.",
    story=("You are Agnes Pike, fifty-two, housekeeper at Gull Rock. Will's name was shamed, "
           "the owners paid you nothing, and you raised your boy on scraps. A year later "
           "Elias offered you this post, and you thought it was kindness. At 22:20 you "
           "floured the table and the rolling pin."),
    secrets=["You killed Elias with the kitchen rolling pin at 22:30 on the top landing.",
             "You were out of the kitchen from 22:27 to 22:36."],
    timeline=[TimelineEntry(time="22:30", text="Strikes Elias on the top landing; he falls "
                                               "down the stairs.")])
TOM = Character(
    name="Tom Hale", description="Assistant keeper of the light.",
    story=("You are Tom Hale. You store smuggled French whisky for the skipper of the "
           "Kittiwake; six crates are hidden in the sea cave under the rock."))
PUBLIC = ["Gull Rock",
          "Elias Thorne, keeper of the light, was found dead at the foot of the tower stairs.",
          "Agnes Pike Housekeeper and cook at Gull Rock.",
          "Tom Hale Assistant keeper of the light."]
NAMES = ["Agnes Pike", "Tom Hale"]
SETTINGS = DisclosureSettings()


def seat(character: Character = AGNES) -> SeatText:
    return SeatText.of(character, PUBLIC, SETTINGS.words,
                       murderer=character.side == "murderer", victims=["Elias Thorne"])


def test_the_second_and_first_person_are_one_unit() -> None:
    assert units("You're late; you raised your boy.") == units("I'm late; I raised my boy.")
    assert units("你的剧本") == units("我的剧本")


def test_a_second_person_paraphrase_of_the_sheet_is_disclosure() -> None:
    check = screen_speech("Will's name was shamed, the owners paid you nothing, and you "
                         "raised your boy on scraps. A year later Elias offered you this "
                         "post, and you thought it was kindness.", seat(), names=NAMES)
    assert check.share > 0.9 and check.recites(SETTINGS)
    assert check.parts == ["story", "story"] and "raised your boy" in check.passages[0]


def test_the_same_sheet_told_in_the_first_person_is_disclosure_too() -> None:
    check = screen_speech("The owners paid me nothing and I raised my boy on scraps.",
                         seat(), names=NAMES)
    assert check.share == 1.0
    assert not check.recites(SETTINGS)  # one sentence of it: 12 words, a recital is 30


def test_a_listed_secret_said_in_the_sheets_words_is_told() -> None:
    check = screen_speech("I was out of the kitchen from 22:27 to 22:36, fetching coal.",
                         seat(), names=NAMES)
    assert check.secret is not None and check.confession is None
    assert not check.recites(SETTINGS)
    assert screen_speech("I was in the kitchen all evening.", seat(), names=NAMES).secret is None


def test_public_facts_and_own_words_disclose_nothing() -> None:
    check = screen_speech("I am Agnes Pike, housekeeper and cook at Gull Rock. I made the "
                         "tea and went to bed early.", seat(), names=NAMES)
    assert (check.disclosed, check.confession, check.degenerate) == (0, None, [])


def test_text_the_seat_heard_before_is_no_longer_its_secret() -> None:
    agnes = seat()
    agnes.learn("Tom said the owners paid you nothing and you raised your boy on scraps.")
    assert screen_speech("The owners paid me nothing and I raised my boy on scraps.", agnes,
                        names=NAMES).disclosed == 0


def test_a_short_fact_of_the_sheet_is_not_a_recital() -> None:
    check = screen_speech("I know I am fifty-two, housekeeper at Gull Rock. Ask me anything "
                         "about the evening, the storm, the tide and the light.", seat(),
                         names=NAMES)
    assert 0 < check.disclosed < SETTINGS.recite_units and not check.recites(SETTINGS)


@pytest.mark.parametrize("speech", [
    "I killed Elias with the rolling pin.",
    "Yes, it was me: I struck him down on the landing.",
    "It was me who murdered him.",
    "I struck Elias on the top landing; he falls down the stairs.",
    "I pushed him down the stairs.",
    "我杀了他，用的是擀面杖。",
    "人是我杀的。",
    "I was the one who killed him.",
    "I took the pin and struck Elias.",
    "Elias was my friend, and I was responsible for his death.",
])
def test_a_murderer_telling_what_it_did_confesses(speech: str) -> None:
    assert screen_speech(speech, seat(), names=NAMES).confession is not None


@pytest.mark.parametrize("speech", [
    "I did not kill Elias.",
    "I would never have killed him.",
    "Did I kill him? Of course not.",
    "Someone struck the rocks in 1947.",
    "我没有杀他。",
    "是谁杀了他？",
    "At 22:30 I was on the top landing with the rolling pin.",
    "I beat Elias at cribbage every Sunday.",
    "I struck a match and lit the stove.",
    "我以为他是自杀。",
    "我目击了一切。",
    "I was 30 when I was murdered.",
    "I was accused of murder.",
    "I heard about the killing at supper.",
    "我差点被人害死。",
    "I was not responsible for his death.",
    "Who was responsible for Elias's death?",
])
def test_denials_questions_and_the_weapon_alone_are_no_confession(speech: str) -> None:
    assert screen_speech(speech, seat(), names=NAMES).confession is None


def test_only_murderers_can_confess() -> None:
    assert screen_speech("I killed an hour in the boathouse.", seat(TOM),
                        names=NAMES).confession is None


@pytest.mark.parametrize(("speech", "kind"), [
    ("", "empty"),
    ("Tom Hale asks", "label"),
    ("Host: please introduce yourself.", "label"),
    ("Agnes Pike asks Tom Hale: where were you?", "label"),
    ("周妈 → 顾远之 回答：我不知道。", "label"),
    ("I am a man, and I am a man, and I am a man, and I am a man.", "loop"),
])
def test_degenerate_speech_is_named(speech: str, kind: str) -> None:
    assert kind in screen_speech(speech, seat(), names=[*NAMES, "周妈", "顾远之"]).degenerate


def test_a_speech_is_cut_off_only_when_its_reply_ran_out_of_tokens() -> None:
    speech = "At supper my uncle made a strange little speech about"
    assert "cut off" in screen_speech(speech, seat(), names=NAMES, cut=True).degenerate
    assert screen_speech(speech, seat(), names=NAMES).degenerate == []
    assert screen_speech("I slept.", seat(), names=NAMES, cut=True).degenerate == []


def test_a_copy_of_another_seats_speech_names_the_speaker() -> None:
    said = "I walked across the causeway at five with my small suitcase before the tide."
    check = screen_speech("I walked across the causeway at five with my small suitcase.",
                         seat(), names=NAMES, others=[("Nora Vance", said)])
    assert check.degenerate == ["copy"]
    assert check.evidence["copy"].startswith("Nora Vance:")


def test_an_echo_of_a_prompt_template_is_its_own_words_around_a_gap() -> None:
    from jubensha.agents.template_echo import TemplateEcho

    echo = TemplateEcho("en")
    assert echo.find(units("Speak as Agnes Pike in at most 3 sentences.")) is not None
    assert echo.find(units("I made the tea for the whole household at ten.")) is None
    spoken = units("Speak as Agnes Pike in at most 3 sentences.")
    allowed = {tuple(spoken[i:i + 5]) for i in range(len(spoken) - 4)}
    assert echo.find(spoken, allowed) is None  # the seat heard it said: it may say it


def test_chinese_speech_is_cut_into_jieba_words() -> None:
    zhou = Character(name="周妈", description="管家兼厨娘。",
                     story=("你是听松茶庄的管家。你偷偷把老爷的账本藏在了灶台下面的砖缝里，"
                            "又把库房的钥匙扔进了后山的那口老井里。"
                            "那天夜里你还烧掉了老爷写给县里的那封长信，把灰倒进了灶膛。"))
    ma = SeatText.of(zhou, ["周妈 管家兼厨娘。"], SETTINGS.zh_words, murderer=False)
    check = screen_speech("我偷偷把老爷的账本藏在了灶台下面的砖缝里，又把库房的钥匙扔进了后山的"
                         "那口老井里。那天夜里我还烧掉了老爷写给县里的那封长信，把灰倒进了灶膛。",
                         ma, names=["周妈"])
    assert check.recites(SETTINGS) and check.parts == ["story", "story"]
    assert screen_speech("我是周妈，庄里的管家兼厨娘。", ma, names=["周妈"]).disclosed == 0


@pytest.mark.parametrize(("sheet", "mine"), [
    ("You are Tom Hale. Elias taught you the trade.", "I am Tom Hale. Elias taught me the trade."),
    ("Your husband drowned, and you raised your boy.", "My husband drowned, and I raised my boy."),
    ("Afterwards you went up to your room.", "Afterwards I went up to my room."),
    ("He said, \"I found your crates, boy.\" You felt sick.",
     "He said, \"I found your crates, boy.\" I felt sick."),
    ("Were you there? You're sure of yourself.", "Was I there? I'm sure of myself."),
])
def test_a_sheet_in_the_second_person_reads_in_the_first(sheet: str, mine: str) -> None:
    assert first_person(sheet) == mine


def test_a_chinese_sheet_reads_in_the_first_person_outside_quotes() -> None:
    assert first_person("你是周妈。老爷说：“你别管。”", "zh") == "我是周妈。老爷说：“你别管。”"


def test_a_long_copy_is_a_copy_and_a_short_echo_is_not() -> None:
    said = [("Tom Hale", "Did you read the letter Elias kept in his desk?")]
    assert screen_speech("No, never the letter.", seat(), names=NAMES,
                        others=said).degenerate == []
    assert screen_speech("Did you read the letter Elias kept in his desk?", seat(),
                        names=NAMES, others=said).degenerate == ["copy"]
