"""The small parsers every importer relies on: options inside question text, answer letters,
timelines, numbered lists, Python-list strings and names spelled two ways."""

from __future__ import annotations

import pytest

from jubensha.scripts.importers.common import (
    Names,
    answer_letters,
    language_of,
    near_miss,
    parse_options,
    parse_timeline,
    read_json,
    slugify,
    split_items,
    split_parenthetical,
    text_list,
)
from jubensha.scripts.io import ScriptError


@pytest.mark.parametrize(("text", "stem", "options"), [
    ("薛柔离开去书房的时间是多少？a. 2:30 b. 2:45 c. 3:00 d. 3:15", "薛柔离开去书房的时间是多少？",
     {"a": "2:30", "b": "2:45", "c": "3:00", "d": "3:15"}),
    ("左胸的伤口是什么凶器造成的？a.枪 b.棍 c.剑 d.没有伤口可以造成", "左胸的伤口是什么凶器造成的？",
     {"a": "枪", "b": "棍", "c": "剑", "d": "没有伤口可以造成"}),
    ("Who lied? A. Ann B. Bob C. Cid", "Who lied?", {"a": "Ann", "b": "Bob", "c": "Cid"}),
    ("谁先到？a、张三 b、李四", "谁先到？", {"a": "张三", "b": "李四"}),
    ("谁先到？Ａ．张三 Ｂ．李四", "谁先到？", {"a": "张三", "b": "李四"}),
    ("Plan a. failed; which? a. one b. two", "Plan a. failed; which?", {"a": "one", "b": "two"}),
])
def test_options_embedded_in_a_question_are_split_out(text, stem, options) -> None:
    assert parse_options(text) == (stem, options)


def test_a_question_without_a_run_of_options_keeps_its_text() -> None:
    assert parse_options("What happened at 2 a.m.?") == ("What happened at 2 a.m.?", {})


@pytest.mark.parametrize(("answer", "letters"), [
    ("b", ["b"]), ("A,C", ["a", "c"]), ("ab", ["a", "b"]), ("bb", ["b"]), ("a和b", ["a", "b"]),
    ("根据提供的信息无法确定", []), ("", []), (None, []),
])
def test_answer_letters(answer, letters) -> None:
    assert answer_letters(answer) == letters


def test_timeline_lines_and_sentences_get_their_leading_time() -> None:
    entries = parse_timeline("20:30 掌柜叫你去后堂。\n傍晚六点 你们吵架。21:00 在后厨。22:30 发现尸体。")
    assert [(e.time, e.text) for e in entries] == [
        ("20:30", "掌柜叫你去后堂。"), ("傍晚六点", "你们吵架。"), ("21:00", "在后厨。"),
        ("22:30", "发现尸体。")]


def test_timeline_text_without_times_is_kept_as_entries() -> None:
    assert [(e.time, e.text) for e in parse_timeline("You slept.\nThen woke.")] == [
        (None, "You slept."), (None, "Then woke.")]


def test_numbered_items_are_split_and_plain_text_is_one_item() -> None:
    assert split_items("1、找出真凶。\n2、隐瞒开枪。") == ["找出真凶。", "隐瞒开枪。"]
    assert split_items("Main: find him. 1. Why? 2. How?") == ["Main: find him.", "Why?", "How?"]
    assert split_items("Find the truth") == ["Find the truth"]
    assert split_items("  ") == []


def test_python_list_strings_are_read_as_lists_without_eval() -> None:
    assert text_list("['a', 'b']", "f", "x") == ["a", "b"]
    assert text_list(["['one']", "two"], "f", "x") == ["one", "two"]
    assert text_list("[not a list", "f", "x") == ["[not a list"]
    assert text_list("__import__('os')", "f", "x") == ["__import__('os')"]


def test_a_list_field_of_the_wrong_type_names_file_and_field() -> None:
    with pytest.raises(ScriptError) as info:
        text_list(5, "a.json", "script")
    assert str(info.value) == "a.json: script: expected a list, found a number"


def test_names_match_across_dots_width_brackets_and_doctor() -> None:
    names = Names(["西尔维娅•科斯塔", "Doctor Fang"])
    assert names.exact("【西尔维娅·科斯塔】") == "西尔维娅•科斯塔"
    assert names.exact("Dr. Fang") == "Doctor Fang"


def test_near_misses_are_typos_not_other_people() -> None:
    assert near_miss("Manager Xi", "Manager Xiu")
    assert near_miss("Yu Zhu Chengmu", "Yu Zu Chengmu")
    assert near_miss("Lenxing Ye", "Lengxing Ye")
    assert near_miss("大娇扬", "大骄扬")
    assert not near_miss("Duan Hejun", "Duan Yuetong")
    assert not near_miss("Hu Research", "Hu Investigate")


def test_chinese_near_misses_resolve_only_where_a_character_is_certain() -> None:
    names = Names(["小布莱克", "大骄扬"])
    assert names.resolve("老布莱克") is None
    assert names.resolve("大娇扬") is None
    assert names.resolve("大娇扬", chinese=True) == "大骄扬"


def test_parenthetical_alternatives() -> None:
    assert split_parenthetical("Han Chengwu (Han the Attendant or Han the Crew Member)") == (
        "Han Chengwu", ["Han the Attendant", "Han the Crew Member"])
    assert split_parenthetical("Anqi") == ("Anqi", [])


def test_slugs_keep_chinese_and_drop_spaces_slashes_and_brackets() -> None:
    assert slugify("Sin (4 people closed)") == "sin-4-people-closed"
    assert slugify("罪恶（4人封闭）") == "罪恶-4人封闭"
    assert slugify("a/b\u200bc") == "a-b-c"


def test_language_from_folder_name_else_from_text(tmp_path) -> None:
    assert language_of(tmp_path / "english" / "x", "中文") == "en"
    assert language_of(tmp_path / "x", "这是中文的剧本") == "zh"
    assert language_of(tmp_path / "x", "An English script") == "en"


def test_json_errors_name_line_and_column_and_only_trailing_commas_are_forgiven(tmp_path) -> None:
    trailing = tmp_path / "trailing.json"
    trailing.write_text('{"a": [1, 2,],\n}', encoding="utf-8")
    data, note = read_json(trailing, trailing_commas=True)
    assert data == {"a": [1, 2]} and "trailing comma" in note
    truncated = tmp_path / "cut.json"
    truncated.write_text('{"a": [1, 2', encoding="utf-8")
    with pytest.raises(ScriptError) as info:
        read_json(truncated, trailing_commas=True)
    assert str(info.value).startswith(f"{truncated}: (file): invalid JSON at line 1")
