"""Weighted mean and standard deviation, identification accuracy and reciprocal rank."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from jubensha.eval.stats import (
    MeanStd,
    pooled_weighted,
    sample_mean_std,
    weighted_mean,
    weighted_std,
)
from jubensha.eval.votes import (
    Vote,
    culprit_rank,
    identification,
    mean_reciprocal_rank,
    votes_received,
)


def test_weighted_mean_and_population_std_by_hand() -> None:
    values, weights = [0.2, 0.5, 0.8], [1, 2, 1]
    assert weighted_mean(values, weights) == pytest.approx(0.5)
    # (1 * 0.09 + 2 * 0 + 1 * 0.09) / 4 = 0.045
    assert weighted_std(values, weights) == pytest.approx(math.sqrt(0.045))


def test_weights_are_normalised_and_equal_weights_give_the_plain_population_std() -> None:
    values = [0.2, 0.5, 0.8]
    assert weighted_std(values, [2, 4, 2]) == pytest.approx(weighted_std(values, [1, 2, 1]))
    assert weighted_std(values, [1, 1, 1]) == pytest.approx(math.sqrt(0.06))


def test_passes_use_the_sample_std_as_the_paper_prints_it() -> None:
    # Three passes getting 0, 0 and 1 of 3 objective questions: the paper's ".111±.192".
    summary = sample_mean_std([0.0, 0.0, 1 / 3])
    assert summary.render() == "0.111±0.192"
    assert sample_mean_std([0.4]) == MeanStd(mean=0.4, std=0.0, n=1)


def test_pooled_weighted_spreads_over_every_pass_of_every_script() -> None:
    # Script A (weight 1): passes 0.2, 0.4; script B (weight 3): passes 0.6, 0.6.
    pooled = pooled_weighted([[0.2, 0.4], [0.6, 0.6]], [1, 3])
    assert pooled.mean == pytest.approx((0.2 + 0.4 + 3 * 1.2) / 8)  # 0.525
    variance = (0.325**2 + 0.125**2 + 6 * 0.075**2) / 8
    assert pooled.std == pytest.approx(math.sqrt(variance))
    assert pooled.n == 4


def test_a_zero_weight_leaves_its_value_out_and_weights_need_not_be_whole() -> None:
    assert weighted_mean([1.0, 5.0], [0, 1]) == 5.0
    assert weighted_std([1.0, 5.0], [0, 1]) == 0.0
    assert weighted_mean([1.0, 5.0], [0.25, 0.75]) == 4.0  # normalised: they sum to 1


@pytest.mark.parametrize(("call", "message"), [
    (partial(weighted_mean, [1.0], [1, 2]), "1 values but 2 weights"),
    (partial(weighted_std, [], []), "no values to average"),
    (partial(weighted_mean, [1.0, 2.0], [0, 0]),
     "weights must be non-negative and not all zero"),
    (partial(weighted_mean, [1.0, 2.0], [-1, 2]),
     "weights must be non-negative and not all zero"),
    (partial(sample_mean_std, []), "no values to average"),
    (partial(pooled_weighted, [[1.0, 2.0]], [1, 2]), "1 groups but 2 weights"),
])
def test_bad_input_is_refused_with_what_is_wrong(call: Callable[[], object],
                                                 message: str) -> None:
    with pytest.raises(ValueError) as raised:
        call()
    assert str(raised.value) == message


VOTES = [Vote(voter="A", target="M"), Vote(voter="B", target="M"), Vote(voter="C", target="A"),
         Vote(voter="M", target="A"), Vote(voter="D", target=None)]


def test_identification_accuracy_is_the_share_of_votes_on_the_murderer() -> None:
    assert identification(VOTES, {"M"}).accuracy == pytest.approx(2 / 4)
    assert identification(VOTES, {"M"}, murderers_vote=False).accuracy == pytest.approx(2 / 3)
    assert identification(VOTES, {"M"}, abstentions=True).accuracy == pytest.approx(2 / 5)
    assert identification([], {"M"}).accuracy == 0.0


def test_culprit_rank_with_ties_and_mean_reciprocal_rank() -> None:
    votes = {"A": 3, "M": 2, "B": 2}
    assert culprit_rank(votes, {"M"}) == 2
    assert culprit_rank(votes, {"M"}, ties="pessimistic") == 3
    assert culprit_rank({"A": 3}, {"M"}) is None
    assert culprit_rank({"A": 3}, {"M"}, candidates=["A", "M", "B"], ties="pessimistic") == 3
    assert culprit_rank(votes_received(VOTES), {"M", "A"}) == 1  # two culprits: the best placed counts
    assert mean_reciprocal_rank([2, 1, None]) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        mean_reciprocal_rank([])


def test_the_culprit_rank_and_identification_name_the_victim_of_a_single_vote(
        tmp_path: Path) -> None:
    """A single vote on the murderer is about the script's victims: it is named, not "-"."""
    import asyncio

    from jubensha.eval.registry import MetricContext, get_metric
    from jubensha.runlog.folder import read_run
    from jubensha.scripts import find_script
    from tests.eval.postgame_helpers import play

    run = read_run(play(tmp_path / "run"))
    script = find_script("lighthouse-keeper")
    [victim] = [v.name for v in script.victims]
    for name in ("culprit-rank", "identification"):
        result = asyncio.run(get_metric(name).compute(MetricContext(script=script, run=run)))
        keyed = getattr(result, "ranks", None) or getattr(result, "victims", {})
        assert list(keyed) == [victim], name
        assert result.tables()[0].rows[0][0] == victim
