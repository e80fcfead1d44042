"""Ranking helpers and reciprocal rank fusion of lexical and dense rankings.

BM25 scores and cosine similarities live on different scales, so the hybrid mode fuses
their *ranks* (Cormack et al., 2009): ``score(d) = sum_i w_i / (k + rank_i(d))`` with
1-based ranks; a ranking that does not contain ``d`` adds nothing. Equal scores keep the
smaller record id first so that results never depend on sort internals.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

RRF_K = 60
"""The constant of the original RRF paper; larger values flatten the head of each ranking."""


def rank(scores: np.ndarray, candidates: np.ndarray | None = None,
         positive_only: bool = False) -> list[tuple[int, float]]:
    """``(id, score)`` best first; ties keep ascending id order.

    ``candidates`` (ascending ids) restricts the ranking; ``positive_only`` drops ids
    whose score is not above zero (BM25 gives 0 to records sharing no query token).
    """
    ids = np.arange(len(scores)) if candidates is None else candidates
    picked = scores[ids]
    if positive_only:
        keep = picked > 0
        ids, picked = ids[keep], picked[keep]
    order = np.argsort(-picked, kind="stable")
    return [(int(ids[i]), float(picked[i])) for i in order]


def reciprocal_rank_fusion(rankings: Sequence[Sequence[int]],
                           weights: Sequence[float] | None = None,
                           k: int = RRF_K) -> list[tuple[int, float]]:
    """Fuse rankings of ids (best first) into ``(id, fused score)`` best first."""
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError(f"reciprocal_rank_fusion: {len(weights)} weights for "
                         f"{len(rankings)} rankings")
    if k < 0:
        raise ValueError(f"reciprocal_rank_fusion: k must not be negative, got {k}")
    fused: dict[int, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for position, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (k + position)
    return sorted(fused.items(), key=lambda pair: (-pair[1], pair[0]))
