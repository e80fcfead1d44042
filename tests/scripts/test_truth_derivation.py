"""Deriving the murderers and victims of an imported script by weighing the evidence of
its texts: persons only, sentence patterns in both languages, question answers, a
confidence, and nothing derived below the margin."""

from __future__ import annotations

import pytest

from jubensha.scripts.importers.persons import Corpus, untitled
from jubensha.scripts.importers.truth import MARGIN, Asked, Passage, derive_truth
from jubensha.scripts.model import Character


def cast(*names: str) -> list[Character]:
    return [Character(name=name) for name in names]


def derive(texts: list[str], characters: list[Character], language: str = "en",
           questions: list[Asked] = (), owners: dict[int, str] | None = None):
    owners = owners or {}
    passages = [Passage(text, f"text {i}", "character" if i in owners else "truth",
                        owner=owners.get(i)) for i, text in enumerate(texts)]
    return derive_truth(passages, list(questions), characters, language)


@pytest.mark.parametrize(("phrase", "person"), [
    ("Old Black", "Old Black"), ("After Sam", "Sam"), ("Falan Manor", None),
    ("Lauren Shipyard", None), ("Second Mate", None), ("Captain", None), ("Two", None),
    ("However", None), ("Xu Boqing", "Xu Boqing")])
def test_an_english_phrase_is_a_person_or_not(phrase, person) -> None:
    corpus = Corpus(["However, two men came. the captain was old. Sam left."])
    assert corpus.english(phrase) == person


@pytest.mark.parametrize(("name", "after", "person"), [
    ("夏以月", "", True), ("丁硕楠", "", True), ("三名", "", False), ("两人", "", False),
    ("他们", "", False), ("巨人馆", "", False), ("动物之家", "”负责人", False),
    ("女编剧", "", False), ("落单的人", "", False), ("死者", "", False), ("保罗", "", True)])
def test_a_chinese_word_is_a_person_or_not(name, after, person) -> None:
    corpus = Corpus(["夏以月在房间里。夏以月死了。"])
    assert (corpus.chinese(name, strong=False, after=after) > 0) is person


def test_a_chinese_name_is_the_unit_the_texts_repeat() -> None:
    text = "凶手杀害了夏以月。夏以月的房间。夏以月在哪里？卡门解脱了。卡门笑了。卡门哭了。"
    corpus = Corpus([text])
    assert corpus.unit_after(text, text.index("夏以月")) == "夏以月"
    assert corpus.unit_after(text, text.index("卡门解")) == "卡门"


def test_titles_make_one_person() -> None:
    assert untitled("Mr Zhao Wanlei") == "Zhao Wanlei" and untitled("Qi Liu") is None


def test_a_plain_statement_derives_murderer_and_victim_with_evidence() -> None:
    murderers, victims = derive(
        ["The real murderer is Ann. She killed Victor Hale in the library.",
         "Victor Hale's body lay in the library."], cast("Ann", "Bob", "Cid"))
    assert murderers.names == ["Ann"] and victims.names == ["Victor Hale"]
    assert murderers.confidence >= MARGIN and victims.confidence >= MARGIN
    found = murderers.derivation("Truth.json")
    assert found.origin == "text" and found.value == ["Ann"]
    assert found.candidates[0].name == "Ann" and found.candidates[0].derived
    assert any(e.rule == "named as the murderer" for e in found.candidates[0].evidence)
    assert "The real murderer is Ann" in found.evidence


def test_the_same_story_in_chinese() -> None:
    murderers, victims = derive(
        ["真正的凶手是【安】。她在书房杀害了【韦克多】。", "【韦克多】的尸体倒在书房里。"],
        cast("安", "鲍勃", "西德"), "zh")
    assert murderers.names == ["安"] and victims.names == ["韦克多"]


@pytest.mark.parametrize(("text", "language"), [
    ("The victim is Hall Company. Two men were killed.", "en"),
    ("死者为三名卫兵。两人被杀。他们死了。", "zh"),
    ("死者是“动物之家”负责人。", "zh")])
def test_no_place_organisation_count_or_pronoun_is_a_victim(text, language) -> None:
    _, victims = derive([text], cast("Ann", "Bob"), language)
    assert victims.names == []


def test_a_kill_planned_or_denied_makes_no_murderer() -> None:
    murderers, _ = derive([("Bob wanted to kill Victor. Ann did not kill anyone. Cid planned "
                           "to poison him.")], cast("Ann", "Bob", "Cid"))
    assert murderers.names == []


def test_a_purpose_that_fears_an_accusation_is_no_confession() -> None:
    murderers, _ = derive(["Do not let others identify you as the murderer."] * 2,
                          cast("Ann", "Bob"), owners={0: "Ann", 1: "Bob"})
    assert murderers.names == []


def test_the_owner_of_a_text_confesses_in_the_second_person() -> None:
    murderers, victims = derive(
        ["Conceal the fact that you killed Victor Hale.", "Victor Hale was found dead.",
         "The deceased, Victor Hale, lay on the stairs."],
        cast("Ann", "Bob"), owners={0: "Bob"})
    assert murderers.names == ["Bob"] and victims.names == ["Victor Hale"]


def test_below_the_margin_nothing_is_derived_and_the_note_names_the_candidates() -> None:
    murderers, _victims = derive(["Ann shot Victor Hale.", "Bob shot Victor Hale."],
                                cast("Ann", "Bob"))
    assert murderers.names == [] and murderers.undecided
    note = murderers.note()
    assert "none derived" in note and "Ann" in note and "Bob" in note
    assert "truth.yaml" in note


def test_a_death_the_backstory_tells_once_is_no_victim() -> None:
    _, victims = derive(["The real murderer is Ann. Years ago, Lord Ping died."],
                        cast("Ann", "Bob"))
    assert victims.names == []


def test_question_answers_name_the_murderers_and_victims() -> None:
    # Each character's question file asks again in its own words (WellPlay); a question
    # repeated word for word counts once.
    questions = [question for source, whose in (("Ann.csv", "your"), ("Bob.csv", "the"))
                 for question in (
        Asked(f"Who killed {whose} uncle Victor Hale?", ("Ann",), source),
        Asked(f"Who killed {whose} aunt Wendy Moss?", ("Bob instructed Cid",), source),
        Asked("Who killed Wendy Moss?", ("Bob instructed Cid",), source),
        Asked("Who is the victim?", ("Victor Hale",), source))]
    murderers, victims = derive(["Wendy Moss was found dead in the lake."],
                                cast("Ann", "Bob", "Cid", "Dee"), questions=questions)
    assert set(murderers.names) == {"Ann", "Bob", "Cid"}
    assert set(victims.names) == {"Victor Hale", "Wendy Moss"}


def test_a_question_about_a_suspicion_is_no_answer() -> None:
    questions = [Asked("Who is a possible murderer mentioned in the game?", ("Ann",), "q")]
    murderers, _ = derive(["Nothing happened."], cast("Ann", "Bob"), questions=questions)
    assert murderers.names == []


def test_two_names_of_one_victim_are_one_person() -> None:
    _, victims = derive(["Xu Boqing, who had changed his name from Yao Mengren, came home.",
                         "Xu Boqing: Deceased.", "Doctor Fang killed Yao Mengren."],
                        cast("Doctor Fang", "Ann"))
    assert victims.names == ["Xu Boqing"]
    assert victims.candidates[0].aliases == ["Yao Mengren"]
