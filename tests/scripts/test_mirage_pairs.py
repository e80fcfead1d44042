"""The English and Chinese versions of a MIRAGE script derive the same murderers (by the
order of the cast) and the same victims (by their place in the relationship lists): each
version is weighed with the other's evidence when it lies beside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jubensha.scripts.importers.mirage import import_mirage
from jubensha.scripts.importers.mirage_pairs import other_version, same_others
from jubensha.scripts.model import Script


def part(story: str, purpose: str, relation: str) -> dict[str, str]:
    return {"Story": story, "Script": story, "Relationship": relation, "Performance": "",
            "Purpose": purpose, "Ability": ""}


def write(root: Path, language: str, title: str, cast: dict, truth: str) -> Path:
    folder = root / language / title
    folder.mkdir(parents=True)
    files = ("script.json", "clues.json") if language == "En" else ("人物剧本.json", "线索.json")
    (folder / files[0]).write_text(json.dumps(cast, ensure_ascii=False), encoding="utf-8")
    (folder / files[1]).write_text('{"Hall": ["-"]}', encoding="utf-8")
    (root / language / "Truth.json").write_text(json.dumps({title: truth}, ensure_ascii=False),
                                                encoding="utf-8")
    return folder


def pair(root: Path) -> tuple[Path, Path]:
    """A script whose English texts only hint at the culprit (a translation that lost the
    plain sentence) while the Chinese ones say it."""
    english = write(root, "En", "The Fox Den", {
        "Ann": part("You keep the inn.", "Hide your past.", "Victor Hale: Deceased."),
        "Bob": part("You are a guest.", "Find the truth.", "Victor Hale: Deceased."),
        "Cid": part("You cook.", "Find the truth.", "Victor Hale: Deceased."),
    }, "Victor Hale died in the hall. Ann stood near the hall that night.")
    chinese = write(root, "Zh", "狐狸窝", {
        "安": part("你经营客栈。", "隐瞒你杀害了【韦克多】的事实。", "韦克多: 死者。"),
        "鲍勃": part("你是客人。", "找出真相。", "韦克多: 死者。"),
        "西德": part("你是厨师。", "找出真相。", "韦克多: 死者。"),
    }, "【韦克多】死在大厅。真正的凶手是【安】，她杀害了【韦克多】。")
    return english, chinese


def same_truth(english: Script, chinese: Script) -> None:
    """Murderers at the same places of the cast; as many victims, each at the same place
    of the relationship lists where the lists name it (a translated name has no other
    tie to its original)."""
    order_en = [c.name for c in english.characters]
    order_zh = [c.name for c in chinese.characters]
    assert [order_en.index(m) for m in english.murderers] == \
        [order_zh.index(m) for m in chinese.murderers], english.title
    mapping = same_others(english.characters, chinese.characters)
    assert len(english.victims) == len(chinese.victims), english.title
    chinese_victims = {v.name for v in chinese.victims}
    assert all(mapping[v.name] in chinese_victims
               for v in english.victims if v.name in mapping), english.title


def test_both_versions_derive_the_same_truth(tmp_path) -> None:
    english, chinese = pair(tmp_path)
    assert other_version(english) == chinese and other_version(chinese) == english
    en, zh = import_mirage(english), import_mirage(chinese)
    assert en.murderers == ["Ann"] and zh.murderers == ["安"]
    assert [v.name for v in en.victims] == ["Victor Hale"]
    same_truth(en, zh)
    assert any("the same script in the release's other language" in n
               for n in en.metadata.notes)
    evidence = next(d for d in en.metadata.derivations if d.fact == "murderers")
    assert any(e.source.startswith("Zh/狐狸窝: ") for c in evidence.candidates
               for e in c.evidence)


def test_a_version_alone_is_weighed_alone(tmp_path) -> None:
    english, _ = pair(tmp_path)
    assert import_mirage(english, other_language=False).murderers == []


def test_a_version_with_another_cast_is_not_pooled(tmp_path) -> None:
    english, chinese = pair(tmp_path)
    cast = json.loads((chinese / "人物剧本.json").read_text(encoding="utf-8"))
    cast["丁"] = cast["西德"]
    (chinese / "人物剧本.json").write_text(json.dumps(cast, ensure_ascii=False),
                                         encoding="utf-8")
    script = import_mirage(english)
    assert script.murderers == []
    assert any("has another cast" in n for n in script.metadata.notes)


def release_pairs(root: Path) -> list[tuple[Path, Path]]:
    english = sorted(p for p in (root / "En").iterdir() if (p / "script.json").is_file())
    return [(folder, other_version(folder)) for folder in english]


def test_every_pair_of_the_release_derives_the_same_truth(datasets: Path) -> None:
    pairs = release_pairs(datasets / "mirage")
    assert pairs and all(zh is not None for _, zh in pairs)
    for english, chinese in pairs:
        same_truth(import_mirage(english), import_mirage(chinese))


@pytest.mark.parametrize("title", ["Artical 22 School Rules", "Raging Sea of Rest Life"])
def test_the_release_pairs_are_found_by_title_or_place(datasets: Path, title) -> None:
    found = other_version(datasets / "mirage" / "En" / title)
    assert found is not None and found.parent.name == "Zh"
