"""Bounds a script holds however it was written: counts no real script reaches, text that
aliases expand past what a file may hold, and names a person could not tell apart (equal
up to case, spaces or an invisible character, or empty), refused with one line naming
the field, and ``--seat`` matching names the same way."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.runs.play import PlayError, plan_seats
from jubensha.safeload import DocumentError, parse_document
from jubensha.scripts import load_script
from jubensha.scripts.io import ScriptError
from jubensha.scripts.model import (
    MAX_ACTS,
    MAX_CHARACTERS,
    MAX_CLUES,
    MAX_QUESTIONS,
    MAX_TEXT_CHARS,
)

TINY = Path(__file__).parents[1] / "engine" / "tiny_script.yaml"
runner = CliRunner()


def tiny() -> dict:
    return yaml.safe_load(TINY.read_text(encoding="utf-8"))


def write(tmp_path: Path, data: dict | str) -> Path:
    path = tmp_path / "script.yaml"
    text = data if isinstance(data, str) else yaml.safe_dump(data, allow_unicode=True)
    path.write_text(text, encoding="utf-8")
    return path


def refused(path: Path) -> str:
    with pytest.raises(ScriptError) as error:
        load_script(path)
    return str(error.value)


def many(kind: str, count: int) -> dict:
    data = tiny()
    if kind == "characters":
        data["characters"] += [{"name": f"Extra {i}"} for i in range(count)]
    elif kind == "clues":
        data["clues"] += [{"id": f"x{i}", "text": "A pin."} for i in range(count)]
    elif kind == "acts":
        data["acts"] += [{"number": 3 + i} for i in range(count)]
    else:
        data["questions"] = {"factual": [{"id": f"q{i}", "question": "Who?", "answer": "Ann"}
                                         for i in range(count)]}
    return data


@pytest.mark.parametrize(("kind", "limit", "field"), [
    ("characters", MAX_CHARACTERS, "characters"), ("clues", MAX_CLUES, "clues"),
    ("acts", MAX_ACTS, "acts"), ("questions", MAX_QUESTIONS, "questions.factual")])
def test_counts_past_the_limits_are_refused_at_load(tmp_path: Path, kind: str, limit: int,
                                                    field: str) -> None:
    assert load_script(write(tmp_path, many(kind, 2)))
    message = refused(write(tmp_path, many(kind, limit + 1)))
    assert f": {field}: " in message and f"at most {limit}" in message
    assert len(message.splitlines()) == 1


def test_ten_thousand_characters_are_refused_before_any_game(tmp_path: Path) -> None:
    """The reported case: 10,000 characters in a 430 KB script validated, then ``play``
    died at 3.7 GB. Now it stops at reading, at once."""
    path = write(tmp_path, many("characters", 10_000))
    started = time.perf_counter()
    done = runner.invoke(app, ["play", str(path), "--model", "scripted", "--embedder", "none",
                               "--out", str(tmp_path / "run")])
    assert done.exit_code != 0 and "at most 50 items" in done.output
    assert time.perf_counter() - started < 30 and not (tmp_path / "run").exists()


def test_a_script_holding_more_text_than_any_played_is_refused(tmp_path: Path) -> None:
    data = tiny()
    data["background"] = "The fog rolls in. " * (MAX_TEXT_CHARS // 18 + 1)
    assert "characters of text" in refused(write(tmp_path, data))


def test_an_alias_to_one_long_string_repeated_is_bounded_by_its_expanded_size() -> None:
    """One 5 MB string referenced 400 times is 2 GB of text once expanded (it used to
    validate and then need 2 GB in ``play``); the count of values stays tiny."""
    text = f'a: &s "{"x" * 5_000_000}"\nb: [{", ".join(["*s"] * 400)}]\n'
    with pytest.raises(DocumentError, match="expands to more than 50,000,000 characters"):
        parse_document(text)
    assert parse_document(f'a: &s "{"x" * 1000}"\nb: [*s, *s]\n')["b"][1] == "x" * 1000


def test_the_bomb_in_a_script_is_one_line_naming_the_file(tmp_path: Path) -> None:
    data = yaml.safe_dump(tiny(), allow_unicode=True)
    bomb = f'x-text: &s "{"y" * 1_000_000}"\nx-many: [{", ".join(["*s"] * 60)}]\n'
    message = refused(write(tmp_path, bomb + data))
    assert "script.yaml: (file): the document expands" in message


@pytest.mark.parametrize(("names", "clash"), [
    (["Tom Hale", "TOM HALE"], "TOM HALE"), (["Tom Hale", " Tom Hale"], " Tom Hale"),
    (["Tom Hale", "Tom\u200bHale"], "Tom\u200bHale"), (["Tom Hale", "ＴＯＭ ＨＡＬＥ"], "ＴＯＭ ＨＡＬＥ")])
def test_character_names_equal_up_to_case_space_or_invisible_characters_clash(
        tmp_path: Path, names: list[str], clash: str) -> None:
    data = tiny()
    data["characters"][2]["name"], data["characters"][3]["name"] = names
    message = refused(write(tmp_path, data))
    assert "characters[3].name" in message and "written differently" in message
    assert repr(clash).replace("\u200b", "\\u200b") in message


def test_an_alias_clashing_with_another_character_and_empty_names_are_refused(
        tmp_path: Path) -> None:
    data = tiny()
    data["characters"][1]["aliases"] = ["cara"]
    data["characters"][3]["name"] = "\u200b "
    data["victims"].append({"name": "lord  vale"})
    message = refused(write(tmp_path, data))
    assert "characters[2].name: 'Cara' is 'cara' (Bob) written differently" in message
    assert "characters[3].name: a name needs a visible character" in message
    assert "victims[1].name: 'lord  vale' is 'Lord Vale' written differently" in message


def test_seat_overrides_match_names_as_compared_and_refuse_two_for_one() -> None:
    script = load_script(TINY)
    plans = plan_seats(script, "naive", "scripted", [" a\u200bNN =naive@scripted"])
    assert plans["Ann"].model == "scripted"
    with pytest.raises(PlayError, match="both name 'Ann'"):
        plan_seats(script, "naive", "scripted", ["Ann=naive@scripted", "ANN=extractive@"])
    with pytest.raises(PlayError, match="no such character"):
        plan_seats(script, "naive", "scripted", ["\u200b=naive@scripted"])


@pytest.mark.parametrize(("names", "letters"), [
    (["Tom Hale", "T\u043em H\u0430le"], "U+043E CYRILLIC SMALL LETTER O"),
    (["Agnes Pike", "\u0391gnes Pike"], "U+0391 GREEK CAPITAL LETTER ALPHA"),
    (["Ian Moss", "lan Moss"], "U+0049 LATIN CAPITAL LETTER I")])
def test_attack_look_alike_names_confusable_with_another_are_refused(
        tmp_path: Path, names: list[str], letters: str) -> None:
    """"Tоm Hаle" (Cyrillic о and а) beside "Tom Hale" used to validate: Unicode's
    confusable skeletons (UTS #39) now tell they look alike."""
    data = tiny()
    data["characters"][2]["name"], data["characters"][3]["name"] = names
    message = refused(write(tmp_path, data))
    assert f"characters[3].name: {names[1]!r} looks like {names[0]!r}" in message
    assert letters in message


def test_attack_a_name_carrying_a_bidi_override_is_refused(tmp_path: Path) -> None:
    """A name holding RIGHT-TO-LEFT OVERRIDE that is shown as "Tom Hale" validated."""
    data = tiny()
    data["characters"][3]["name"] = "\u202eelaH moT"
    data["characters"][2]["aliases"] = ["Cara\u2066"]
    message = refused(write(tmp_path, data))
    assert "characters[3].name: '\\u202eelaH moT' carries a bidirectional control " \
           "(U+202E)" in message
    assert "characters[2].aliases[0]" in message and "(U+2066)" in message


def test_names_that_only_share_letters_or_scripts_are_not_look_alikes(tmp_path: Path) -> None:
    data = tiny()
    names = ["Zoë Hale", "Zoe Hale", "顾青禾", "李青禾"]
    for character, name in zip(data["characters"], names, strict=True):
        character["name"] = name
    for part in ("murderers", "kills"):
        data["truth"].pop(part, None)
    assert "looks like" not in runner.invoke(app, ["scripts", "validate",
                                                   str(write(tmp_path, data))]).output


def test_attack_a_70000_character_field_is_cut_by_scripts_validate(tmp_path: Path) -> None:
    """`scripts validate` used to echo a 70,000-character value (a name no character has)
    and field name whole; both are cut, as every error line is."""
    data = tiny()
    data["truth"]["murderers"] = ["x" * 70_000]
    data["clues"][0]["holder"] = "z" * 70_000
    result = runner.invoke(app, ["scripts", "validate", str(write(tmp_path, data))])
    assert result.exit_code == 1 and len(result.output.splitlines()) >= 2
    assert all(len(line) < 1_000 for line in result.output.splitlines())
    assert "characters)" in result.output and "x" * 1_000 not in result.output
