"""Intervals and tests a reviewer accepts for the means of a batch (docs/experiments.md,
"Statistics", has the methods with a worked example).

**A mean** (one group's win rate, identification or metric, over its finished games) gets
an interval only where its method holds, chosen in this order; where none holds it has
none, and ``why`` says so (a degenerate interval such as [1.000, 1.000] is never printed):

1. ``cluster bootstrap``: with at least ``MIN_CLUSTERS`` scripts and values that are not
   all equal, the two-level percentile bootstrap (scripts with replacement, then each drawn
   script's games); it speaks for scripts like these, not only these;
2. ``Wilson score``: a mean of trials, each 0 or 1 by definition (the civilian win), on
   fewer scripts or all equal (20 wins of 20): the Wilson score interval over games,
   conditional on the scripts played; it holds at proportions of 0 and 1, where a
   bootstrap collapses to a point;
3. ``bootstrap within scripts``: any other mean of at least ``MIN_GAMES`` games on fewer
   scripts, each script with at least ``MIN_PER_SCRIPT`` games and the values not all
   equal: the percentile bootstrap resampling games within each script, conditional on the
   scripts played (a script with one game adds no variance to it, so it is not used then);
4. ``too few``: no interval, and ``why``.

**A paired comparison** (A - B over games with the same script, procedure and seed) is
tested with the paired sign-flip permutation test of the mean difference (under "no
difference" each pair's sign is as likely flipped; exact over every flip up to
``EXACT_PAIRS`` pairs, else ``PERMUTATIONS`` seeded flips) and its interval is that test
inverted: every shift ``delta`` the test does not reject at 5% when it is subtracted from
every difference. So the interval excludes 0 exactly when p < 0.05. With five pairs or
fewer no p can reach 0.05 (the smallest is 2/2^n) and there is no interval; nor is there
one when every pair differs by the same amount (the inverted test accepts only that one
shift: a point, not an interval).
A table of several tests adjusts its p-values with Holm's step-down method (``holm``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel

RESAMPLES = 4000
LEVEL = 0.95
ALPHA = 1 - LEVEL
GENERATOR_SEED = 20240601
MIN_CLUSTERS = 10
"""Scripts a cluster bootstrap needs: with fewer, its percentile interval is too narrow."""
MIN_GAMES = 10
"""Games a bootstrap within scripts needs."""
MIN_PER_SCRIPT = 2
"""Games each script needs for a bootstrap within scripts (one game resamples to itself)."""
Z = 1.959963984540054
"""The standard normal's 97.5% point (a 95% two-sided interval)."""
EXACT_PAIRS = 16
"""Up to this many pairs every sign flip is enumerated (2^16 = 65,536)."""
PERMUTATIONS = 20_000
BISECTIONS = 40
Method = Literal["cluster bootstrap", "Wilson score", "bootstrap within scripts",
                 "sign-flip inversion", "too few"]


class Estimate(BaseModel):
    """A mean, its 95% interval (``None``: no method holds, ``why`` says why) and the
    method that made it. The field names are those of the CSV columns and the JSON,
    everywhere."""

    mean: float
    n: int
    clusters: int = 1
    ci_low: float | None = None
    ci_high: float | None = None
    method: Method = "too few"
    why: str = ""
    """Why there is no interval ("" when there is one)."""

    def render(self, digits: int = 3) -> str:
        if self.ci_low is None or self.ci_high is None:
            return f"{self.mean:.{digits}f} (n={self.n}; no interval: {self.why})"
        return f"{self.mean:.{digits}f} [{self.ci_low:.{digits}f}, {self.ci_high:.{digits}f}]"


def bootstrap_means(values: Sequence[float], clusters: Sequence[Any],
                    resamples: int = RESAMPLES, seed: int = GENERATOR_SEED) -> np.ndarray:
    """Means of ``resamples`` two-level resamples: clusters (scripts) with replacement,
    then each drawn cluster's values with replacement."""
    rng = np.random.default_rng(seed)
    groups = _groups(values, clusters)
    sums = np.zeros(resamples)
    counts = np.zeros(resamples)
    drawn = rng.integers(0, len(groups), size=(resamples, len(groups)))
    for g, group in enumerate(groups):
        times = (drawn == g).sum(axis=1)  # how often each resample drew this script
        owners = np.repeat(np.arange(resamples), times)  # one row per draw of the script
        picks = rng.integers(0, len(group), size=(len(owners), len(group)))
        np.add.at(sums, owners, group[picks].sum(axis=1))
        np.add.at(counts, owners, len(group))
    return sums / counts


def stratified_means(values: Sequence[float], clusters: Sequence[Any],
                     resamples: int = RESAMPLES, seed: int = GENERATOR_SEED) -> np.ndarray:
    """Means of ``resamples`` resamples of each cluster's values within that cluster."""
    rng = np.random.default_rng(seed)
    total = np.zeros(resamples)
    for group in _groups(values, clusters):
        picks = rng.integers(0, len(group), size=(resamples, len(group)))
        total += group[picks].sum(axis=1)
    return total / len(values)


def _groups(values: Sequence[float], clusters: Sequence[Any]) -> list[np.ndarray]:
    data = np.asarray(values, dtype=float)
    keys = list(dict.fromkeys(clusters))
    return [data[[i for i, c in enumerate(clusters) if c == key]] for key in keys]


def _percentile(means: np.ndarray) -> tuple[float, float]:
    tail = ALPHA / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def wilson(successes: int, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval of ``successes`` in ``n`` trials (it holds at 0 and
    n, where the proportion's own spread is 0)."""
    p = successes / n
    shrink = 1 + Z * Z / n
    centre = (p + Z * Z / (2 * n)) / shrink
    half = Z / shrink * float(np.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)))
    return max(0.0, centre - half), min(1.0, centre + half)


def estimate(values: Sequence[float], clusters: Sequence[Any] | None = None,
             trials: bool = False) -> Estimate:
    """The mean of ``values`` and its 95% interval by the first method that holds (see the
    module docstring); ``clusters`` names each value's script; ``trials``: each value is a
    0/1 outcome by definition (a metric whose values merely happen to be 0 or 1 is not)."""
    if not values:
        raise ValueError("no values to estimate a mean from")
    if trials and any(v not in (0, 1) for v in values):
        raise ValueError("trials are 0 or 1")
    keys = list(clusters) if clusters is not None else [0] * len(values)
    scripts = len(set(keys))
    found = Estimate(mean=float(np.mean(values)), n=len(values), clusters=scripts)
    constant = min(values) == max(values)
    if scripts >= MIN_CLUSTERS and not constant:
        low, high = _percentile(bootstrap_means(values, keys))
        method: Method = "cluster bootstrap"
    elif trials:
        low, high = wilson(int(sum(values)), len(values))
        method = "Wilson score"
    elif why := _no_bootstrap(values, keys, constant):
        return found.model_copy(update={"why": why})
    else:
        low, high = _percentile(stratified_means(values, keys))
        method = "bootstrap within scripts"
    return found.model_copy(update={"ci_low": low, "ci_high": high, "method": method})


def _no_bootstrap(values: Sequence[float], keys: list[Any], constant: bool) -> str:
    """Why a bootstrap within scripts would be degenerate here ("" when it holds)."""
    if len(values) < MIN_GAMES:
        return f"{len(values)} game{'s' * (len(values) != 1)}, a bootstrap needs {MIN_GAMES}"
    if constant:
        return f"every value is {values[0]:.3g}: a bootstrap gives one point"
    counts = [keys.count(key) for key in dict.fromkeys(keys)]
    single = sum(count < MIN_PER_SCRIPT for count in counts)
    if single:
        return (f"{single} of {len(counts)} scripts have one game, which adds no variance "
                f"to a bootstrap within scripts (fewer than {MIN_CLUSTERS} scripts for one "
                "across them)")
    return ""


# -- paired comparisons ---------------------------------------------------------------------
@lru_cache(maxsize=8)
def _exact_signs(n: int) -> np.ndarray:
    """Every vector of n signs, one per row (2^n rows)."""
    bits = (np.arange(2 ** n)[:, None] >> np.arange(n)) & 1
    return 1.0 - 2.0 * bits


def sign_flips(n: int) -> np.ndarray:
    """The sign vectors the test averages over: every one for few pairs, else the
    observed one and ``PERMUTATIONS`` seeded draws."""
    if n <= EXACT_PAIRS:
        return _exact_signs(n)
    rng = np.random.default_rng(GENERATOR_SEED)
    drawn = rng.choice((1.0, -1.0), size=(PERMUTATIONS, n))
    return np.vstack([np.ones(n), drawn])


class FlipTest:
    """The paired sign-flip test of "the mean difference is ``delta``", for any delta:
    the flipped sums are ``S d - delta S 1``, so each delta costs one pass over the flips."""

    def __init__(self, differences: np.ndarray) -> None:
        signs = sign_flips(len(differences))
        self.differences = differences
        self.n = len(differences)
        self.flipped = signs @ differences
        self.counts = signs.sum(axis=1)

    def p(self, delta: float = 0.0) -> float:
        """Two-sided p: the share of flips whose |mean| reaches the observed one."""
        observed = abs(self.differences.mean() - delta)
        means = np.abs(self.flipped - delta * self.counts) / self.n
        return float(np.mean(means >= observed - 1e-12 * max(1.0, observed)))

    def edge(self, rejected: float, accepted: float) -> float:
        """The last accepted shift between a rejected and an accepted one (bisection)."""
        for _ in range(BISECTIONS):
            middle = (rejected + accepted) / 2
            if self.p(middle) > ALPHA:
                accepted = middle
            else:
                rejected = middle
        return accepted

    def interval(self, p_zero: float) -> tuple[float, float]:
        """The shifts the test accepts around the mean, made to agree with ``p_zero``: 0
        is inside exactly when the test at 0 does not reject."""
        d = self.differences
        mean = float(d.mean())
        span = float(d.max() - d.min()) + 1.0
        below, above = float(d.min()) - span, float(d.max()) + span
        if p_zero <= ALPHA:  # 0 is rejected: the edge on its side lies between 0 and mean
            below, above = (max(below, 0.0), above) if mean > 0 else (below, min(above, 0.0))
        low, high = self.edge(below, mean), self.edge(above, mean)
        if p_zero > ALPHA:
            low, high = min(low, 0.0), max(high, 0.0)
        return low, high


class Paired(BaseModel):
    """Entrant A against entrant B on the same games: means, the mean difference A - B with
    its interval (the sign-flip test inverted), the test's two-sided p and, in a table of
    several tests, its Holm-adjusted p; ``failed_a``/``failed_b``: games whose metric
    failed (no value) and were left out of the pairs."""

    metric: str
    scoring: str = ""
    pairs: int
    a: float
    b: float
    difference: Estimate
    p_value: float | None = None
    p_holm: float | None = None
    failed_a: int = 0
    failed_b: int = 0
    answers_a: int = 0
    """The answers A's metric asked on the paired games (its failures counted in
    ``failed_answers_a``); 0 for the game's own numbers, which ask none."""
    failed_answers_a: int = 0
    answers_b: int = 0
    failed_answers_b: int = 0


def paired(metric: str, a: Sequence[float], b: Sequence[float],
           clusters: Sequence[Any] | None = None) -> Paired:
    """Compare paired values (``a[i]`` and ``b[i]`` from the same script and seed)."""
    if len(a) != len(b) or not a:
        raise ValueError(f"{metric}: need as many values of A as of B, at least one pair")
    differences = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    scripts = len(set(clusters)) if clusters is not None else 1
    found = Estimate(mean=float(differences.mean()), n=len(differences), clusters=scripts)
    p_value = None
    if len(differences) > 1:
        test = FlipTest(differences)
        p_value = test.p()
        if 2.0 ** (1 - len(differences)) > ALPHA:  # no p can reject, nor bound
            found = found.model_copy(update={"why": (
                f"{len(differences)} pairs: no p can reach {ALPHA:.2f} (the smallest is "
                f"2/2^{len(differences)})")})
        elif differences.min() == differences.max():
            found = found.model_copy(update={"why": (
                f"every pair differs by {differences[0]:.3g}: the test inverted gives one "
                "point")})
        else:
            low, high = test.interval(p_value)
            found = found.model_copy(update={"ci_low": low, "ci_high": high,
                                             "method": "sign-flip inversion"})
    else:
        found = found.model_copy(update={"why": "one pair: no test"})
    return Paired(metric=metric, pairs=len(differences), a=float(np.mean(a)),
                  b=float(np.mean(b)), difference=found, p_value=p_value)


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment of a family of p-values (None: no test, left out)."""
    tested = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(tested):
        running = max(running, min(1.0, (len(tested) - rank) * p))
        adjusted[i] = running
    return adjusted


def games_needed(difference: float, spread: float, power: float = 0.8) -> int:
    """Pairs of games a paired comparison needs to find a mean difference ``difference``
    (two-sided, 5% level, ``power``) when the paired differences have standard deviation
    ``spread``: the normal approximation ``((z_0.975 + z_power) spread / difference)^2``."""
    from scipy import stats  # the stats extra, only for this estimate

    z = stats.norm.ppf(1 - ALPHA / 2) + stats.norm.ppf(power)
    return int(np.ceil((z * spread / difference) ** 2))
