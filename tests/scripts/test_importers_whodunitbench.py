"""WhodunitBench import: murderer, truth sections, clue pool, parsed options, images and the
derived victim."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from jubensha.scripts import PUBLIC, ScriptError, validate
from jubensha.scripts.importers.whodunitbench import (
    import_whodunitbench,
    split_reason,
    steps_of,
)


@pytest.fixture(scope="module")
def bench(datasets: Path) -> Path:
    return datasets / "whodunitbench"


def test_boliwu_roles_truth_questions_and_images(bench: Path) -> None:
    script = import_whodunitbench(bench / "BOLIWU")
    assert (script.id, script.title, script.language) == ("whodunitbench-boliwu", "BOLIWU", "zh")
    assert len(script.characters) == 7
    assert script.murderers == ["冉哲言"] and script.character("冉哲言").side == "murderer"
    assert script.character("冉哲言").mission.startswith("请通过手头上的所有线索")
    assert script.truth.motive == "凶手仇恨死者"
    assert script.truth.method.startswith("西侧走廊房间的设定")
    assert [v.name for v in script.victims] == ["夏以月"]
    assert script.truth.kills[0].victim == "夏以月"
    assert len(script.truth.reasoning_chain) == 12
    assert script.extra["reasoning_steps"][:8] == [1] * 7 + [2]
    sets = Counter(q.set for q in script.questions.choice)
    assert sets == {"key_clues_questions": 88, "ei_q": 40, "cxi_q": 10, "r_q": 350}
    first = script.questions.choice[0]
    assert (first.question, first.options, first.answer) == (
        "薛柔离开去书房的时间是多少？", {"a": "2:30", "b": "2:45", "c": "3:00", "d": "3:15"}, ["b"])
    images = [c for c in script.clues if c.image]
    assert [c.image for c in images] == ["img/image_1.png", "img/image_2.png", "img/image_3.png"]
    held = [c for c in script.clues if c.holder == "李威廉"]
    assert len(held) == 5 and all(c.key for c in held)
    assert validate(script).problems == []


def test_steps_come_from_the_source_code(bench: Path) -> None:
    script = import_whodunitbench(bench / "Pu")
    by_source = {q.source: q.steps for q in script.questions.choice if q.source}
    assert by_source["旅人+米里奥-2"] == 2 and by_source["p-7"] == 7
    assert by_source["p-n"] is None and by_source["l"] is None


@pytest.mark.parametrize(("code", "steps"), [("p-1", 1), ("j+m+z-2", 2), ("p", None),
                                             ("p-n", None), ("", None), ("p-0", None)])
def test_steps_of(code, steps) -> None:
    assert steps_of(code) == steps


def test_missing_upstream_image_is_noted_not_an_error(bench: Path) -> None:
    script = import_whodunitbench(bench / "DAMAIF")
    assert "img/ has no image_1" in script.metadata.notes
    assert next(c.image for c in script.clues if c.image) == "img/image_2.jpg"
    assert validate(script).ok


def test_a_pool_key_spelled_differently_still_finds_its_role(bench: Path) -> None:
    script = import_whodunitbench(bench / "DAMAIF")
    assert any(c.holder == "大骄扬" and c.extra["pool"] == "大娇扬" for c in script.clues)
    unknown = [c for c in script.clues if c.extra.get("about") == "小麦"]
    assert unknown and all(c.holder == PUBLIC for c in unknown)


@pytest.mark.parametrize(("folder", "victim"), [
    ("BOLIWU", "夏以月"), ("DI7MI_2", "费雪"), ("DI7MI_3", "欧文"), ("Jianghehuhai", "丁硕楠"),
    ("XIAOHUA_example", "夏晴天"), ("DAMAIF", "陆洲同"),
    ("BOLIWU2", "保罗"),  # the solution: "用从宴会厅顺来的刀杀死保罗"
    ("Ma1", "节制"),  # "死者竟是候选人“节制”和三名…党卫军": the one named of four dead
])
def test_victims_are_derived_or_left_out(bench: Path, folder, victim) -> None:
    script = import_whodunitbench(bench / folder)
    assert [v.name for v in script.victims] == ([victim] if victim else [])
    if victim is None:
        assert "the data names no victim: the script has none" in script.metadata.notes


def test_repeated_question_set_is_imported_once(bench: Path) -> None:
    script = import_whodunitbench(bench / "Pu")
    assert "key_clue_q repeats key_clues_questions (numbered): imported once" in \
        script.metadata.notes
    assert not any(q.set == "key_clue_q" for q in script.questions.choice)


def test_an_answer_in_words_has_no_letters_but_keeps_its_text(bench: Path) -> None:
    script = import_whodunitbench(bench / "Monv")
    question = next(q for q in script.questions.choice if not q.answer)
    assert question.rationale == "根据提供的信息无法确定，需要进一步分析"
    assert [p.field for p in validate(script).warnings] == [
        f"questions.choice[{script.questions.choice.index(question)}].answer"]


def test_a_victim_named_only_in_the_solution_after_a_verb_of_killing(tmp_path) -> None:
    reason = "作案手法：凶手关灯后进入密室，用刀杀死保罗，然后离开。"
    script = import_whodunitbench(_env(tmp_path, reason=reason))
    assert [v.name for v in script.victims] == ["保罗"]
    assert script.metadata.derivations[-1].evidence.startswith("作案手法")


def test_a_quoted_victim_before_a_place_the_questions_offer(tmp_path) -> None:
    text = "死者竟是候选人“节制”和三名之前驻守在巨人馆门口的卫兵。"
    question = {"q": "凶手在哪里？a. 巨人馆 b. 酒店", "ans": "a", "source": "p-1"}
    script = import_whodunitbench(_env(tmp_path, task_nm=text,
                                       key_clues_questions=[question]))
    assert [v.name for v in script.victims] == ["节制"]


@pytest.mark.parametrize(("text", "victim"), [
    ("死者为“动物之家”负责人马尔普女士，死于中毒。", "马尔普"),  # a place in quotes, then the person
    ("死者为两人，均被刺。", None),  # a count of people is nobody's name
    ("死者是他们的老师。", None),
    ("死者叫“小王”，二十岁。", "小王"),
])
def test_the_victim_is_a_person_not_an_organisation_or_a_pronoun(tmp_path, text, victim):
    script = import_whodunitbench(_env(tmp_path, task_nm=text))
    assert [v.name for v in script.victims] == ([victim] if victim else [])


def test_a_label_with_a_colon_inside_a_paragraph_is_no_heading() -> None:
    parts = split_reason("作案动机：为了钱。\n作案手法：他用了延时手法：把冰块放在门后。")
    assert parts["method"] == "他用了延时手法：把冰块放在门后。"


def test_truth_text_is_split_at_its_headings() -> None:
    assert split_reason("\n作案动机：\n仇杀\n\n作案手法：\n下毒\n") == {
        "motive": "仇杀", "method": "下毒", "narrative": ""}
    assert split_reason("凶手想帮死者解脱") == {"motive": "", "method": "",
                                               "narrative": "凶手想帮死者解脱"}


def _env(tmp_path: Path, **changes: object) -> Path:
    data = {"ju_name": "T", "murder": "甲", "reason": "作案动机：恨", "task_nm": "找凶手",
            "task_m": "隐藏", "role": [{"name": "甲", "back": "我是甲", "m": 1, "r_q": []},
                                       {"name": "乙", "back": "我是乙", "m": 0, "r_q": []}],
            "key_clues_questions": [{"q": "谁是凶手？a. 甲 b. 乙", "ans": "a", "source": "p-1"}],
            "ei_q": {"key_q": [], "key_ans": []}, "cxi_q": {"key_q": [], "key_ans": []}}
    folder = tmp_path / "T"
    folder.mkdir()
    (folder / "env_p_all.json").write_text(json.dumps(data | changes, ensure_ascii=False),
                                           encoding="utf-8")
    return folder


def test_a_script_elsewhere_with_optional_keys_missing(tmp_path) -> None:
    script = import_whodunitbench(_env(tmp_path))
    assert script.murderers == ["甲"] and script.questions.choice[0].steps == 1
    assert "no img/ folder: no image clues" in script.metadata.notes
    assert validate(script).ok


@pytest.mark.parametrize(("change", "message"), [
    ({"murder": "丙"}, "murder: '丙' is not the name of a role (甲, 乙)"),
    ({"role": "甲"}, "role: expected a list, found a string"),
    ({"role": [{"back": "x"}]}, "role[0].name: missing: every role needs a name"),
    ({"ei_q": {"key_q": ["a？a. 1 b. 2"], "key_ans": []}},
     "ei_q.key_ans: 0 answers for 1 questions"),
])
def test_malformed_files_name_the_field(tmp_path, change, message) -> None:
    with pytest.raises(ScriptError) as info:
        import_whodunitbench(_env(tmp_path, **change))
    assert len(info.value.problems) == 1 and str(info.value).endswith(message)


def test_derived_facts_say_where_they_come_from(bench: Path) -> None:
    script = import_whodunitbench(bench / "Jianghehuhai")
    found = {d.fact: d for d in script.metadata.derivations}
    assert found["murderers"].value == ["钟于宁"] and found["murderers"].source == "env_p_all.json"
    assert found["victims"].value == ["丁硕楠"] and "丁硕楠" in found["victims"].evidence


def test_without_a_murder_field_the_murderer_is_weighed_from_the_answers(tmp_path) -> None:
    questions = [{"q": "谁是真正的凶手？a. 甲 b. 乙", "ans": "a", "source": "p-1"},
                 {"q": "是谁杀死了丙丁？a. 甲 b. 乙", "ans": "a", "source": "p-2"}]
    roles = [{"name": "甲", "back": "我是甲", "r_q": []}, {"name": "乙", "back": "我是乙", "r_q": []}]
    script = import_whodunitbench(_env(tmp_path, murder="", role=roles,
                                       key_clues_questions=questions,
                                       task_nm="死者是丙丁。"))
    assert script.murderers == ["甲"] and [v.name for v in script.victims] == ["丙丁"]
    found = {d.fact: d for d in script.metadata.derivations}
    assert found["murderers"].origin == "text" and found["murderers"].confidence >= 0.5


def test_a_role_s_own_question_counts_half(tmp_path) -> None:
    roles = [{"name": "甲", "back": "我是甲", "r_q": [
        {"q": "卡门最终被谁杀害？a. 甲 b. 乙", "ans": "b"}]},
             {"name": "乙", "back": "我是乙", "r_q": []}]
    script = import_whodunitbench(_env(tmp_path, murder="", role=roles,
                                       key_clues_questions=[]))
    assert script.murderers == [] and not script.metadata.has_truth
    assert any("do not make the murderer clear" in n for n in script.metadata.notes)
