"""The bundled mysteries' index: `scripts list` and `scripts validate` read it instead of
loading every script, and trust an entry only while its digest is that of the files there
now; the shipped index is the one the current scripts and rules give."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.scripts import bundled_index
from jubensha.scripts.bundled_index import INDEX_FILE, Entry, fresh_entries, index_text

SHIPPED = bundled_index.bundled_dir()


def test_the_shipped_index_is_what_the_scripts_and_rules_give_now() -> None:
    assert (SHIPPED / INDEX_FILE).read_text(encoding="utf-8") == index_text(), (
        "the bundled index is stale: python -m jubensha.scripts.bundled_index")
    assert all(entry is not None for entry in fresh_entries().values())


@pytest.fixture
def copied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The bundled folder copied, index included, and taken for the bundled one."""
    root = tmp_path / "bundled"
    shutil.copytree(SHIPPED, root)
    monkeypatch.setattr(bundled_index, "bundled_dir", lambda: root)
    return root


def _edit(file: Path, old: str, new: str) -> None:
    text = file.read_text(encoding="utf-8")
    assert old in text
    file.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_script_changed_since_the_index_is_read_again(copied: Path) -> None:
    _edit(copied / "lighthouse-keeper" / "script.yaml", "The Last Light on Gull Rock",
          "A Light Changed Since")
    assert fresh_entries()["lighthouse-keeper"] is None
    assert fresh_entries()["tingsong-tea-estate"] is not None
    shown = CliRunner().invoke(app, ["scripts", "list"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0 and "A Light Changed Since" in shown.output
    assert "The Last Light on Gull Rock" not in shown.output


def test_validate_checks_a_changed_script_whatever_the_index_says(copied: Path) -> None:
    _edit(copied / "lighthouse-keeper" / "script.yaml", "language: en", "language: fr")
    found = CliRunner().invoke(app, ["scripts", "validate"])
    assert found.exit_code == 1
    assert str(copied / "lighthouse-keeper" / "script.yaml") + ": language:" in found.output
    assert "3 script(s): 1 error(s)" in found.output


def test_validate_prints_the_problems_the_index_holds(copied: Path) -> None:
    index = copied / INDEX_FILE
    _edit(index, '"problems": []', '"problems": [["warning", "clues: one is odd"]]')
    found = CliRunner().invoke(app, ["scripts", "validate", "halvard-observatory"])
    assert found.exit_code == 0
    assert found.output.splitlines() == [
        f"{copied / 'halvard-observatory' / 'script.yaml'}: clues: one is odd",
        "1 script(s): 0 error(s), 1 warning(s)"]


@pytest.mark.parametrize("text", ["", "[]", '{"x": {"title": 1}}', "{not json",
                                  ('{"x": {"title": "t", "language": "en", "players": 2, '
                                   '"digest": "d", "problems": [["fatal", "x"]]}}')])
def test_an_unreadable_index_is_no_index(copied: Path, text: str) -> None:
    (copied / INDEX_FILE).write_text(text, encoding="utf-8")
    assert set(fresh_entries().values()) == {None}
    shown = CliRunner().invoke(app, ["scripts", "list"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0 and "The Last Light on Gull Rock" in shown.output


def test_an_entry_is_read_whole_or_not_at_all() -> None:
    entry = Entry.read({"title": "t", "language": "en", "players": 2, "digest": "d",
                        "problems": [["error", "id: empty"]]})
    assert entry.problems == (("error", "id: empty"),)
    for wrong in ({"title": "t"}, {"title": "t", "language": "en", "players": True,
                                   "digest": "d", "problems": []}, ["t"]):
        with pytest.raises((ValueError, TypeError)):
            Entry.read(wrong)
