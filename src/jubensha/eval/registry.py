"""Metric names for ``jubensha eval METRIC RUN_DIR``.

A metric is an async function of one ``MetricContext`` (the script, the run as read back,
and the models it may need) returning a ``MetricResult``. Modules register their metrics
with ``@metric(...)``, which also names the class that reads the metric's entry of an options
file; ``load_metrics()`` imports the modules that hold them (``METRICS`` is a
``jubensha.registry.Registry`` filled by importing ``METRIC_MODULES``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from jubensha.eval.report import MetricResult
from jubensha.llm.base import Embedder, Model
from jubensha.llm.calls import CallLog
from jubensha.llm.wrappers import MemoryCache, SqliteCache
from jubensha.registry import Registry, UnknownName, importing
from jubensha.runlog.folder import RunLog
from jubensha.scripts.model import Script

Need = Literal["judge", "embedder"]
METRIC_MODULES = (
    "jubensha.eval.similarity",
    "jubensha.eval.vote_metrics",
    "jubensha.eval.mirage",
    "jubensha.eval.whodunit",
    "jubensha.eval.wellplay_game",
    "jubensha.eval.factual",
    "jubensha.eval.inferential",
    "jubensha.eval.revote",
    "jubensha.eval.audit_report",
    "jubensha.eval.self_disclosure",
)
"""Modules whose import registers metrics; later metric modules add themselves here."""


@dataclass
class MetricContext:
    """Everything a metric may read. ``judge`` and ``embedder`` are None unless asked for."""

    script: Script
    run: RunLog
    judge: Model | None = None
    embedder: Embedder | None = None
    samples: int = 3
    options: dict[str, Any] = field(default_factory=dict)
    calls: CallLog | None = None
    """Where the metric's own model calls (judges, post-game answers) are logged; the
    command logs them to ``RUN_DIR/eval/calls.jsonl``. None: not logged."""
    cache: MemoryCache | SqliteCache | None = None
    """Replies to those calls, kept so that evaluating a run again repeats no call
    (``RUN_DIR/eval/cache.sqlite`` from the command). None: no cache."""
    answerer: Model | None = None
    """The model every seat answers post-game questions with; None: each seat's own model
    as ``meta.json`` names it (``eval.judge.seat_model``)."""
    seat_client: Callable[[str], Model] | None = None
    """Model spec → the client a seat's own model answers with, served where the game was
    (a batch passes its endpoints); None: where the run's provenance says it played."""


MetricFunction = Callable[[MetricContext], Awaitable[MetricResult]]
Applies = Callable[[Script, RunLog], str | None]
"""Why a metric cannot score this run (e.g. "no trust ratings"), or None when it can."""


@dataclass(frozen=True)
class MetricSpec:
    name: str
    summary: str
    source: str
    """Paper and section the metric comes from."""
    compute: MetricFunction
    needs: frozenset[Need] = frozenset()
    optional: frozenset[Need] = frozenset()
    """Models the metric uses when given and skips parts of without."""
    applies: Applies | None = None
    """``jubensha eval all`` skips the metric, saying why, when this returns a reason."""
    options: type[BaseModel] | None = None
    """The class that reads the metric's entry of an options file (``--options``, a batch
    spec's ``metric_options``), so that a wrong entry is refused when the file is read."""
    options_key: str = ""
    """That entry's key; "" is the metric's name (metrics of one family share a key)."""
    paper_judge: str = ""
    """Where its paper says a model judged it ("" when none did): a game played with that
    paper's preset is never scored by it without a judge model (no silent substitution)."""
    paper: str = ""
    """The preset of the paper the metric comes from (``paper:mirage``); "" for none."""

    def judged_under(self, preset: str | None) -> bool:
        """Whether the paper of ``preset`` scored this metric with a model judge (another
        paper's preset asks nothing of it: PLAYER* used no judge, whatever ThinkThrice did)."""
        return bool(self.paper_judge) and preset is not None and self.paper == preset

    @property
    def options_entry(self) -> str:
        return self.options_key or self.name


class UnknownMetric(UnknownName):
    """A metric nobody registered; the message lists the known ones."""


def _unknown_metric(name: str, known: list[str]) -> UnknownMetric:
    return UnknownMetric(f"unknown metric {name!r}; known: {', '.join(sorted(known))}")


METRICS: Registry[MetricSpec] = Registry(unknown=_unknown_metric,
                                         sources=[importing(*METRIC_MODULES)])


def metric(name: str, summary: str, source: str, needs: tuple[Need, ...] = (),
           optional: tuple[Need, ...] = (), applies: Applies | None = None,
           options: type[BaseModel] | None = None, options_key: str = "",
           paper_judge: str = "", paper: str = "") -> Callable[[MetricFunction], MetricFunction]:
    """Register ``compute`` under ``name``; a second registration of a name is an error."""
    def register(compute: MetricFunction) -> MetricFunction:
        if METRICS.registered(name):
            if METRICS.get(name).compute is compute:
                return compute  # the same function again: its module imported once more
            raise ValueError(f"metric {name!r} is registered twice")
        METRICS.put(name, MetricSpec(name, summary, source, compute, frozenset(needs),
                                     frozenset(optional), applies, options, options_key,
                                     paper_judge, paper))
        return compute
    return register


def options_problems(data: dict[str, Any]) -> list[tuple[str, str]]:
    """``(field, problem)`` for every entry of ``data`` that no metric reads as given: a
    key no metric knows, an option of a metric that takes none, a metric named where its
    family's block is read, and whatever a metric's options class refuses (a key it does
    not know included); never ignored in silence."""
    specs = load_metrics()
    readers = {spec.options_entry: spec.options for spec in specs.values()
               if spec.options is not None}
    problems = []
    for key, value in data.items():
        model = readers.get(key)
        if model is None:
            problems += _unread(str(key), value, specs, sorted(readers))
            continue
        try:
            model.model_validate(value)
        except ValidationError as exc:
            problems += [(".".join(str(p) for p in (key, *err["loc"])), err["msg"])
                         for err in exc.errors()]
    return problems


def _unread(key: str, value: Any, specs: dict[str, MetricSpec],
            readers: list[str]) -> list[tuple[str, str]]:
    """Why the entry ``key`` of an options file has no reader."""
    spec = specs.get(key)
    if spec is None:
        known = ", ".join(readers)
        return [(key, f"no metric reads options under {key!r}; blocks that take options: "
                      + known)]
    if spec.options is not None:
        return [(key, f"metric {key} reads its options under {spec.options_entry!r}")]
    if not value:
        return []
    names = sorted(map(str, value)) if isinstance(value, dict) else []
    return [(f"{key}.{names[0]}" if names else key,
             f"metric {key} takes no options" + (f" (given: {', '.join(names)})"
                                                 if names else ""))]


def load_metrics() -> dict[str, MetricSpec]:
    """Every registered metric by name (imports the metric modules once)."""
    return dict(sorted(METRICS.items()))


def get_metric(name: str) -> MetricSpec:
    return METRICS.get(name)
