"""Batch reports: the numbers of a batch whose outcome is known by hand, one definition of
each rate, the Markdown, CSV and JSON forms with the same key names, metrics per way of
scoring with their failure share, counts never averaged, and the plots."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.runs.batch import Batch
from jubensha.runs.index import GameRow, Spend
from jubensha.runs.report import BatchReport, build_report, render
from jubensha.runs.spec import load_spec
from jubensha.runs.statistics import Estimate
from tests.runs.accuser import accuser_registered

TINY = str(Path(__file__).parents[1] / "engine" / "tiny_script.yaml")


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
    with accuser_registered():
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
    # one script: the Wilson score interval of 2 wins in 2 games
    assert ann["civilian_wins"] == {"mean": 1.0, "n": 2, "clusters": 1,
                                    "ci_low": pytest.approx(0.3424, abs=1e-4),
                                    "ci_high": 1.0, "method": "Wilson score", "why": ""}
    # identification: each game's share of ballots on a culprit (3 of 3), averaged
    assert (ann["identification"]["mean"], ann["identification"]["n"]) == (1.0, 2)
    assert (bob["civilian_wins"]["mean"], bob["identification"]["mean"]) == (0.0, 0.0)
    # a share per game is no trial, whatever its values: two games are too few
    assert bob["identification"]["method"] == "too few"
    rank = ann["metrics"]["culprit-rank"]
    assert (rank["scoring"], rank["games"], rank["failed"]) == ("judge none", 2, 0)
    assert rank["values"]["reciprocal_rank"] == {
        "mean": 1.0, "n": 2, "clusters": 1, "ci_low": None, "ci_high": None,
        "method": "too few", "why": "2 games, a bootstrap needs 10"}
    assert bob["metrics"]["culprit-rank"]["values"]["reciprocal_rank"]["mean"] == \
        pytest.approx(0.5)
    assert "mirage-trust" not in ann["metrics"]  # skipped: the demo procedure rates no trust
    assert ann["calls_per_game"] > 0 and ann["cost_usd"] is None and ann["failed"] == 0


def test_markdown_and_csv_forms_name_their_numbers_as_the_json_does(known_batch: Path,
                                                                    tmp_path: Path) -> None:
    runner = CliRunner()
    md = runner.invoke(app, ["runs", "report", str(known_batch), "--format", "md",
                             "--out", str(tmp_path / "report.md")])
    assert md.exit_code == 0, md.output
    assert "| accuser:Ann | scripted | 2 | 2 | 0 | 1.000 (2/2) [0.342, 1.000] |" in md.output
    assert ("| accuser:Bob | scripted | culprit-rank | judge none | reciprocal_rank | 0.500 "
            "(n=2; no interval: 2 games, a bootstrap needs 10) | 2 | too few | 0/2 | 2/8 |"
            ) in md.output
    # the headers are the JSON's keys
    header = next(line for line in md.output.splitlines() if line.startswith("| architecture"))
    assert header == ("| architecture | model | games | finished | failed | civilian_wins | "
                      "identification | failures_per_game | calls_per_game | tokens_per_game | "
                      "cost_usd | mean_duration_s |")
    assert (tmp_path / "report.md").read_text(encoding="utf-8") == md.output
    table = runner.invoke(app, ["runs", "report", str(known_batch), "--format", "csv"])
    warning = table.output.partition("\n")[0]
    assert warning.startswith("# warning:") and "scripted fake" in warning
    comments = [line for line in table.output.splitlines() if line.startswith("# ")]
    assert any(line.startswith("# Provenance: jubensha ") for line in comments)
    body = "\n".join(line for line in table.output.splitlines() if not line.startswith("#"))
    rows = list(csv.DictReader(io.StringIO(body)))
    assert [(r["architecture"], r["civilian_wins.mean"], r["civilian_wins.n"],
             r["identification.mean"]) for r in rows] == [
        ("accuser:Ann", "1.0", "2", "1.0"), ("accuser:Bob", "0.0", "2", "0.0")]
    assert float(rows[1]["metrics.culprit-rank.values.reciprocal_rank.mean"]) == 0.5
    assert rows[1]["metrics.culprit-rank.values.reciprocal_rank.ci_low"] == ""
    assert rows[0]["civilian_wins.ci_low"].startswith("0.342")
    data = json.loads(runner.invoke(app, ["runs", "report", str(known_batch), "--format",
                                          "json"]).output)
    flat = set(rows[0])
    for key in ("civilian_wins", "identification"):
        assert {f"{key}.{name}" for name in data["groups"][0][key]} <= flat


def test_by_script_rows_and_plots(known_batch: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["runs", "report", str(known_batch), "--by-script",
                                      "--format", "csv", "--plots", str(tmp_path / "plots")])
    assert result.exit_code == 0, result.output
    assert "architecture,model,murderers,script,games" in result.output
    assert "accuser:Ann,scripted,,tiny-manor,2" in result.output
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
                   error="ModelError: boom" if status == "failed" else None, failures=1)


def test_failed_and_unfinished_games_count_apart_from_the_rates() -> None:
    rows = [row(0, "a", "finished", "civilians", (3, 4), 100, 0.01),
            row(1, "a", "finished", "murderers", (1, 4), 300, 0.03),
            row(2, "a", "failed", cost=0.005),
            row(3, "a", "pending"),
            row(4, "b", "finished", "civilians", (4, 4), 50)]
    rows[0].metrics = {"similarity": {"tfidf": 0.2, "chat_tokens": 250, "scoring": "judge none"},
                       "mirage-trust": {"skipped": "no ratings"}}
    rows[1].metrics = {"similarity": {"error": "ValueError: empty"}}
    report = build_report(rows)
    a, b = report.groups
    assert (a.games, a.finished, a.failed, a.unfinished) == (4, 2, 1, 1)
    assert a.civilian_wins is not None and (a.civilian_wins.mean, a.civilian_wins.n) == (0.5, 2)
    assert a.identification is not None and a.identification.mean == 0.5  # (3/4 + 1/4) / 2
    assert a.tokens_per_game == 200 and a.calls_per_game == 3 and a.failures_per_game == 1
    assert a.cost_usd == pytest.approx(0.04) and a.spent_cost_usd == pytest.approx(0.045)
    assert b.cost_usd is None and b.mean_duration_s == 2.0
    similarity = a.metrics["similarity"]
    # a count (chat_tokens) is never averaged; the failed game is counted, not averaged in
    assert similarity.values == {"tfidf": Estimate(
        mean=0.2, n=1, why="1 game, a bootstrap needs 10")}
    assert (similarity.games, similarity.failed, similarity.scoring) == (2, 1, "judge none")
    assert list(a.metrics) == ["similarity"]
    assert [f.name for f in report.failed] == ["g2"]
    assert "| g2 | 1 | ModelError: boom |" in render(report, "md")


def test_identification_is_one_mean_of_game_shares_in_the_report_and_in_compare() -> None:
    from jubensha.runs.compare import compare

    rows = [row(0, "a", "finished", "civilians", (1, 1)),
            row(1, "a", "finished", "murderers", (0, 4)),
            row(2, "b", "finished", "civilians", (1, 4)),
            row(3, "b", "finished", "murderers", (1, 4))]
    for i, found in enumerate(rows):
        found.seed = i % 2
    a = build_report(rows).groups[0]
    assert a.identification is not None and a.identification.mean == 0.5  # not 1/5
    compared = {r.metric: r for r in compare(rows, "a@m", "b@m").results}
    assert compared["identification"].a == a.identification.mean


def test_a_metric_scored_two_ways_is_two_rows_never_one_mean() -> None:
    rows = [row(0, "a", "finished", "civilians"), row(1, "a", "finished", "civilians")]
    rows[0].metrics = {"factual": {"accuracy": 0.9, "scoring": "judge lexical"}}
    rows[1].metrics = {"factual": {"accuracy": 0.1, "scoring": "judge openai:gpt-4o"}}
    found = build_report(rows).groups[0].metrics
    assert {key: (m.scoring, m.values["accuracy"].mean) for key, m in found.items()} == {
        "factual · judge lexical": ("judge lexical", 0.9),
        "factual · judge openai:gpt-4o": ("judge openai:gpt-4o", 0.1)}


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


def test_the_answer_level_failure_share_is_in_every_form() -> None:
    """A WellPlay score on 20 failed answers of 44 (counted wrong) read 0.169 with
    "failed 0/2": the games' failures alone hide it."""
    rows = [row(0, "a", "finished", "civilians", (3, 4)),
            row(1, "a", "finished", "murderers", (1, 4))]
    for found in rows:
        found.metrics = {"wellplay": {"score": 0.169, "scoring": "judge none",
                                      "answers": 22, "failed_answers": 10}}
    report = build_report(rows)
    wellplay = report.groups[0].metrics["wellplay"]
    assert (wellplay.failed, wellplay.answers, wellplay.failed_answers) == (0, 44, 20)
    assert "| a | m | wellplay | judge none | score | 0.169 (n=2; no interval: 2 games, a " \
           "bootstrap needs 10) | 2 | too few | 0/2 | 20/44 |" in render(report, "md")
    data = json.loads(render(report, "json"))
    assert data["groups"][0]["metrics"]["wellplay"]["failed_answers"] == 20
    body = "\n".join(line for line in render(report, "csv").splitlines()
                     if not line.startswith("#"))
    record = next(csv.DictReader(io.StringIO(body)))
    assert (record["metrics.wellplay.answers"], record["metrics.wellplay.failed_answers"]) == (
        "44", "20")


def test_csv_columns_do_not_depend_on_what_the_games_hold() -> None:
    """The group's own columns are there whether a number is or not: no winner (no
    civilian_wins), no murderers of their own, no side's model use."""
    plain = build_report([row(0, "a", "finished", None, (0, 0))])
    won = build_report([row(0, "a", "finished", "civilians", (3, 4))])

    def columns(report: BatchReport) -> list[str]:
        text = "\n".join(line for line in render(report, "csv").splitlines()
                         if not line.startswith("#"))
        return text.splitlines()[0].split(",")

    assert columns(plain) == columns(won)
    assert {"murderers", "civilian_wins.mean", "civilian_wins.ci_low", "civilian_wins.why",
            "sides.murderers.calls_per_game"} <= set(columns(plain))


def test_allow_mixed_csv_says_what_is_mixed_above_its_header() -> None:
    from jubensha.llm.identity import ModelIdentity
    from jubensha.runlog.provenance import Code, Provenance

    rows = [row(0, "a", "finished", "civilians", (3, 4)),
            row(1, "a", "finished", "murderers", (1, 4))]
    for i, found in enumerate(rows):
        found.provenance = Provenance(code=Code(version="0.1.0", commit="a" * 40),
                                      models={"m": ModelIdentity(kind="openai", name="m",
                                                                 endpoint=f"http://gpu{i}/v1")})
    text = render(build_report(rows, allow_mixed=True), "csv")
    assert "# Mixed provenance: model m: m at http://gpu0/v1 (1 game); m at http://gpu1/v1 " \
           "(1 game)\n" in text
