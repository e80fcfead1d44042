"""Every script of every public dataset imports, survives the native YAML round trip and
validates without errors (warnings are allowed: real data has loose ends)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from jubensha.scripts import load_script, save_script, validate
from jubensha.scripts.importers import IMPORTERS, copy_assets

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
EXPECTED = {"wellplay": 18, "conan": 114, "whodunitbench": 13, "mirage": 12}


@pytest.mark.parametrize("fmt", EXPECTED)
def test_every_dataset_script_round_trips_and_validates(datasets: Path, tmp_path: Path,
                                                       fmt: str) -> None:
    importer = IMPORTERS[fmt]
    sources = importer.discover(datasets / fmt)
    assert len(sources) == EXPECTED[fmt]
    start = time.perf_counter()
    ids = []
    for source in sources:
        script = importer.load(source)
        assert script.metadata.source == fmt and script.metadata.source_path
        assert script.metadata.player_count == len(script.characters)
        assert " " not in script.id and "/" not in script.id
        saved = save_script(script, tmp_path / script.id)
        copy_assets(script, source, saved.parent)  # image files travel with the script
        again = load_script(saved)
        assert again == script, script.id
        errors = validate(again).errors
        assert not errors, f"{script.id}: {[e.render() for e in errors]}"
        ids.append(script.id)
    assert len(set(ids)) == len(ids)
    assert time.perf_counter() - start < 60


def test_the_thinkthrice_fixture_round_trips(tmp_path: Path) -> None:
    importer = IMPORTERS["thinkthrice"]
    [source] = importer.discover(FIXTURES / "thinkthrice")
    script = importer.load(source)
    assert load_script(save_script(script, tmp_path / "x")) == script
