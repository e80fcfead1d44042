"""A metric names the class that reads its block of an options file on its spec; a block is
checked by that class when the file is read, and a block or key no metric reads is an error
naming it."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, Field

from jubensha.eval import registry
from jubensha.eval.registry import MetricContext, load_metrics, metric, options_problems
from jubensha.eval.report import MetricResult
from jubensha.registry import Registry


class KnotOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    loops: int = Field(2, ge=1)


@pytest.fixture
def metrics(monkeypatch: pytest.MonkeyPatch) -> Registry[registry.MetricSpec]:
    """A registry of the test's own metrics, in place of the real one."""
    table: Registry[registry.MetricSpec] = Registry()
    monkeypatch.setattr(registry, "METRICS", table)
    return table


async def _knot(context: MetricContext) -> MetricResult:
    raise AssertionError("never computed here")


async def _bow(context: MetricContext) -> MetricResult:
    raise AssertionError("never computed here")


def test_a_metrics_options_class_checks_its_block(metrics: Registry[registry.MetricSpec]
                                                  ) -> None:
    metric("knot", "a test metric", "nowhere", options=KnotOptions)(_knot)
    assert load_metrics()["knot"].options is KnotOptions
    assert options_problems({"knot": {"loops": 0, "colour": "red"}, "other": 5}) == [
        ("knot.loops", "Input should be greater than or equal to 1"),
        ("knot.colour", "Extra inputs are not permitted"),
        ("other", "no metric reads options under 'other'; blocks that take options: knot")]
    assert options_problems({"knot": {"loops": 3}}) == []


def test_metrics_of_a_family_share_one_block(metrics: Registry[registry.MetricSpec]) -> None:
    metric("knot-a", "a test metric", "nowhere", options=KnotOptions, options_key="knot")(_knot)
    metric("knot-b", "a test metric", "nowhere", options=KnotOptions, options_key="knot")(_bow)
    metric("plain", "no options", "nowhere")(_bow)
    assert [spec.options_entry for spec in load_metrics().values()] == ["knot", "knot", "plain"]
    assert options_problems({"knot-a": {"loops": 0}, "plain": {"x": 1}}) == [
        ("knot-a", "metric knot-a reads its options under 'knot'"),
        ("plain.x", "metric plain takes no options (given: x)")]
    assert options_problems({"plain": {}}) == []
    assert options_problems({"knot": {"loops": 0}}) == [
        ("knot.loops", "Input should be greater than or equal to 1")]


def test_every_block_of_the_real_metrics_has_one_reader() -> None:
    readers: dict[str, set[type[BaseModel]]] = {}
    for spec in load_metrics().values():
        if spec.options is not None:
            readers.setdefault(spec.options_entry, set()).add(spec.options)
    assert {key: len(classes) for key, classes in readers.items()} == {
        key: 1 for key in ("audit", "factual", "inferential", "mirage", "revote",
                           "self-disclosure", "similarity", "wellplay", "whodunit")}


def test_an_option_the_real_metrics_do_not_know_is_refused_naming_metric_and_key() -> None:
    assert options_problems({"culprit-rank": {"bogus_option": 7}}) == [
        ("culprit-rank.bogus_option",
         "metric culprit-rank takes no options (given: bogus_option)")]
    assert options_problems({"similarity": {"bogus_option": 7}}) == [
        ("similarity.bogus_option", "Extra inputs are not permitted")]
