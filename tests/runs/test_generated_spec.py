"""A batch spec can name generated mysteries (`generated: {difficulty, count, seed}`):
they expand into games like any script, with the same ids every time the spec is read
(a resumed batch finds its games), and a wrong entry is one `FILE: FIELD: problem` line."""

from __future__ import annotations

from pathlib import Path

import pytest

from jubensha.runs.spec import load_spec
from jubensha.runs.spec_expand import expand
from jubensha.runs.spec_schema import SpecError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_generated_mysteries_expand_into_games_with_stable_ids(tmp_path: Path) -> None:
    text = """
scripts:
- generated: {difficulty: hard, count: 2, seed: 7}
- generated: {difficulty: easy, count: 1, seed: 3, lang: both, players: 4, acts: 2}
architectures: [extractive]
models: scripted
"""
    games = expand(load_spec(write(tmp_path, text)))
    assert [g.settings.script_id for g in games] == [
        "gen-hard-5p1a-s7-en", "gen-hard-5p1a-s8-en", "gen-easy-4p2a-s3-en",
        "gen-easy-4p2a-s3-zh"]
    assert games[0].settings.script == "generated:gen-hard-5p1a-s7-en"
    assert games[3].settings.language == "zh" and len(games[3].script.characters) == 4
    assert games[0].script.truth is not None and games[0].script.truth.proof is not None
    assert games[0].settings.murderers == games[0].script.murderers
    assert [g.id for g in expand(load_spec(write(tmp_path, text)))] == [g.id for g in games]


@pytest.mark.parametrize(("entry", "problem"), [
    ("{generated: {difficulty: brutal}}", "scripts.0.generated.difficulty"),
    ("{generated: {count: 0}}", "scripts.0.generated.count"),
    ("{generated: {players: 11}}", "scripts.0.generated.players"),
    ("{generated: {seed: 1, colour: red}}", "scripts.0.generated.colour"),
    ("{generated: {count: 1}, format: wellplay}", "remove format"),
    ("{generated: {count: 1}, path: lighthouse-keeper}",
     "give one of path, dataset, generated or exported"),
])
def test_a_wrong_generated_entry_is_named(tmp_path: Path, entry: str, problem: str) -> None:
    with pytest.raises(SpecError) as caught:
        load_spec(write(tmp_path, f"scripts: [{entry}]\nmodels: scripted\n"))
    assert problem in str(caught.value)
    assert all(line.startswith(str(tmp_path)) for line in str(caught.value).splitlines())
