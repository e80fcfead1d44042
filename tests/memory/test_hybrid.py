"""Rank fusion and stable rankings, checked against numbers worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jubensha.memory.hybrid import rank, reciprocal_rank_fusion


def test_rrf_matches_the_hand_computed_example() -> None:
    # lexical: 0, 1, 2   dense: 1, 2, 3   (k = 60, ranks from 1)
    fused = reciprocal_rank_fusion([[0, 1, 2], [1, 2, 3]])
    assert fused.ids.tolist() == [1, 2, 0, 3]
    assert dict(fused.top(4)) == pytest.approx({
        0: 1 / 61, 1: 1 / 62 + 1 / 61, 2: 1 / 63 + 1 / 62, 3: 1 / 63})


def test_rrf_weights_and_k() -> None:
    fused = dict(reciprocal_rank_fusion([[0, 1], [1, 0]], weights=[3.0, 1.0], k=1).top(2))
    assert fused == pytest.approx({0: 3 / 2 + 1 / 3, 1: 3 / 3 + 1 / 2})


def test_rrf_ties_keep_the_smaller_id_first() -> None:
    assert reciprocal_rank_fusion([[7, 3], [3, 7]]).ids.tolist() == [3, 7]
    assert reciprocal_rank_fusion([[3, 7], [7, 3]]).ids.tolist() == [3, 7]


def test_rrf_rejects_mismatched_weights() -> None:
    with pytest.raises(ValueError, match="2 weights for 1 rankings"):
        reciprocal_rank_fusion([[1]], weights=[1.0, 1.0])


def test_rrf_of_nothing_is_empty() -> None:
    assert reciprocal_rank_fusion([[], []]).top(5) == []


def test_rank_is_stable_and_filters() -> None:
    scores = np.array([0.5, 0.0, 0.9, 0.5, -0.1], dtype=np.float32)
    assert rank(scores).ids.tolist() == [2, 0, 3, 1, 4]
    positive = rank(scores, positive_only=True)
    assert positive.ids.tolist() == [2, 0, 3]
    assert positive.scores.tolist() == pytest.approx([0.9, 0.5, 0.5])
    assert [i for i, _ in positive.top(2)] == [2, 0]
    assert rank(scores, candidates=np.array([1, 3, 4])).ids.tolist() == [3, 1, 4]


@given(st.lists(st.integers(0, 4), max_size=40), st.integers(0, 45), st.booleans())
def test_a_limited_ranking_is_the_head_of_the_full_one(values: list[int], limit: int,
                                                       positive: bool) -> None:
    scores = np.array(values, dtype=np.float32)
    full = rank(scores, positive_only=positive)
    head = rank(scores, positive_only=positive, limit=limit)
    assert head.ids.tolist() == full.ids[:limit].tolist()
    assert head.scores.tolist() == full.scores[:limit].tolist()
