"""The statistics of a batch on small inputs whose answer is known: what a resample's mean
is, which percentiles make the interval, where the exact test stops, the same numbers on a
second run, and the words of every refusal and every missing interval."""

from __future__ import annotations

import numpy as np
import pytest

from jubensha.runs.statistics import (
    EXACT_PAIRS,
    Estimate,
    bootstrap_means,
    estimate,
    holm,
    paired,
    stratified_means,
    wilson,
)

# Ten scripts k = 0..9, two games each: k and k + 0.5. Their mean is 4.75.
VALUES = [v for k in range(10) for v in (float(k), k + 0.5)]
SCRIPTS = [k for k in range(10) for _ in range(2)]


@pytest.mark.parametrize("resample", [bootstrap_means, stratified_means])
def test_a_resample_mean_is_a_mean_of_the_values_centred_on_theirs(resample) -> None:
    means = resample(VALUES, SCRIPTS)
    assert len(means) == 4000
    assert min(VALUES) <= means.min() and means.max() <= max(VALUES)
    # every script and every game is drawn alike: the resamples centre on the mean
    assert float(np.mean(means)) == pytest.approx(4.75, abs=0.05)


def test_the_cluster_bootstrap_resamples_the_games_of_each_drawn_script() -> None:
    """Scripts that all look alike (games 0 and 1 in each) still vary within: a bootstrap
    that drew only scripts would give one point."""
    means = bootstrap_means([0.0, 1.0] * 10, SCRIPTS)
    assert float(np.std(means)) == pytest.approx(np.sqrt(0.25 / 20), rel=0.1)


def test_scripts_of_unequal_size_weigh_by_their_games() -> None:
    """One game of 0 and three of 1 per pair of scripts: every resample's mean is a mean
    of games, between 0 and 1 (not a sum over a fixed count)."""
    values = [v for _ in range(5) for v in (0.0, 1.0, 1.0, 1.0)]
    scripts = [s for k in range(5) for s in (2 * k, 2 * k + 1, 2 * k + 1, 2 * k + 1)]
    means = bootstrap_means(values, scripts)
    assert means.min() >= 0.0 and means.max() <= 1.0
    assert means.min() < 0.5 < means.max()  # some draw many more games of 0 than others


@pytest.mark.parametrize("clusters", [SCRIPTS, [k % 5 for k in range(20)]])
def test_the_interval_is_the_middle_95_percent_of_the_resample_means(clusters: list) -> None:
    found = estimate(VALUES, clusters)
    method = bootstrap_means if found.method == "cluster bootstrap" else stratified_means
    low, high = np.percentile(method(VALUES, clusters), [2.5, 97.5])
    assert (found.ci_low, found.ci_high) == (low, high)


def test_the_same_values_give_the_same_numbers_on_every_run() -> None:
    """Resampling and the sign flips of many pairs draw from a fixed seed."""
    assert estimate(VALUES, SCRIPTS) == estimate(VALUES, SCRIPTS)
    few = [k % 5 for k in range(20)]
    assert estimate(VALUES, few) == estimate(VALUES, few)
    rng = np.random.default_rng(1)
    a, b = list(rng.random(40)), list(rng.random(40))
    assert paired("x", a, b) == paired("x", a, b)


def test_a_share_of_trials_never_leaves_zero_to_one() -> None:
    """16 wins of 16: the Wilson formula's upper end lies a rounding error above 1."""
    for n in range(1, 60):
        assert wilson(n, n)[1] <= 1.0 and wilson(0, n)[0] >= 0.0
    assert estimate([1] * 16, trials=True).ci_high == 1.0


def test_the_test_is_exact_up_to_its_limit_of_pairs() -> None:
    """At ``EXACT_PAIRS`` pairs all better for A, only all-plus and all-minus of the 2^n
    flips are as extreme: p = 2/2^n exactly; seeded draws could not give it."""
    n = EXACT_PAIRS
    found = paired("x", [1.0 + k for k in range(n)], [float(k) for k in range(n)])
    assert found.p_value == 2 / 2 ** n


def test_the_interval_excludes_zero_exactly_when_the_test_rejects_either_way() -> None:
    """A worse than B: the bracket of the upper edge stops at 0, as the lower one does
    when A is better."""
    rng = np.random.default_rng(9)
    seen = set()
    for _ in range(60):
        n = int(rng.integers(6, 30))
        b = rng.random(n)
        a = np.clip(b - rng.normal(0.15, 0.3, n), 0, 1)
        found = paired("x", list(a), list(b))
        low, high = found.difference.ci_low, found.difference.ci_high
        assert low is not None and high is not None and found.p_value is not None
        rejects = found.p_value <= 0.05
        assert rejects == (not low <= 0.0 <= high)
        seen.add(rejects)
    assert seen == {True, False}


def test_a_paired_comparison_counts_its_scripts_and_one_pair_has_no_test() -> None:
    a, b = [0.9, 0.8, 0.7, 0.9, 0.6, 0.8, 0.7], [0.1, 0.3, 0.2, 0.4, 0.1, 0.2, 0.3]
    assert paired("x", a, b, ["s1", "s1", "s2", "s2", "s3", "s3", "s3"]).difference.clusters == 3
    assert paired("x", a, b).difference.clusters == 1
    one = paired("x", [1.0], [0.0])
    assert one.p_value is None and one.difference.why == "one pair: no test"


def test_an_estimate_prints_its_interval_or_why_it_has_none() -> None:
    assert Estimate(mean=0.5, n=20, ci_low=0.25, ci_high=0.75).render() == (
        "0.500 [0.250, 0.750]")
    assert Estimate(mean=0.5, n=2, why="2 games").render(digits=2) == (
        "0.50 (n=2; no interval: 2 games)")


def test_scripts_with_one_game_are_named_as_the_reason() -> None:
    spread = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.5]
    found = estimate(spread, [f"s{i}" for i in range(9)] + ["s0"])
    assert found.why == ("8 of 9 scripts have one game, which adds no variance to a "
                         "bootstrap within scripts (fewer than 10 scripts for one across "
                         "them)")


def test_holm_never_adjusts_a_p_above_one() -> None:
    assert holm([0.6, 0.9]) == [1.0, 1.0]


@pytest.mark.parametrize(("call", "message"), [
    (lambda: estimate([]), "no values to estimate a mean from"),
    (lambda: estimate([0.0, 2.0], trials=True), "trials are 0 or 1"),
    (lambda: paired("wins", [1.0, 0.0], [1.0]),
     "wins: need as many values of A as of B, at least one pair"),
    (lambda: paired("wins", [], []), "wins: need as many values of A as of B, at least one pair"),
])
def test_what_cannot_be_estimated_is_refused_with_why(call, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        call()
    assert str(raised.value) == message


def test_a_paired_interval_names_its_method_and_a_missing_one_says_why() -> None:
    a, b = [0.9, 0.8, 0.7, 0.9, 0.6, 0.8, 0.7], [0.1, 0.3, 0.2, 0.4, 0.1, 0.2, 0.3]
    found = paired("x", a, b).difference
    assert (found.method, found.why) == ("sign-flip inversion", "")
    five = paired("x", [1.0, 2.0, 3.0, 4.0, 5.0], [0.0, 0.0, 0.0, 0.0, 1.0]).difference
    assert (five.method, five.why) == (
        "too few", "5 pairs: no p can reach 0.05 (the smallest is 2/2^5)")
    same = paired("x", [1.0] * 8, [0.5] * 8).difference
    assert (same.method, same.why) == (
        "too few", "every pair differs by 0.5: the test inverted gives one point")
