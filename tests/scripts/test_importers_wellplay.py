"""WellPlay (PLAYER*) import: real scripts with precise expectations, and malformed folders."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from jubensha.scripts import ScriptError, validate
from jubensha.scripts.importers.wellplay import import_wellplay, infer_aspect


@pytest.fixture(scope="module")
def wellplay(datasets: Path) -> Path:
    return datasets / "wellplay"


def test_sin_characters_truth_and_questions(wellplay: Path) -> None:
    script = import_wellplay(wellplay / "english" / "Sin (4 people closed)")
    assert script.id == "wellplay-en-sin-4-people-closed"
    assert (script.title, script.language, script.metadata.player_count) == ("Sin", "en", 4)
    assert script.names == ["Zhang Villager", "Chief Wang", "Officer Li", "Hu Investigate"]
    assert [v.name for v in script.victims] == ["Zhao Cishan"]
    assert script.murderers == ["Chief Wang"]
    assert [(k.victim, k.killers) for k in script.truth.kills] == [("Zhao Cishan", ["Chief Wang"])]
    assert script.character("Chief Wang").killed == ["Zhao Cishan"]
    choice = script.questions.choice
    assert Counter(q.set for q in choice) == {"wellplay": 44, "fsa": 44}
    assert Counter(q.category for q in choice) == {"relations": 42, "reasoning": 40,
                                                    "objective": 6}
    assert Counter(q.asked_of for q in choice if q.set == "wellplay") == {
        "Hu Investigate": 14, "Zhang Villager": 13, "Officer Li": 11, "Chief Wang": 6}
    first = next(q for q in choice if q.id == "fsa-001")
    assert (first.question, first.options, first.answer, first.multiple) == (
        "Who killed Zhao Cishan?", {"a": "Zhang Villager", "b": "Chief Wang",
                                    "c": "Hu Investigate"}, ["b"], False)
    assert (first.category, first.worth, first.aspect, first.source) == (
        "objective", 10, "who", "final_result/FSA.csv:2")
    assert sum(q.multiple for q in choice) == 6
    assert validate(script).problems == []


def test_question_ids_are_unique_and_stable(wellplay: Path) -> None:
    folder = wellplay / "english" / "Sin (4 people closed)"
    ids = [q.id for q in import_wellplay(folder).questions.choice]
    assert len(ids) == len(set(ids))
    assert ids == [q.id for q in import_wellplay(folder).questions.choice]
    assert ids[0] == "wellplay-zhang-villager-001"


def test_victims_are_aligned_by_position_across_spellings(wellplay: Path) -> None:
    script = import_wellplay(wellplay / "english" / "Solitary Boat Firefly (6 people)")
    assert [v.name for v in script.victims] == [
        "Zhou Mengdang", "Bao Liu(Yu Shi)", "Cui Shouheng", "Taitai(Wang Xi Rong)"]
    assert {k.victim: k.killers for k in script.truth.kills} == {
        "Zhou Mengdang": ["Tian Chou"], "Bao Liu(Yu Shi)": ["Tian Chou"],
        "Cui Shouheng": ["Yu Sunian"], "Taitai(Wang Xi Rong)": ["Yu Sunian"]}
    assert script.character("Zhou Chitong").extra["victim_names"][1] == "嫂子(Bao Liu)"
    assert len(script.acts) == 3


def test_a_victim_no_player_killed_is_killed_offstage(wellplay: Path) -> None:
    script = import_wellplay(wellplay / "english" / "Ghost Revenge (7 people)")
    assert script.truth.killed_offstage == ["Xia Bolong"]
    assert sorted(script.murderers) == ["Aming", "Xia Zhongpeng"]
    assert validate(script).ok


def test_danshui_villa_is_imported_as_each_language_marks_it(wellplay: Path) -> None:
    english = import_wellplay(wellplay / "english" / "Danshui Villa (7 people)")
    chinese = import_wellplay(wellplay / "chinese" / "丹水山庄（7人）")
    assert english.murderers == ["Feng Shuangji", "Guo Wangshan", "Qi Yue"]
    assert chinese.murderers == ["冯双骥", "齐岳"]
    assert chinese.language == "zh" and validate(chinese).ok and validate(english).ok


def test_aliases_from_names_and_from_question_spellings(wellplay: Path) -> None:
    star = import_wellplay(wellplay / "english" / "Oriental Star Cruise Incident (open to 5 people)")
    han = star.character("Han the Crew Member")
    assert han.name == "Han Chengwu"
    assert "Han Chengwu (Han the Attendant or Han the Crew Member)" in han.aliases
    assert star.character("Manager Xi").name == "Manager Xiu"
    ghost = import_wellplay(wellplay / "english" / "Ghost Revenge (7 people)")
    assert {"Li Luoming", "Brother Li"} <= set(ghost.character("Aming").aliases)
    assert ghost.character("Lan Qin").name == "Anqi"
    assert ghost.character("Yu Zhu Chengmu").name == "Yu Zu Chengmu"
    sunshine = import_wellplay(wellplay / "chinese" / "绝命阳光号（4人封闭）")
    assert sunshine.character("王船工").aliases == []  # 王小工 is his son, not a typo


def test_shifted_answer_cells_are_repaired_and_noted(wellplay: Path) -> None:
    script = import_wellplay(wellplay / "chinese" / "幽灵复仇（7人)")
    question = next(q for q in script.questions.choice
                    if q.source == "final_result/GM.csv:23")
    assert question.answer == ["b"] and "e" not in question.options
    assert any("GM.csv line 23" in note for note in script.metadata.notes)


@pytest.mark.parametrize(("question", "category", "aspect"), [
    ("Who killed Zhao Cishan?", "objective", "who"),
    ("赵慈善是怎么死的？", "reasoning", "how"),
    ("凶手杀赵慈善的动机是什么？", "reasoning", "why"),
    ("Where was Zhao Cishan killed?", "reasoning", "where"),
    ("赵慈善是什么时候被杀死的？", "reasoning", "when"),
    ("请选出你最怀疑杀死赵慈善的两个人", "reasoning", "suspect"),
    ("The perpetrator is the victim Zhao Cishan. Who is it?", "reasoning", "relationship"),
    ("What is Yue Dongwen hiding?", "reasoning", None),
    ("【张村民】和【王村长】的关系是什么？", "relations", "relationship"),
])
def test_aspect_is_inferred_where_the_wording_is_plain(question, category, aspect) -> None:
    assert infer_aspect(question, category) == aspect


def _tiny(tmp_path: Path, **character: object) -> Path:
    folder = tmp_path / "Tiny (2 people)"
    (folder / "json").mkdir(parents=True)
    (folder / "final_result").mkdir()
    (folder / "json" / "script_info.json").write_text(json.dumps(
        {"script_name": "Tiny", "character_name": ["Ann", "Bob"]}), encoding="utf-8")
    base = {"script": "['Ann story']", "acts_goal": "['Find out']", "victims": ["Vic"],
            "kill_by_me": [1], "is_murderer": 1}
    (folder / "json" / "Ann.json").write_text(json.dumps(base | character), encoding="utf-8")
    (folder / "json" / "Bob.json").write_text(json.dumps(
        {"script": ["Bob story"], "victims": ["Vic"], "kill_by_me": [0], "is_murderer": 0}),
        encoding="utf-8")
    (folder / "final_result" / "Bob.csv").write_text(
        "value,type,question,a,b,c,d,e,truth\na,a,Who killed Vic?,Ann,Bob,,,,a\n",
        encoding="utf-8")
    return folder


def test_a_minimal_script_with_python_list_strings_and_missing_optional_keys(tmp_path) -> None:
    script = import_wellplay(_tiny(tmp_path))
    assert script.character("Ann").story == "Ann story"
    assert script.character("Ann").mission == "Find out"
    assert script.questions.choice[0].asked_of == "Bob"
    assert validate(script).ok


@pytest.mark.parametrize(("change", "message"), [
    ({"kill_by_me": [1, 0]}, "Ann.json: kill_by_me: has 2 entries for 1 victims"),
    ({"is_murderer": "yes"}, "Ann.json: is_murderer: expected 0 or 1, found 'yes'"),
    ({"victims": 3}, "Ann.json: victims: expected a list, found a number"),
])
def test_malformed_character_files_name_file_and_field(tmp_path, change, message) -> None:
    with pytest.raises(ScriptError) as info:
        import_wellplay(_tiny(tmp_path, **change))
    assert len(info.value.problems) == 1 and str(info.value).endswith(message)


def test_truncated_and_missing_files_are_clear_errors(tmp_path) -> None:
    folder = _tiny(tmp_path)
    (folder / "json" / "Bob.json").write_text('{"script": ["cut', encoding="utf-8")
    with pytest.raises(ScriptError, match=r"Bob.json: \(file\): invalid JSON at line 1"):
        import_wellplay(folder)
    (folder / "json" / "Bob.json").unlink()
    with pytest.raises(ScriptError, match=r"Bob.json: \(file\): no such file"):
        import_wellplay(folder)
    with pytest.raises(ScriptError, match="not a WellPlay script folder"):
        import_wellplay(tmp_path)


def test_chinese_texts_stored_double_escaped_get_real_line_breaks(wellplay: Path) -> None:
    script = import_wellplay(wellplay / "chinese" / "罪恶（4人封闭）")
    for character in script.characters:
        assert "\\n" not in character.story and "\\n" not in character.mission
        assert character.story.count("\n") >= 10


def test_unescaping_leaves_texts_with_real_line_breaks_alone() -> None:
    from jubensha.scripts.importers.common import unescape_doubled

    assert unescape_doubled('a\\nb \\"c\\"') == 'a\nb "c"'
    assert unescape_doubled("C:\\new\nfolder\nx") == "C:\\new\nfolder\nx"


def test_files_without_victims_or_murderer_flags_get_a_derived_truth(tmp_path) -> None:
    folder = tmp_path / "Bare (3 people)"
    (folder / "json").mkdir(parents=True)
    (folder / "final_result").mkdir()
    (folder / "json" / "script_info.json").write_text(json.dumps(
        {"script_name": "Bare", "character_name": ["Ann", "Bob", "Cid"]}), encoding="utf-8")
    sheets = {"Ann": "You killed Vic Hale at midnight; conceal it.",
              "Bob": "You found Vic Hale's body in the garden.", "Cid": "You slept."}
    for name, story in sheets.items():
        (folder / "json" / f"{name}.json").write_text(json.dumps({"script": [story]}),
                                                      encoding="utf-8")
    (folder / "final_result" / "Bob.csv").write_text(
        "value,type,question,a,b,c,d,e,truth\na,a,Who killed Vic Hale?,Ann,Bob,Cid,,,a\n"
        "a,a,Who killed your friend Vic Hale?,Ann,Bob,Cid,,,a\n", encoding="utf-8")
    script = import_wellplay(folder)
    assert script.murderers == ["Ann"] and [v.name for v in script.victims] == ["Vic Hale"]
    assert script.character("Ann").killed == ["Vic Hale"]
    assert {d.fact: d.origin for d in script.metadata.derivations} == {
        "murderers": "text", "victims": "text"}
    assert validate(script).ok
