"""A batch spec can play the mysteries of an exported set (`exported: FOLDER`): the very
scripts its questions ask about, generated ones rebuilt from their seeds and others read
from their files; a set whose mysteries are no longer the ones exported is an error that
says to export again, never a different benchmark."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from jubensha.runlog.folder import read_run
from jubensha.runs.batch import Batch
from jubensha.runs.spec import load_spec
from jubensha.runs.spec_expand import expand
from jubensha.runs.spec_schema import SpecError
from jubensha.scripts import find_script
from jubensha.scripts.export.model import MANIFEST
from jubensha.scripts.export.write import read_manifest, write_set
from jubensha.scripts.generate import Request, generate


@pytest.fixture
def exported(tmp_path: Path) -> Path:
    folder = tmp_path / "set"
    folder.mkdir()
    scripts = [(s, None) for s in generate(Request(seed=5, players=4, level="easy"),
                                           ("en", "zh"))]
    write_set(folder, [*scripts, (find_script("lighthouse-keeper"), "lighthouse-keeper")])
    return folder


def spec(tmp_path: Path, folder: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(f"scripts:\n- exported: {folder}\narchitectures: [naive]\n"
                    "models: scripted\nembedder: none\n", encoding="utf-8")
    return path


def test_an_exported_set_plays_as_games_of_its_own_mysteries(
        tmp_path: Path, exported: Path) -> None:
    games = expand(load_spec(spec(tmp_path, "set")))  # relative to the spec's folder
    ids = [o.id for o in read_manifest(exported).scripts]
    assert [g.settings.script_id for g in games] == ids == [
        "gen-easy-4p1a-s5-en", "gen-easy-4p1a-s5-zh", "lighthouse-keeper"]
    assert games[0].settings.script == "exported:gen-easy-4p1a-s5-en"
    assert games[0].script == generate(Request(seed=5, players=4, level="easy"))[0]
    batch = Batch.open(load_spec(spec(tmp_path, "set")), tmp_path / "batch")
    try:
        summary = asyncio.run(batch.run())
    finally:
        batch.close()
    assert (summary.games, summary.finished, summary.failed) == (3, 3, 0)
    for game in batch.games:
        run = read_run(tmp_path / "batch" / game.name)
        assert run.finished and run.meta is not None and run.meta.script_id == game.script.id


def test_a_set_whose_mystery_changed_says_to_export_again(
        tmp_path: Path, exported: Path) -> None:
    manifest = json.loads((exported / MANIFEST).read_text(encoding="utf-8"))
    manifest["scripts"][1]["fingerprint"] = "0" * 64
    (exported / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        expand(load_spec(spec(tmp_path, str(exported))))
    message = str(caught.value)
    assert "scripts.0" in message and "gen-easy-4p1a-s5-zh is no longer the script" in message
    assert "export the set again" in message


def test_a_folder_without_a_manifest_is_named(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(SpecError) as caught:
        expand(load_spec(spec(tmp_path, "empty")))
    assert f"{MANIFEST}" in str(caught.value) and "scripts.0" in str(caught.value)
