"""Every metric of the four papers, each a function of (script, run log, model).

A metric is an async function of a ``MetricContext`` returning a ``MetricResult``,
registered by name with ``@metric(...)``; ``get_metric`` and ``load_metrics`` find them.
Those names come from here; the metric modules are reached by name (``jubensha eval
METRIC``) and are internal. docs/architecture.md shows the metric contract.
"""

from jubensha.eval.registry import (
    MetricContext,
    MetricSpec,
    UnknownMetric,
    get_metric,
    load_metrics,
    metric,
)
from jubensha.eval.report import MetricResult, ResultTable

__all__ = [
    "MetricContext",
    "MetricResult",
    "MetricSpec",
    "ResultTable",
    "UnknownMetric",
    "get_metric",
    "load_metrics",
    "metric",
]
