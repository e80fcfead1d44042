"""The twelve WellPlay scripts in both languages: held pairs, derived pairs, log folders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jubensha.eval.playerlog_titles import derive_pairs, find_title, folder_number
from jubensha.eval.playerlogs import paper_tables


def _script(root: Path, folder: str, title: str, names: list[str], rows: list[str]) -> None:
    """A two-character WellPlay folder whose first character answers ``rows``
    (``value,type,truth`` with the question text left to the language)."""
    base = root / folder
    (base / "json").mkdir(parents=True)
    (base / "final_result").mkdir()
    (base / "json" / "script_info.json").write_text(json.dumps(
        {"script_name": title, "character_name": names}), encoding="utf-8")
    for i, name in enumerate(names):
        (base / "json" / f"{name}.json").write_text(json.dumps(
            {"script": [f"{name}'s story"], "victims": ["V"], "kill_by_me": [i],
             "is_murderer": i}), encoding="utf-8")
    lines = ["value,type,question,a,b,c,d,e,truth"]
    lines += [f"{v},{t},{name}? {n},x,y,z,,,{truth}"
              for n, (v, t, truth) in enumerate(r.split(",") for r in rows)
              for name in names[:1]]
    (base / "final_result" / f"{names[0]}.csv").write_text("\n".join(lines) + "\n",
                                                           encoding="utf-8")


def test_a_translation_pairs_by_its_questions_and_a_lookalike_does_not(tmp_path: Path) -> None:
    """Same characters in the same order asked the same kinds of questions with the same
    answer letters: a pair, whatever the titles; one answer letter off in five: none."""
    questions = ["a,a,a", "b,a,c", "b,b,ab", "c,a,b", "c,a,c"]
    _script(tmp_path / "english", "Far Island (2 people)", "Far Island", ["Ann", "Bob"], questions)
    _script(tmp_path / "chinese", "远岛（2人）", "远岛", ["安", "鲍"], questions)
    _script(tmp_path / "english", "Near Island (2 people)", "Near Island",
            ["Cy", "Di"],
            [*questions[:4], "c,a,a"])
    assert derive_pairs(tmp_path) == [("Far Island", "远岛")]


@pytest.mark.datasets
def test_pairs_derived_from_the_dataset_are_the_held_ones(datasets: Path) -> None:
    derived = derive_pairs(datasets / "wellplay")
    held = {(s.en, s.zh) for s in paper_tables().scripts}
    assert len(derived) == 9 and set(derived) <= held
    assert ("Oriental Star Cruise Incident", "东方之星号游轮事件") in derived


def test_every_script_of_the_papers_tables_is_held_in_both_languages() -> None:
    tables = paper_tables()
    scripts = {s.paper: s for s in tables.scripts}
    assert len(scripts) == 12 and len({s.number for s in tables.scripts}) == 12
    for table in tables.tables.values():
        assert set(table) - {"Overall"} <= set(scripts)
    assert set(tables.tables["zh"]) - {"Overall"} == set(scripts)


@pytest.mark.parametrize(("title", "folder", "paper"), [
    ("未完结的爱", "053-未完结的爱（7人开放）", "Unfinished Love"),
    ("曼娜", "1849-曼娜（6人）", "Manna"),
    ("江湖客栈", "191-江湖客栈（4人封闭）", "Riverside Inn"),
    ("renamed", "131-renamed", "Sin"),                      # the number decides
    ("Oriental Star Cruise Incident", "Oriental Star Cruise Incident (open to 5 people)",
     "Cruise Incident"),
    ("Manna", "Manna (6 people)", "Manna"),
])
def test_log_folders_find_their_script(title: str, folder: str, paper: str) -> None:
    found = find_title(paper_tables().scripts, title, folder)
    assert found is not None and found.paper == paper


def test_an_unknown_script_is_not_guessed() -> None:
    assert find_title(paper_tables().scripts, "奕剑决", "002-奕剑决（8人开放）") is None
    assert folder_number("Sin (4 people closed)") is None
