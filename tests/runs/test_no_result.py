"""A game nobody really played is no result: it is failed (exit 4, a failed game in a
batch, never in a report's rates) when a decisive round — a vote, the accusations that
choose MIRAGE's suspects — fell back for most of the seats asked, or when half or more of
all its decisions fell back. The same rule for every number of players.

The case that shows it: an OpenAI-compatible endpoint answering every structured request
with JSON of the wrong shape and every speech with "banana banana banana". Speeches are
valid, so exactly half of the decisions fall back, and every ballot is the table's."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.engine.game import no_result
from jubensha.engine.table import TableState
from jubensha.runs.attempt import read_error
from jubensha.runs.batch import Batch
from jubensha.runs.report import build_report
from jubensha.runs.spec import load_spec
from tests.llm.fake_server import FakeOpenAIServer, Reply, completion

runner = CliRunner()

# (architecture, procedure): each architecture in the game its paper plays.
GAMES = [("naive", "demo"), ("player", "player"), ("thinkthrice", "thinkthrice")]
SCRIPTS = {"lighthouse-keeper": 4, "halvard-observatory": 6}


def wrong_shape(body: dict) -> Reply:
    """Valid JSON of the wrong shape to structured requests; banana to speech."""
    return completion('{"zzz": 1}' if body.get("response_format") else "banana banana banana")


@pytest.fixture
def endpoint(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAIServer(respond=wrong_shape) as server:
        yield server


@pytest.mark.parametrize(("architecture", "procedure"), GAMES)
@pytest.mark.parametrize("script", list(SCRIPTS))
def test_a_game_against_a_wrong_shape_endpoint_is_failed_whatever_the_table_size(
        endpoint: FakeOpenAIServer, tmp_path: Path, architecture: str, procedure: str,
        script: str) -> None:
    out = tmp_path / "run"
    played = runner.invoke(app, [
        "play", script, "-a", architecture, "-p", procedure, "--model", "openai:fake",
        "--base-url", endpoint.base_url, "--retries", "0", "--embedder", "none",
        "--out", str(out)])
    assert played.exit_code == 4, played.output
    assert "failed: " in played.output and "no result" in played.output
    assert "Winner" not in played.output
    result = json.loads((out / "result.json").read_text(encoding="utf-8"))
    seats = SCRIPTS[script]
    assert result["degraded"] is True
    assert result["winner"] == "none"  # no result, so nobody won
    assert result["no_result"].endswith(f"fell back to the table's default for {seats} of "
                                        f"{seats} seats")
    assert all(target is None for vote in result["votes"] for target in vote["ballots"].values())
    assert 0 < result["fallbacks"] <= result["decisions"]


def test_a_batch_counts_such_games_as_failed_and_keeps_them_out_of_the_rates(
        endpoint: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / "settings.yaml").write_text(
        f"endpoints: {{'{endpoint.base_url}': {{}}}}\n", encoding="utf-8")
    monkeypatch.setenv("JUBENSHA_CONFIG", str(config))
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        f"scripts: [{', '.join(SCRIPTS)}]\narchitectures: [naive]\nmodels: ['openai:fake']\n"
        f"embedder: none\nendpoints:\n  'openai:fake': {{base_url: '{endpoint.base_url}'}}\n",
        encoding="utf-8")
    batch = Batch.open(load_spec(spec), tmp_path / "batch")
    try:
        summary = asyncio.run(batch.run())
        rows = batch.index.rows()
    finally:
        batch.close()
    assert (summary.finished, summary.failed) == (0, 2)
    for row in rows:
        error = read_error(tmp_path / "batch" / row.name)
        assert error is not None and error.kind == "degraded"
        assert "fell back to the table's default for" in error.message
    report = build_report(rows)
    [group] = report.groups
    assert (group.games, group.finished, group.failed) == (2, 0, 2)
    assert group.civilian_wins is None and group.identification is None  # no finished game


# -- the rule ------------------------------------------------------------------------------
def state(decisions: int, fallbacks: int, **rounds: dict[str, bool]) -> TableState:
    table = TableState(decisions=decisions, fallbacks=fallbacks)
    table.decisive = {label.replace("_", " "): seats for label, seats in rounds.items()}
    return table


@pytest.mark.parametrize("players", [3, 4, 5, 6, 8])
def test_a_vote_defaulted_for_most_seats_fails_the_game_at_every_table_size(
        players: int) -> None:
    most = players // 2 + 1
    ballots = {f"seat{i}": i < most for i in range(players)}
    assert no_result(state(100, most, the_vote=ballots)).startswith(
        f"the vote fell back to the table's default for {most} of {players} seats")
    half = {f"seat{i}": i < players // 2 for i in range(players)}
    assert no_result(state(100, players // 2, the_vote=half)) == ""


def test_half_of_all_decisions_falling_back_fails_the_game() -> None:
    assert no_result(state(16, 8)) == ("8 of 16 decisions fell back to the table's "
                                       "defaults (50% or more)")
    assert no_result(state(16, 7)) == ""
    assert no_result(state(16, 4), 0.25).startswith("4 of 16 decisions")


def test_every_vote_of_a_game_counts_on_its_own() -> None:
    first = {"Ann": False, "Bob": False, "Cara": False, "Dan": False}
    second = {"Ann": True, "Bob": True, "Cara": True, "Dan": False}
    reason = no_result(state(40, 3, the_vote_on_Vale=first, the_vote_on_Quill=second))
    assert reason.startswith("the vote on Quill fell back") and "3 of 4 seats" in reason
