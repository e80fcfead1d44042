"""Intervals and tests a reviewer accepts for the means of a batch.

Games of one script are not independent draws: a script can be easy for every method.
The bootstrap therefore resamples the way the batch was built: scripts with replacement,
then, within each script drawn, its games (seeds) with replacement; with one script it is
the ordinary bootstrap over games. The interval is the percentile interval of the
resampled means (``RESAMPLES`` draws, a fixed generator seed so a report is reproducible).

Two entrants are compared on the games they both played with the same script, procedure
and seed (``pair``): the mean of the paired differences, its bootstrap interval (the same
two-level resampling over the differences) and the two-sided p-value of a paired
permutation test (each pair's difference flipped in sign at random: under "no difference"
either order is as likely), ``scipy.stats.permutation_test``; exact when there are few
pairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel

RESAMPLES = 4000
LEVEL = 0.95
GENERATOR_SEED = 20240601


class Estimate(BaseModel):
    """A mean with its 95% bootstrap interval (``None`` with fewer than two values)."""

    mean: float
    n: int
    low: float | None = None
    high: float | None = None

    def render(self, digits: int = 3) -> str:
        interval = (f" [{self.low:.{digits}f}, {self.high:.{digits}f}]"
                    if self.low is not None and self.high is not None else "")
        return f"{self.mean:.{digits}f}{interval}"


def bootstrap_means(values: Sequence[float], clusters: Sequence[Any],
                    resamples: int = RESAMPLES, seed: int = GENERATOR_SEED) -> np.ndarray:
    """Means of ``resamples`` two-level resamples: clusters (scripts) with replacement,
    then each drawn cluster's values with replacement."""
    rng = np.random.default_rng(seed)
    data = np.asarray(values, dtype=float)
    keys = list(dict.fromkeys(clusters))
    groups = [data[[i for i, c in enumerate(clusters) if c == key]] for key in keys]
    if len(groups) == 1:
        picks = rng.integers(0, len(data), size=(resamples, len(data)))
        return data[picks].mean(axis=1)
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


def estimate(values: Sequence[float], clusters: Sequence[Any] | None = None) -> Estimate:
    """The mean of ``values`` and its 95% bootstrap interval (see the module docstring);
    ``clusters`` names each value's script."""
    if not values:
        raise ValueError("no values to estimate a mean from")
    mean = float(np.mean(values))
    if len(values) < 2:
        return Estimate(mean=mean, n=len(values))
    means = bootstrap_means(values, clusters or [0] * len(values))
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Estimate(mean=mean, n=len(values), low=float(low), high=float(high))


class Paired(BaseModel):
    """Entrant A against entrant B on the same games: means, the mean difference A - B
    with its interval, and the paired permutation test's two-sided p-value."""

    metric: str
    pairs: int
    a: float
    b: float
    difference: Estimate
    p_value: float | None = None


def paired(metric: str, a: Sequence[float], b: Sequence[float],
           clusters: Sequence[Any] | None = None) -> Paired:
    """Compare paired values (``a[i]`` and ``b[i]`` from the same script and seed)."""
    if len(a) != len(b) or not a:
        raise ValueError(f"{metric}: need as many values of A as of B, at least one pair")
    differences = [x - y for x, y in zip(a, b, strict=True)]
    p_value = None
    if len(a) > 1 and any(differences):
        from scipy import stats  # the stats extra, only for a paired comparison

        test = stats.permutation_test(
            (np.asarray(a, dtype=float), np.asarray(b, dtype=float)),
            lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples",
            vectorized=True, n_resamples=9999, alternative="two-sided",
            random_state=GENERATOR_SEED)
        p_value = float(test.pvalue)
    elif len(a) > 1:
        p_value = 1.0
    return Paired(metric=metric, pairs=len(a), a=float(np.mean(a)), b=float(np.mean(b)),
                  difference=estimate(differences, clusters), p_value=p_value)


def games_needed(difference: float, spread: float, power: float = 0.8) -> int:
    """Pairs of games a paired comparison needs to find a mean difference ``difference``
    (two-sided, 5% level, ``power``) when the paired differences have standard deviation
    ``spread``: the normal approximation ``((z_0.975 + z_power) spread / difference)^2``."""
    from scipy import stats

    z = stats.norm.ppf(1 - (1 - LEVEL) / 2) + stats.norm.ppf(power)
    return int(np.ceil((z * spread / difference) ** 2))
