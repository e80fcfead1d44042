"""The ThinkThrice game JSON (paper appendices C and H; the released code reads
``受害人``, ``剧本背景``, ``游戏规则``, ``线索`` and ``角色``). No public script exists in this
format; ``tests/fixtures/thinkthrice/`` holds a small original one.

``角色`` (the role) decides the side: a role that mentions 凶手 is the murderer. Every
victim in ``受害人`` (a name or a list of names) is a kill of every murderer, which is the
format's rule of one murderer per game. Clues are public cards titled by ``clue_type``.
The timeline text becomes entries, each with its leading time where it has one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jubensha.scripts.importers.common import (
    expect,
    fail,
    language_of,
    parse_timeline,
    read_json,
    slugify,
    text_list,
    text_of,
)
from jubensha.scripts.io import ScriptError
from jubensha.scripts.model import (
    Character,
    Clue,
    Kill,
    Metadata,
    Script,
    Truth,
    Victim,
)

REQUIRED = ("受害人", "角色")
TITLE_KEYS = ("剧本名", "剧本名称", "标题", "title")
_TOP = {"受害人", "剧本背景", "游戏规则", "线索", "角色", *TITLE_KEYS}
_ROLE = {"角色名", "年龄", "角色", "角色任务", "角色需要知道的事", "角色不可以主动说出的事情",
         "人物剧本", "案发日时间线"}


def discover_thinkthrice(root: Path) -> list[Path]:
    """JSON files under ``root`` (or ``root`` itself) that are ThinkThrice games: objects
    with ``角色`` and ``受害人``. Files that do not parse are skipped here and reported
    when imported one by one."""
    files = [root] if root.is_file() else sorted(root.rglob("*.json"))
    return [path for path in files if _is_game(path)]


def _is_game(path: Path) -> bool:
    try:
        data = read_json(path)[0]
    except ScriptError:  # discovery only looks; importing the file reports the error
        return False
    return isinstance(data, dict) and all(key in data for key in REQUIRED)


def import_thinkthrice(src: Path) -> Script:
    if src.is_dir():
        raise fail(src, "(file)", "a ThinkThrice script is one .json file, not a folder")
    data = expect(read_json(src)[0], dict, src, "(top level)")
    for key in REQUIRED:
        if key not in data:
            raise fail(src, key, "missing (required in a ThinkThrice script)")
    roles = expect(data["角色"], list, src, "角色")
    if not roles:
        raise fail(src, "角色", "empty: a script needs characters")
    characters = [_character(expect(role, dict, src, f"角色[{i}]"), src, i)
                  for i, role in enumerate(roles)]
    victims = [v.strip() for v in text_list(data["受害人"], src, "受害人") if v.strip()]
    murderers = [c.name for c in characters if c.side == "murderer"]
    for character in characters:
        if character.side == "murderer":
            character.killed = list(victims)
    title = next((text_of(data[k], src, k) for k in TITLE_KEYS if data.get(k)), src.stem)
    background = text_of(data.get("剧本背景"), src, "剧本背景").strip()
    return Script(
        id=f"thinkthrice-{slugify(src.stem)}",
        title=title,
        language=language_of(Path(), background, *(c.story for c in characters)),
        background=background,
        rules=text_of(data.get("游戏规则"), src, "游戏规则").strip(),
        victims=[Victim(name=v) for v in victims],
        characters=characters,
        clues=_clues(data.get("线索", []), src),
        truth=Truth(murderers=murderers,
                    kills=[Kill(victim=v, killers=murderers) for v in victims])
        if murderers else None,
        metadata=Metadata(source="thinkthrice", source_path=src.name,
                          player_count=len(characters), has_truth=bool(murderers),
                          notes=[] if murderers else ["no role is the murderer (凶手): no truth"]),
        extra={k: v for k, v in data.items() if k not in _TOP},
    )


def _character(role: dict[str, Any], src: Path, i: int) -> Character:
    where = f"角色[{i}]"
    name = text_of(role.get("角色名"), src, f"{where}.角色名").strip()
    if not name:
        raise fail(src, f"{where}.角色名", "missing: every character needs a name")
    side_text = text_of(role.get("角色"), src, f"{where}.角色").strip()
    extra: dict[str, Any] = {k: v for k, v in role.items() if k not in _ROLE}
    if side_text not in ("凶手", "平民", ""):
        extra["角色"] = side_text
    age = role.get("年龄")
    return Character(
        name=name,
        age=text_of(age, src, f"{where}.年龄").strip() or None,
        side="murderer" if "凶手" in side_text else "civilian",
        mission=text_of(role.get("角色任务"), src, f"{where}.角色任务").strip(),
        needs_to_know=_texts(role.get("角色需要知道的事"), src, f"{where}.角色需要知道的事"),
        secrets=_texts(role.get("角色不可以主动说出的事情"), src, f"{where}.角色不可以主动说出的事情"),
        story=text_of(role.get("人物剧本"), src, f"{where}.人物剧本").strip(),
        timeline=parse_timeline(text_of(role.get("案发日时间线"), src, f"{where}.案发日时间线")),
        extra=extra,
    )


def _texts(value: Any, src: Path, field: str) -> list[str]:
    return [t.strip() for t in text_list(value, src, field) if t.strip()]


def _clues(value: Any, src: Path) -> list[Clue]:
    clues = []
    for i, item in enumerate(expect(value, list, src, "线索"), 1):
        item = expect(item, dict, src, f"线索[{i - 1}]")
        content = text_of(item.get("content"), src, f"线索[{i - 1}].content").strip()
        if not content:
            raise fail(src, f"线索[{i - 1}].content", "missing: a clue needs its text")
        extra = {k: v for k, v in item.items() if k not in ("clue_type", "content")}
        clues.append(Clue(id=f"clue-{i}", text=content, extra=extra,
                          title=text_of(item.get("clue_type"), src, f"线索[{i - 1}].clue_type")))
    return clues
