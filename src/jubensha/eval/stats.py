"""Internal.

Means and spreads as the PLAYER* paper computes them (appendix B.3).

Two spreads appear in its tables, and they are not the same statistic:

- per script, ``mean ± std`` over the evaluation passes uses the *sample* standard
  deviation (divisor ``n - 1``): three passes scoring 0, 0 and 1/3 print ``.111±.192``;
- across scripts, the weighted mean and the weighted *population* standard deviation
  (divisor ``sum(w)``, weights normalised to sum to 1) are taken over every (script, pass)
  value, each weighted by its script's weight. Pooling the passes is what reproduces the
  paper's "Overall" rows (``.386±.057`` for SSA); the spread of the per-script means alone
  gives ``±.053``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel


class MeanStd(BaseModel):
    """A mean with its spread and the number of values behind it."""

    mean: float
    std: float
    n: int

    def render(self, digits: int = 3) -> str:
        return f"{self.mean:.{digits}f}±{self.std:.{digits}f}"


def _check(values: Sequence[float], weights: Sequence[float]) -> None:
    if len(values) != len(weights):
        raise ValueError(f"{len(values)} values but {len(weights)} weights")
    if not values:
        raise ValueError("no values to average")
    if any(w < 0 for w in weights) or sum(weights) <= 0:
        raise ValueError("weights must be non-negative and not all zero")


def weighted_mean(values: Sequence[float], weights: Sequence[float]) -> float:
    """``sum(w_i * x_i) / sum(w_i)``."""
    _check(values, weights)
    return sum(w * x for x, w in zip(values, weights, strict=True)) / sum(weights)


def weighted_std(values: Sequence[float], weights: Sequence[float]) -> float:
    """``sqrt(sum(w_i * (x_i - mean_w)^2) / sum(w_i))``: population form, normalised weights.

    Equal weights give ``numpy.std(values)`` (``ddof=0``), as in the paper's appendix B.3.
    """
    mean = weighted_mean(values, weights)
    variance = sum(w * (x - mean) ** 2 for x, w in zip(values, weights, strict=True))
    return math.sqrt(variance / sum(weights))


def sample_mean_std(values: Sequence[float]) -> MeanStd:
    """Mean and sample standard deviation (``n - 1``; 0 for a single value)."""
    if not values:
        raise ValueError("no values to average")
    mean = sum(values) / len(values)
    if len(values) == 1:
        return MeanStd(mean=mean, std=0.0, n=1)
    variance = sum((x - mean) ** 2 for x in values) / (len(values) - 1)
    return MeanStd(mean=mean, std=math.sqrt(variance), n=len(values))


def pooled_weighted(groups: Sequence[Sequence[float]], weights: Sequence[float]) -> MeanStd:
    """Weighted mean and population std over every value of every group; each value of
    group ``i`` carries ``weights[i]``. Groups are scripts, values their passes."""
    if len(groups) != len(weights):
        raise ValueError(f"{len(groups)} groups but {len(weights)} weights")
    values = [x for group in groups for x in group]
    flat = [w for group, w in zip(groups, weights, strict=True) for _ in group]
    return MeanStd(mean=weighted_mean(values, flat), std=weighted_std(values, flat),
                   n=len(values))
