"""Intervals and paired tests of a batch's means, checked against known distributions, and
what every report built on the scripted fake says first."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.eval.report import headline
from jubensha.eval.similarity import Similarity
from jubensha.runs.compare import CompareError, compare
from jubensha.runs.index import GameRow
from jubensha.runs.report import build_report, fake_warning, render
from jubensha.runs.statistics import MIN_CLUSTERS, estimate, games_needed, holm, paired
from tests.runs.accuser import accuser_batch

TINY = str(Path(__file__).parents[1] / "engine" / "tiny_script.yaml")


def test_the_interval_of_a_normal_mean_covers_it_about_95_times_in_100() -> None:
    rng = np.random.default_rng(7)
    covered = 0
    widths = []
    for _ in range(200):
        values = rng.normal(0.0, 1.0, 40)
        found = estimate(list(values))
        assert found.method == "bootstrap within scripts"  # one script, 40 games
        assert found.ci_low is not None and found.ci_high is not None
        covered += found.ci_low <= 0.0 <= found.ci_high
        widths.append(found.ci_high - found.ci_low)
    assert 0.88 <= covered / 200 <= 0.99
    # the normal theory width is 2 x 1.96 / sqrt(40) = 0.62
    assert np.mean(widths) == pytest.approx(2 * 1.96 / np.sqrt(40), rel=0.08)


def test_with_enough_scripts_the_cluster_bootstrap_widens_for_scripts_that_differ() -> None:
    rng = np.random.default_rng(3)
    effects = rng.normal(0.0, 1.0, MIN_CLUSTERS)  # some scripts are much easier than others
    values, scripts = [], []
    for script, effect in enumerate(effects):
        for _ in range(10):
            values.append(effect + rng.normal(0.0, 0.1))
            scripts.append(script)
    by_script = estimate(values, scripts)
    by_game = estimate(values)
    assert (by_script.method, by_script.clusters) == ("cluster bootstrap", MIN_CLUSTERS)
    assert by_script.mean == by_game.mean
    assert by_script.ci_low is not None and by_script.ci_high is not None
    assert by_game.ci_low is not None and by_game.ci_high is not None
    assert (by_script.ci_high - by_script.ci_low) > 2 * (by_game.ci_high - by_game.ci_low)
    # fewer scripts than that: no cluster bootstrap, whatever the games
    few = estimate(values[:90], scripts[:90])
    assert few.method == "bootstrap within scripts" and few.clusters == MIN_CLUSTERS - 1


def test_wins_on_few_scripts_get_the_wilson_interval() -> None:
    found = estimate([1, 1, 0, 1], ["a", "a", "b", "b"], trials=True)
    wilson = stats.binomtest(3, 4).proportion_ci(method="wilson")
    assert found.method == "Wilson score"
    assert (found.ci_low, found.ci_high) == (pytest.approx(wilson.low),
                                             pytest.approx(wilson.high))
    # a metric whose few values happen to be 0 or 1 is no trial: no interval
    assert estimate([1.0, 1.0, 0.0, 1.0], ["a", "a", "b", "b"]).method == "too few"
    with pytest.raises(ValueError, match="trials are 0 or 1"):
        estimate([0.5], trials=True)


@pytest.mark.parametrize("scripts", [1, 20])
def test_no_degenerate_interval_at_a_proportion_of_one(scripts: int) -> None:
    """20 wins of 20 were 1.000 [1.000, 1.000] by the cluster bootstrap: the Wilson
    interval holds at 0 and 1, on any number of scripts."""
    wins = estimate([1] * 20, [i % scripts for i in range(20)], trials=True)
    wilson = stats.binomtest(20, 20).proportion_ci(method="wilson")
    assert wins.method == "Wilson score" and wins.ci_high == pytest.approx(1.0)
    assert wins.ci_low == pytest.approx(wilson.low) and wins.ci_low < 0.85
    none = estimate([0] * 20, [i % scripts for i in range(20)], trials=True)
    assert none.ci_low == pytest.approx(0.0) and none.ci_high == pytest.approx(1 - wilson.low)


def test_a_constant_sample_or_scripts_with_one_game_give_no_interval() -> None:
    constant = estimate([0.8] * 20, [i % 10 for i in range(20)])  # was [0.800, 0.800]
    assert constant.ci_low is None and constant.method == "too few"
    assert constant.render() == ("0.800 (n=20; no interval: every value is 0.8: a bootstrap "
                                 "gives one point)")
    spread = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.5]
    single = estimate(spread, [f"s{i}" for i in range(9)] + ["s0"])  # was [0.50, 0.51]
    assert single.ci_low is None and "8 of 9 scripts have one game" in single.why
    twice = estimate(spread + spread, [f"s{i % 5}" for i in range(20)])
    assert twice.method == "bootstrap within scripts"
    assert twice.ci_low is not None and twice.ci_high is not None
    assert twice.ci_high - twice.ci_low > 0.1


def test_too_few_values_have_no_interval_and_none_is_refused() -> None:
    two = estimate([0.5, 0.8])  # the "0.50 ± 0.71 [0.00, 1.00]" of two games is gone
    assert two.ci_low is None and two.method == "too few"
    assert two.render() == "0.650 (n=2; no interval: 2 games, a bootstrap needs 10)"
    assert estimate([0.2, 0.3] * 4 + [0.2]).method == "too few"
    with pytest.raises(ValueError):
        estimate([])


def test_pairs_that_all_differ_by_one_amount_give_no_interval() -> None:
    found = paired("civilian win", [1.0] * 10, [0.0] * 10)  # was 1.000 [1.000, 1.000]
    assert found.p_value == pytest.approx(2 / 1024)
    assert found.difference.ci_low is None and "every pair differs by 1" in found.difference.why
    same = paired("identification", [0.5] * 8, [0.5] * 8)
    assert same.p_value == 1.0 and same.difference.ci_low is None


@pytest.mark.parametrize("shift", [0.0, 0.3, 0.8])
def test_the_paired_permutation_test_agrees_with_the_paired_t_test_on_normal_data(
        shift: float) -> None:
    rng = np.random.default_rng(11)
    b = rng.normal(0.0, 1.0, 30)
    a = b + rng.normal(shift, 1.0, 30)
    found = paired("x", list(a), list(b))
    assert found.p_value == pytest.approx(stats.ttest_rel(a, b).pvalue, abs=0.03)
    assert found.difference.mean == pytest.approx(float(np.mean(a - b)))
    # the inverted test's interval is close to the paired t interval
    t_low, t_high = stats.ttest_rel(a, b).confidence_interval()
    assert found.difference.ci_low == pytest.approx(t_low, abs=0.06)
    assert found.difference.ci_high == pytest.approx(t_high, abs=0.06)


def test_the_paired_test_is_exact_for_few_pairs() -> None:
    """Six pairs, A better in each: of the 2^6 sign flips only all-plus and all-minus are
    as extreme, so p = 2/64."""
    found = paired("x", [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    assert found.p_value == pytest.approx(2 / 64)
    assert paired("x", [1.0, 1.0], [1.0, 1.0]).p_value == 1.0


def test_with_five_pairs_or_fewer_no_interval_is_claimed() -> None:
    """The batch of the report that showed [0.062, 0.225] beside p = 0.25: 2 scripts, 4
    pairs. No p of 4 pairs can reach 0.05 (the least is 2/16), so no interval either."""
    found = paired("identification", [0.5, 0.4, 0.3, 0.35], [0.3, 0.3, 0.2, 0.25],
                   ["s1", "s1", "s2", "s2"])
    assert found.p_value == pytest.approx(2 / 16)
    assert found.difference.method == "too few" and found.difference.ci_low is None


def test_the_interval_excludes_zero_exactly_when_the_test_rejects() -> None:
    rng = np.random.default_rng(5)
    seen = set()
    for trial in range(300):
        n = int(rng.integers(6, 40))
        kind = trial % 3
        if kind == 0:   # wins: differences in {-1, 0, 1}
            a, b = rng.integers(0, 2, n), rng.integers(0, 2, n)
        elif kind == 1:  # shares with a shift
            b = rng.random(n)
            a = np.clip(b + rng.normal(0.15, 0.3, n), 0, 1)
        else:           # heavy tails
            b = rng.standard_t(2, n)
            a = b + rng.standard_t(2, n) + 0.5
        found = paired("x", list(a.astype(float)), list(b.astype(float)))
        low, high = found.difference.ci_low, found.difference.ci_high
        if len(set(a - b)) == 1:  # one difference throughout: a point, no interval
            assert low is None and "every pair differs" in found.difference.why
            continue
        assert low is not None and high is not None and found.p_value is not None
        assert low <= found.difference.mean <= high
        rejects = found.p_value <= 0.05
        assert rejects == (not low <= 0.0 <= high), (trial, found)
        seen.add(rejects)
    assert seen == {True, False}


def test_holm_adjusts_a_family_step_down() -> None:
    assert holm([0.01, 0.04, None, 0.03]) == [pytest.approx(0.03), pytest.approx(0.06), None,
                                              pytest.approx(0.06)]
    assert holm([0.5, 0.9]) == [1.0, 1.0]  # capped at 1, never below an earlier step
    assert holm([]) == []


def test_games_needed_follows_the_normal_approximation() -> None:
    # (1.96 + 0.84)^2 / 0.5^2 = 31.4: 32 pairs find half a standard deviation 80% of the time
    assert games_needed(0.5, 1.0) == 32
    assert games_needed(0.1, 0.5) == 197


def test_settings_are_not_results() -> None:
    numbers = headline(Similarity(embedding=None, tfidf=0.4, ngram=0.1, n=3, chat_tokens=90,
                                  script_tokens=4000))
    assert numbers == {"tfidf": 0.4, "ngram": 0.1, "chat_tokens": 90}


def row(position: int, arch: str, script: str, seed: int, won: bool,
        model: str = "openai:x") -> GameRow:
    return GameRow(id=str(position), position=position, name=f"g{position}", script=script,
                   procedure="demo", architecture=arch, model=model, seed=seed, settings={},
                   status="finished", winner="civilians" if won else "murderers",
                   votes_on_murderer=3 if won else 0, votes_counted=3,
                   metrics={"culprit-rank": {"reciprocal_rank": 1.0 if won else 0.5,
                                             "scoring": "judge none"}})


def test_compare_pairs_games_by_script_and_seed() -> None:
    rows = [row(i, arch, f"s{i % 2}", i // 2, arch == "a") for i in range(10)
            for arch in ("a", "b")]
    rows = [r.model_copy(update={"position": n}) for n, r in enumerate(rows)]
    result = compare(rows, "a@openai:x", "b@openai:x")
    assert result.pairs == 10 and result.warning is None
    win = result.results[0]
    assert (win.metric, win.a, win.b, win.difference.mean) == ("civilian win", 1.0, 0.0, 1.0)
    assert win.difference.ci_low is None  # every pair differs by 1: no interval
    assert win.p_value == pytest.approx(2 / 1024)
    assert win.p_holm == pytest.approx(3 * 2 / 1024)  # the least of three tests
    assert [r.metric for r in result.results] == [
        "civilian win", "identification", "culprit-rank.reciprocal_rank"]
    only = compare(rows, "a@openai:x", "b@openai:x", ["culprit"])
    assert [r.metric for r in only.results] == ["culprit-rank.reciprocal_rank"]
    with pytest.raises(CompareError, match="no entrant 'c@x'"):
        compare(rows, "a@openai:x", "c@x")


def test_compare_tests_the_identification_once() -> None:
    """The identification metric's accuracy is the game's identification: one quantity,
    one test in the Holm family, not two."""
    rows = [row(i, arch, f"s{i % 2}", i // 2, arch == "a") for i in range(10)
            for arch in ("a", "b")]
    rows = [r.model_copy(update={"position": n, "metrics": {**r.metrics, "identification": {
        "accuracy": float(r.votes_on_murderer or 0) / 3, "scoring": "judge none"}}})
        for n, r in enumerate(rows)]
    assert [r.metric for r in compare(rows, "a@openai:x", "b@openai:x").results] == [
        "civilian win", "identification", "culprit-rank.reciprocal_rank"]


def test_the_fake_model_is_named_first_in_every_form() -> None:
    rows = [row(0, "a", "s", 0, True, model="scripted"), row(1, "a", "s", 1, False)]
    warning = fake_warning(rows)
    assert warning is not None and "1 game(s)" in warning and "not a model" in warning
    report = build_report(rows)
    assert render(report, "csv").startswith(f"# {warning}\n")
    assert render(report, "md").startswith(f"**{warning}**")
    assert json.loads(render(report, "json"))["warning"] == warning
    assert fake_warning([row(0, "a", "s", 0, True)]) is None


def test_runs_compare_on_a_batch_with_a_known_outcome(tmp_path: Path) -> None:
    """``accuser:Ann`` tables always catch Ann, ``accuser:Bob`` tables never do: on two
    seeds the identification differs by 1, and with two pairs the exact p is 2/4."""
    accuser_batch(tmp_path)
    runner = CliRunner()
    done = runner.invoke(app, ["runs", "compare", str(tmp_path / "batch"), "accuser:Ann@scripted",
                               "accuser:Bob@scripted", "--format", "json"])
    assert done.exit_code == 0, done.output
    found = {r["metric"]: r for r in json.loads(done.output)["results"]}
    assert found["identification"]["difference"]["mean"] == 1.0
    assert found["identification"]["p_value"] == pytest.approx(0.5)
    assert found["identification"]["difference"]["ci_low"] is None  # two pairs: too few
    table = runner.invoke(app, ["runs", "compare", str(tmp_path / "batch"),
                                "accuser:Ann@scripted", "accuser:Bob@scripted", "--format",
                                "csv"])
    header = next(line for line in table.output.splitlines() if not line.startswith("#"))
    columns = header.split(",")
    assert {"metric", "scoring", "p_value", "p_holm", "difference.mean", "difference.ci_low",
            "difference.ci_high", "difference.method", "failed_a", "failed_b"} <= set(columns)
    assert set(columns) == {k for k in found["identification"] if k != "difference"} | {
        f"difference.{k}" for k in found["identification"]["difference"]}
    table = runner.invoke(app, ["runs", "compare", str(tmp_path / "batch"),
                                "accuser:Ann@scripted", "accuser:Bob@scripted"])
    assert table.output.startswith("warning: 4 game(s) here were played by the scripted fake")
    html = tmp_path / "report.html"
    report = runner.invoke(app, ["runs", "report", str(tmp_path / "batch"), "--baseline",
                                 "accuser:Bob@scripted", "--html", str(html)])
    assert report.exit_code == 0, report.output
    assert "accuser:Ann@scripted (A) against accuser:Bob@scripted (B)" in report.output
    page = html.read_text(encoding="utf-8")
    assert page.index('class="warning"') < page.index("Script × method")
    wrong = runner.invoke(app, ["runs", "compare", str(tmp_path / "batch"), "x@y", "z@w"])
    assert wrong.exit_code == 2 and "no entrant 'x@y'" in wrong.output


def test_compare_counts_failed_answers_and_names_columns_as_its_json() -> None:
    from jubensha.runs.compare import comparison_table

    rows = [row(i, arch, f"s{i % 2}", i // 2, arch == "a") for i in range(10)
            for arch in ("a", "b")]
    rows = [r.model_copy(update={"position": n, "metrics": {"culprit-rank": {
        **r.metrics["culprit-rank"], "answers": 4, "failed_answers": 1 if r.architecture == "a"
        else 3}}}) for n, r in enumerate(rows)]
    result = compare(rows, "a@openai:x", "b@openai:x")
    rank = result.results[-1]
    assert (rank.answers_a, rank.failed_answers_a, rank.answers_b, rank.failed_answers_b) == (
        40, 10, 40, 30)
    table = comparison_table(result)
    keys = set(rank.model_dump())
    assert {c for c in table.columns if " " not in c} <= keys
    assert table.rows[-1][-2:] == ["10/40", "30/40"]
