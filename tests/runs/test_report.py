"""Batch reports: Wilson intervals, the numbers of a batch whose outcome is known by hand,
the Markdown, CSV and JSON forms, and the plots."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.agents.naive import NaiveAgent
from jubensha.agents.registry import register_architecture
from jubensha.cli import app
from jubensha.engine.decisions import Action, CastVote, Decision, Vote
from jubensha.runs.batch import Batch
from jubensha.runs.index import GameRow, Spend
from jubensha.runs.report import build_report, render, wilson
from jubensha.runs.spec import load_spec
from jubensha.runs.statistics import Estimate

TINY = str(Path(__file__).parents[1] / "engine" / "tiny_script.yaml")


class Accuser(NaiveAgent):
    """Plays naive but always votes for one named seat: a batch with a known outcome."""

    architecture = "accuser"

    def __init__(self, target: str) -> None:
        super().__init__()
        self.target = target

    async def decide(self, decision: Decision) -> Action:
        if isinstance(decision, CastVote):
            return Vote(target=self.target)
        return await super().decide(decision)


register_architecture("accuser", Accuser)


@pytest.mark.parametrize(("k", "n", "low", "high"), [
    (3, 4, 0.3006, 0.9544),   # Wilson's interval, computed by hand with z = 1.96
    (0, 8, 0.0, 0.3244),
    (8, 8, 0.6756, 1.0),
    (2, 2, 0.3424, 1.0),
    (5, 10, 0.2366, 0.7634),
])
def test_wilson_intervals(k: int, n: int, low: float, high: float) -> None:
    interval = wilson(k, n)
    assert interval.rate == pytest.approx(k / n)
    assert (interval.low, interval.high) == (pytest.approx(low, abs=1e-4),
                                            pytest.approx(high, abs=1e-4))


def test_no_trials_have_no_rate_and_impossible_counts_are_refused() -> None:
    assert wilson(0, 0).rate is None and wilson(0, 0).render() == "– (0/0)"
    with pytest.raises(ValueError, match="0 <= k <= n"):
        wilson(3, 2)


@pytest.fixture(scope="module")
def known_batch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tiny manor (Ann killed Lord Vale), 4 seats, 2 seeds: `accuser:Ann` tables always
    catch Ann (3 of 3 ballots: the demo procedure refuses Ann's vote for herself),
    `accuser:Bob` tables never do (0 of 3)."""
    folder = tmp_path_factory.mktemp("known")
    spec = folder / "spec.yaml"
    spec.write_text(f"scripts: [{TINY}]\narchitectures: ['accuser:Ann', 'accuser:Bob']\n"
                    "models: scripted\nseeds: [0, 1]\nembedder: none\n"
                    "metrics: [culprit-rank, mirage-trust]\n", encoding="utf-8")
    batch = Batch.open(load_spec(spec), folder / "batch")
    try:
        summary = asyncio.run(batch.run())
    finally:
        batch.close()
    assert summary.finished == 4
    return folder / "batch"


def test_the_report_of_a_batch_with_a_known_outcome(known_batch: Path) -> None:
    result = CliRunner().invoke(app, ["runs", "report", str(known_batch), "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    ann, bob = report["groups"]
    assert (ann["architecture"], ann["model"], ann["games"], ann["finished"]) == (
        "accuser:Ann", "scripted", 2, 2)
    assert (ann["civilian_wins"]["k"], ann["civilian_wins"]["n"]) == (2, 2)
    assert ann["civilian_wins"]["low"] == pytest.approx(0.3424, abs=1e-4)
    assert (ann["identification"]["k"], ann["identification"]["n"]) == (6, 6)
    assert ann["identification"]["low"] == pytest.approx(0.6097, abs=1e-4)
    assert (bob["civilian_wins"]["k"], bob["identification"]["k"],
            bob["identification"]["n"]) == (0, 0, 6)
    assert bob["identification"]["high"] == pytest.approx(0.3903, abs=1e-4)
    assert ann["metrics"]["culprit-rank"]["reciprocal_rank"] == {
        "mean": 1.0, "n": 2, "low": 1.0, "high": 1.0}
    assert bob["metrics"]["culprit-rank"]["reciprocal_rank"]["mean"] == pytest.approx(0.5)
    assert "mirage-trust" not in ann["metrics"]  # skipped: the demo procedure rates no trust
    assert ann["calls_per_game"] > 0 and ann["cost_usd"] is None and ann["failed"] == 0


def test_markdown_and_csv_forms(known_batch: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    md = runner.invoke(app, ["runs", "report", str(known_batch), "--format", "md",
                             "--out", str(tmp_path / "report.md")])
    assert md.exit_code == 0, md.output
    assert "| accuser:Ann | scripted | 2 | 2 | 0 | 1.000 (2/2) [0.342, 1.000] |" in md.output
    assert ("| accuser:Bob | scripted | culprit-rank | reciprocal_rank | 0.500 [0.500, 0.500] "
            "| 2 |") in md.output
    assert (tmp_path / "report.md").read_text(encoding="utf-8") == md.output
    table = runner.invoke(app, ["runs", "report", str(known_batch), "--format", "csv"])
    warning, _, body = table.output.partition("\n")
    assert warning.startswith("# warning:") and "scripted fake" in warning
    rows = list(csv.DictReader(io.StringIO(body)))
    assert [(r["architecture"], r["win_k"], r["win_n"], r["ident_k"], r["ident_n"])
            for r in rows] == [("accuser:Ann", "2", "2", "6", "6"),
                               ("accuser:Bob", "0", "2", "0", "6")]
    assert float(rows[1]["culprit-rank.reciprocal_rank"]) == 0.5
    assert float(rows[1]["culprit-rank.reciprocal_rank.ci_low"]) == 0.5
    assert float(rows[1]["culprit-rank.reciprocal_rank.ci_high"]) == 0.5


def test_by_script_rows_and_plots(known_batch: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["runs", "report", str(known_batch), "--by-script",
                                      "--format", "csv", "--plots", str(tmp_path / "plots")])
    assert result.exit_code == 0, result.output
    assert "architecture,model,script,games" in result.output
    assert "accuser:Ann,scripted,tiny-manor,2" in result.output
    for name in ("rates.png", "tokens.png"):
        data = (tmp_path / "plots" / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def row(position: int, architecture: str, status: str, winner: str | None = None,
        votes: tuple[int, int] = (0, 0), tokens: int = 0, cost: float | None = None) -> GameRow:
    return GameRow(id=str(position), position=position, name=f"g{position}", script="s",
                   procedure="demo", architecture=architecture, model="m", seed=position,
                   settings={}, status=status, attempts=1, winner=winner,  # type: ignore[arg-type]
                   votes_on_murderer=votes[0], votes_counted=votes[1], duration_s=2.0,
                   usage=Spend(calls=3, prompt_tokens=tokens, cost_usd=cost),
                   spent=Spend(calls=3, prompt_tokens=tokens, cost_usd=cost),
                   error="ModelError: boom" if status == "failed" else None, fallbacks=1)


def test_failed_and_unfinished_games_count_apart_from_the_rates() -> None:
    rows = [row(0, "a", "finished", "civilians", (3, 4), 100, 0.01),
            row(1, "a", "finished", "murderers", (1, 4), 300, 0.03),
            row(2, "a", "failed", cost=0.005),
            row(3, "a", "pending"),
            row(4, "b", "finished", "civilians", (4, 4), 50)]
    rows[0].metrics = {"similarity": {"tfidf": 0.2}, "mirage-trust": {"skipped": "no ratings"}}
    rows[1].metrics = {"similarity": {"error": "ValueError: empty"}}
    report = build_report(rows)
    a, b = report.groups
    assert (a.games, a.finished, a.failed, a.unfinished) == (4, 2, 1, 1)
    assert (a.civilian_wins.k, a.civilian_wins.n) == (1, 2)
    assert (a.identification.k, a.identification.n) == (4, 8)
    assert a.tokens_per_game == 200 and a.calls_per_game == 3 and a.fallbacks_per_game == 1
    assert a.cost_usd == pytest.approx(0.04) and a.spent_cost_usd == pytest.approx(0.045)
    assert b.cost_usd is None and b.mean_duration_s == 2.0
    assert a.metrics == {"similarity": {"tfidf": Estimate(mean=0.2, n=1)}} and a.metric_errors == 1
    assert [f.name for f in report.failed] == ["g2"]
    assert "| g2 | 1 | ModelError: boom |" in render(report, "md")


def test_report_of_a_folder_that_is_not_a_batch(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["runs", "report", str(tmp_path)])
    assert result.exit_code == 2 and "not a batch folder" in result.output


def test_runs_batch_the_report_and_the_page_title_a_batch_alike(tmp_path: Path) -> None:
    """The spec's name is only the folder's default: every report names the folder."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"name: tea-party\nscripts: [{TINY}]\narchitectures: [naive]\n"
                    "models: scripted\nseeds: [0]\nembedder: none\n", encoding="utf-8")
    runner = CliRunner()
    played = runner.invoke(app, ["runs", "batch", str(spec), "--out", str(tmp_path / "b1")])
    assert played.exit_code == 0, played.output
    reported = runner.invoke(app, ["runs", "report", str(tmp_path / "b1"), "--html",
                                   str(tmp_path / "page.html")])
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    for shown in (played.output, reported.output, page):
        assert "Batch b1" in shown and "tea-party" not in shown
