"""ThinkThrice game JSON import, on the original fixture and on malformed variants."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jubensha.scripts import ScriptError, validate
from jubensha.scripts.importers.thinkthrice import discover_thinkthrice, import_thinkthrice

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TEAHOUSE = FIXTURES / "thinkthrice" / "清风茶馆.json"


def test_the_fixture_imports_completely() -> None:
    script = import_thinkthrice(TEAHOUSE)
    assert (script.id, script.title, script.language) == ("thinkthrice-清风茶馆", "清风茶馆", "zh")
    assert script.names == ["林默", "阿福", "柳眉"]
    assert [v.name for v in script.victims] == ["周掌柜"]
    assert script.murderers == ["林默"] and script.character("林默").killed == ["周掌柜"]
    assert script.truth.kills[0].killers == ["林默"]
    assert script.background.startswith("民国十年秋") and script.rules.startswith("1. 本局")
    assert [(c.title, c.holder) for c in script.clues][:2] == [("物证", "public")] * 2
    lin = script.character("林默")
    assert (lin.age, lin.side, lin.mission) == ("38", "murderer",
                                                "你是凶手，隐瞒你在茶里下毒的事，把嫌疑引向别人。")
    assert lin.secrets == ["你从库房拿了一包老鼠药；你涂改过账本。"]
    assert [(e.time, e.text) for e in lin.timeline][:2] == [
        ("20:30", "掌柜叫你去后堂，说明早查账。"), ("21:10", "你提着灯笼去库房，拿了一包老鼠药。")]
    assert [e.time for e in script.character("阿福").timeline] == ["21:00", "21:15", "22:30"]
    assert script.character("阿福").age == "17"
    assert script.character("柳眉").timeline[0].time == "傍晚六点"
    assert validate(script).problems == []


def test_discovery_finds_game_files_only(tmp_path) -> None:
    (tmp_path / "other.json").write_text('{"a": 1}', encoding="utf-8")
    (tmp_path / "broken.json").write_text('{"角色": [', encoding="utf-8")
    (tmp_path / "game.json").write_text(TEAHOUSE.read_text(encoding="utf-8"), encoding="utf-8")
    assert discover_thinkthrice(tmp_path) == [tmp_path / "game.json"]


def _variant(tmp_path: Path, **changes: object) -> Path:
    data = json.loads(TEAHOUSE.read_text(encoding="utf-8")) | changes
    path = tmp_path / "variant.json"
    path.write_text(json.dumps({k: v for k, v in data.items() if v is not None},
                               ensure_ascii=False), encoding="utf-8")
    return path


def test_a_list_of_victims_and_a_role_that_is_not_just_a_side(tmp_path) -> None:
    data = json.loads(TEAHOUSE.read_text(encoding="utf-8"))
    data["角色"][1]["角色"] = "平民（目击者）"
    path = _variant(tmp_path, 受害人=["周掌柜", "王伙计"], 角色=data["角色"])
    script = import_thinkthrice(path)
    assert [v.name for v in script.victims] == ["周掌柜", "王伙计"]
    assert script.character("阿福").extra["角色"] == "平民（目击者）"
    assert validate(script).ok


@pytest.mark.parametrize(("change", "message"), [
    ({"角色": None}, "variant.json: 角色: missing (required in a ThinkThrice script)"),
    ({"角色": "林默"}, "variant.json: 角色: expected a list, found a string"),
    ({"线索": [{"clue_type": "物证"}]}, "variant.json: 线索[0].content: missing: a clue needs its text"),
    ({"角色": [{"年龄": 3}]}, "variant.json: 角色[0].角色名: missing: every character needs a name"),
])
def test_malformed_games_name_file_and_field(tmp_path, change, message) -> None:
    with pytest.raises(ScriptError) as info:
        import_thinkthrice(_variant(tmp_path, **change))
    assert len(info.value.problems) == 1 and str(info.value).endswith(message)


def test_truncated_game_file() -> None:
    with pytest.raises(ScriptError, match=r"invalid JSON at line \d+, column \d+"):
        import_thinkthrice(FIXTURES / "malformed" / "thinkthrice_truncated.json")
