"""A script that records no solution (an imported Conan story names no murderer) is still
played, but says so at the reveal instead of "the murderer was: (not caught)", has no
winner, and nothing that needs a solution is scored: identification, the culprit's rank,
re-votes, MIRAGE's trust by side; a batch report leaves it out of the win rate."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.runs.batch import Batch
from jubensha.runs.report import build_report
from jubensha.runs.spec import load_spec

TINY = Path(__file__).parents[1] / "engine" / "tiny_script.yaml"
runner = CliRunner()


@pytest.fixture
def unsolved(tmp_path: Path) -> Path:
    """The tiny manor as an importer writes a story with no answer: no truth, no sides."""
    data = yaml.safe_load(TINY.read_text(encoding="utf-8"))
    data.pop("truth", None)
    data["id"] = "tiny-unsolved"
    data.setdefault("metadata", {})["has_truth"] = False
    for character in data["characters"]:
        character.update(side="civilian", killed=[])
    path = tmp_path / "unsolved.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def test_the_reveal_says_the_script_records_no_solution(unsolved: Path, tmp_path: Path) -> None:
    played = runner.invoke(app, ["play", str(unsolved), "--model", "scripted",
                                 "--embedder", "none", "--out", str(tmp_path / "run")])
    assert played.exit_code == 0, played.output
    assert "This script records no solution: nobody is caught and nobody wins." in played.output
    assert "(not caught)" not in played.output and "Winner" not in played.output
    result = json.loads((tmp_path / "run" / "result.json").read_text(encoding="utf-8"))
    assert result["solution"] is False and result["winner"] == "none"
    assert result["votes"], "the table still votes"


@pytest.mark.parametrize("metric", ["identification", "culprit-rank", "revote"])
def test_nothing_that_needs_a_solution_is_scored(unsolved: Path, tmp_path: Path,
                                                 metric: str) -> None:
    run = tmp_path / "run"
    runner.invoke(app, ["play", str(unsolved), "--model", "scripted", "--embedder", "none",
                        "--out", str(run)])
    scored = runner.invoke(app, ["eval", metric, str(run), "--script", str(unsolved)])
    assert scored.exit_code == 4
    assert scored.output.strip().endswith(
        f"{metric}: no score: the script records no solution (no murderer): nothing to "
        "score against")
    assert not (run / "eval" / f"{metric}.json").exists()


def test_a_batch_leaves_such_games_out_of_the_rates(unsolved: Path, tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"scripts: [{unsolved}, {TINY}]\narchitectures: [naive]\n"
                    "models: [scripted]\nembedder: none\n", encoding="utf-8")
    batch = Batch.open(load_spec(spec), tmp_path / "batch")
    try:
        asyncio.run(batch.run())
        rows = batch.index.rows()
    finally:
        batch.close()
    by_script = {row.script: row for row in rows}
    assert by_script["tiny-unsolved"].status == "finished"
    assert by_script["tiny-unsolved"].votes_counted is None
    [group] = build_report(rows).groups
    assert group.finished == 2
    assert group.civilian_wins is not None and group.identification is not None
    assert group.civilian_wins.n == 1  # the solved game only
    assert group.identification.n == 1  # the solved game's share of its ballots
    manor = by_script["tiny-manor"]
    assert group.identification.mean == (manor.votes_on_murderer or 0) / (manor.votes_counted or 1)
