"""The small things that cost a newcomer time: every preset is listed where the options
are, no metric scores a game that never voted, tables are never cut at 80 columns, and the
docs cite nothing the repository lacks."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.engine.procedure import presets

ROOT = Path(__file__).parents[1]
TINY = str(ROOT / "tests" / "engine" / "tiny_script.yaml")
runner = CliRunner()


def test_play_help_and_the_docs_list_every_preset() -> None:
    shown = runner.invoke(app, ["play", "--help"], env={"COLUMNS": "300"}).output
    docs = (ROOT / "docs" / "playing.md").read_text(encoding="utf-8")
    for name in presets():
        assert name in shown.split("--procedure")[1].split("--agents")[0], name
        assert f"`{name}`" in docs, name
    assert not re.search(r"\w \.\s", shown), "a help text lost its [default: …] to markup"


def test_the_docs_cite_only_what_the_repository_holds() -> None:
    pages = [*(ROOT / "docs").rglob("*.md"), ROOT / "README.md",
             *(ROOT / "src").rglob("*.py"), *(ROOT / "tests").rglob("*.py")]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        if not (ROOT / "DESIGN.md").exists() and page != Path(__file__):
            assert "DESIGN.md" not in text, page
    assert "about 45 seconds" not in (ROOT / "docs" / "playing.md").read_text(encoding="utf-8")


def test_identification_of_a_game_that_never_voted_has_no_score(tmp_path: Path) -> None:
    cassette = tmp_path / "empty.jsonl"
    cassette.write_text("", encoding="utf-8")
    run = tmp_path / "run"
    stopped = runner.invoke(app, ["play", TINY, "--model", f"replay:{cassette}",
                                  "--embedder", "none", "--out", str(run)])
    assert stopped.exit_code == 3
    result = runner.invoke(app, ["eval", "identification", str(run)])
    assert result.exit_code == 4 and isinstance(result.exception, SystemExit)
    assert "identification: no score: no vote was cast" in result.output
    assert "0.000" not in result.output and not (run / "eval" / "identification.json").exists()


def test_report_tables_are_whole_when_not_on_a_terminal(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"scripts: [{TINY}]\narchitectures: [naive]\nmodels: scripted\n"
                    "seeds: [0]\nembedder: none\n", encoding="utf-8")
    assert runner.invoke(app, ["runs", "batch", str(spec), "--out",
                               str(tmp_path / "b")]).exit_code == 0
    report = runner.invoke(app, ["runs", "report", str(tmp_path / "b")]).output
    for column in ("civilian_wins", "identification", "failures_per_game", "tokens_per_game",
                   "mean_duration_s"):
        assert column in report, column
    assert "…" not in report


def test_the_speech_guard_keeps_a_model_free_seat_model_free() -> None:
    """A batch crosses a model-free architecture with one model only; the guard around it
    must say so too."""
    from jubensha.agents.registry import model_free

    assert model_free("extractive") and model_free("extractive:guard")
    assert not model_free("naive") and not model_free("naive:guard")
