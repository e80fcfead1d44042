"""A batch's report: games grouped by the civilians' architecture × model (× script).

Per group: games, civilian win rate and murderer identification accuracy (the share of
counted ballots that name a culprit, ``eval.vote_metrics``) with 95% Wilson intervals,
failed games, model calls, tokens, cost and duration, and the mean of every number the
post-game metrics wrote. Data first (``BatchReport``), rendered as tables (the eval
package's ``ResultTable``: terminal or Markdown), CSV or JSON.

The win rate counts games; the identification interval counts ballots, which are not
independent within a game, so that interval is narrower than the games alone justify.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field

from jubensha.eval.report import ResultTable, markdown_table, number
from jubensha.runs.index import GameRow

ReportFormat = Literal["table", "md", "csv", "json"]
Z95 = 1.959963984540054
"""The standard normal quantile of 0.975."""
RATE_NOTE = ("Rates: value (k/n) [95% Wilson interval]. Win rate over finished games with a "
             "winner (a script that records no solution has none); "
             "identification over their counted ballots (ballots of one game are not "
             "independent). Cost: finished games only (– while no price is known).")


class Interval(BaseModel):
    """``k`` of ``n`` with the rate and its Wilson score interval (``None`` when n = 0)."""

    k: int
    n: int
    rate: float | None = None
    low: float | None = None
    high: float | None = None

    def render(self) -> str:
        if self.rate is None:
            return "– (0/0)"
        assert self.low is not None and self.high is not None
        return f"{self.rate:.3f} ({self.k}/{self.n})\n[{self.low:.3f}, {self.high:.3f}]"


def wilson(k: int, n: int, z: float = Z95) -> Interval:
    """Wilson's score interval for ``k`` successes in ``n`` trials (Wilson 1927): unlike
    the normal approximation it stays inside [0, 1] and is sensible for small ``n`` and
    rates near 0 or 1, which is what batches of a few seeds produce."""
    if not 0 <= k <= n:
        raise ValueError(f"wilson: need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return Interval(k=0, n=0)
    rate = k / n
    denominator = 1 + z * z / n
    centre = (rate + z * z / (2 * n)) / denominator
    half = z * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n)) / denominator
    # exact at the ends: 0/n has low 0 and n/n high 1 (rounding can leave 3e-17 below)
    return Interval(k=k, n=n, rate=rate, low=0.0 if k == 0 else max(0.0, centre - half),
                    high=1.0 if k == n else min(1.0, centre + half))


class Mean(BaseModel):
    mean: float
    n: int


class GroupStats(BaseModel):
    architecture: str
    model: str
    script: str | None = None
    games: int
    finished: int
    failed: int
    unfinished: int = Field(description="Pending or running.")
    civilian_wins: Interval
    identification: Interval
    fallbacks_per_game: float | None = None
    calls_per_game: float | None = None
    tokens_per_game: float | None = None
    cost_usd: float | None = Field(None, description="Finished games' cost.")
    spent_cost_usd: float | None = Field(None, description="Every attempt's cost.")
    mean_duration_s: float | None = None
    metrics: dict[str, dict[str, Mean]] = Field(default_factory=dict)
    metric_errors: int = Field(0, description="Metrics that failed on a finished game "
                               "(skipped ones, e.g. not applicable, are not counted).")

    @property
    def label(self) -> str:
        return " / ".join(p for p in (self.architecture, self.model, self.script) if p)


class FailedGame(BaseModel):
    name: str
    attempts: int
    error: str


class BatchReport(BaseModel):
    batch: str = ""
    games: int
    by_script: bool = False
    groups: list[GroupStats]
    failed: list[FailedGame] = Field(default_factory=list)

    def tables(self) -> list[ResultTable]:
        keys = ["architecture", "model", *(["script"] if self.by_script else [])]
        main = ResultTable(
            title=f"Batch {self.batch}: civilians' architecture × model".strip(),
            columns=[*keys, "games", "finished", "failed", "civilian win rate",
                     "identification", "fallbacks/game", "calls/game", "tokens/game",
                     "cost $", "mean s"],
            rows=[[*_keys(g, self.by_script), str(g.games), str(g.finished), str(g.failed),
                   g.civilian_wins.render(), g.identification.render(),
                   number(g.fallbacks_per_game, 2), number(g.calls_per_game, 1),
                   number(g.tokens_per_game, 0), number(g.cost_usd, 4),
                   number(g.mean_duration_s, 2)] for g in self.groups],
            notes=[RATE_NOTE])
        tables = [main]
        metric_rows = [[*_keys(g, self.by_script), metric, name, number(mean.mean), str(mean.n)]
                       for g in self.groups for metric, numbers in g.metrics.items()
                       for name, mean in numbers.items()]
        if metric_rows:
            tables.append(ResultTable(
                title="Post-game metrics (mean over finished games)",
                columns=[*keys, "metric", "value", "mean", "games"], rows=metric_rows))
        if self.failed:
            tables.append(ResultTable(
                title="Failed games (a resume plays them again)",
                columns=["game", "attempts", "error"],
                rows=[[f.name, str(f.attempts), f.error.splitlines()[0] if f.error else ""]
                      for f in self.failed]))
        return tables

    def flat(self) -> list[dict[str, Any]]:
        """One flat record of raw numbers per group (the CSV rows)."""
        records = []
        for g in self.groups:
            record: dict[str, Any] = {"architecture": g.architecture, "model": g.model}
            if self.by_script:
                record["script"] = g.script
            record |= {"games": g.games, "finished": g.finished, "failed": g.failed,
                       "unfinished": g.unfinished}
            for name, interval in (("win", g.civilian_wins), ("ident", g.identification)):
                record |= {f"{name}_k": interval.k, f"{name}_n": interval.n,
                           f"{name}_rate": interval.rate, f"{name}_low": interval.low,
                           f"{name}_high": interval.high}
            record |= {"fallbacks_per_game": g.fallbacks_per_game,
                       "calls_per_game": g.calls_per_game, "tokens_per_game": g.tokens_per_game,
                       "cost_usd": g.cost_usd, "spent_cost_usd": g.spent_cost_usd,
                       "mean_duration_s": g.mean_duration_s}
            for metric, numbers in g.metrics.items():
                record |= {f"{metric}.{name}": mean.mean for name, mean in numbers.items()}
            records.append(record)
        return records


def _keys(group: GroupStats, by_script: bool) -> list[str]:
    return [group.architecture, group.model, *([group.script or ""] if by_script else [])]


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _cost(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def group_stats(rows: list[GameRow], architecture: str, model: str,
                script: str | None = None) -> GroupStats:
    """The numbers of one group of games."""
    done = [r for r in rows if r.status == "finished"]
    metrics: dict[str, dict[str, list[float]]] = {}
    errors = 0
    for row in done:
        for metric, numbers in row.metrics.items():
            errors += "error" in numbers
            for name, value in numbers.items():
                if isinstance(value, int | float) and not isinstance(value, bool):
                    metrics.setdefault(metric, {}).setdefault(name, []).append(value)
    return GroupStats(
        architecture=architecture, model=model, script=script, games=len(rows),
        finished=len(done), failed=sum(r.status == "failed" for r in rows),
        unfinished=sum(r.status in ("pending", "running") for r in rows),
        civilian_wins=wilson(sum(r.winner == "civilians" for r in done),
                             sum(r.winner in ("civilians", "murderers") for r in done)),
        identification=wilson(sum(r.votes_on_murderer or 0 for r in done),
                              sum(r.votes_counted or 0 for r in done)),
        fallbacks_per_game=_mean([r.fallbacks or 0 for r in done]),
        calls_per_game=_mean([r.usage.calls for r in done]),
        tokens_per_game=_mean([r.usage.tokens for r in done]),
        cost_usd=_cost(r.usage.cost_usd for r in done),
        spent_cost_usd=_cost(r.spent.cost_usd for r in rows),
        mean_duration_s=_mean([r.duration_s or 0.0 for r in done]),
        metrics={metric: {name: Mean(mean=sum(v) / len(v), n=len(v))
                          for name, v in sorted(numbers.items())}
                 for metric, numbers in sorted(metrics.items())},
        metric_errors=errors)


def build_report(rows: list[GameRow], *, by_script: bool = False,
                 batch: str = "") -> BatchReport:
    """Group ``rows`` (in the batch's order) and compute each group's numbers."""
    key: Callable[[GameRow], tuple[str, str, str | None]] = (
        lambda r: (r.architecture, r.model, r.script if by_script else None))
    groups: dict[tuple[str, str, str | None], list[GameRow]] = {}
    for row in sorted(rows, key=lambda r: r.position):
        groups.setdefault(key(row), []).append(row)
    return BatchReport(batch=batch, games=len(rows), by_script=by_script,
                       groups=[group_stats(members, *k) for k, members in groups.items()],
                       failed=[FailedGame(name=r.name, attempts=r.attempts, error=r.error or "")
                               for r in rows if r.status == "failed"])


def render(report: BatchReport, fmt: ReportFormat) -> str:
    """The report as Markdown, CSV or JSON text (``table`` is drawn by the caller)."""
    if fmt == "json":
        return report.model_dump_json(indent=2)
    if fmt == "csv":
        records = report.flat()
        columns = list(dict.fromkeys(k for record in records for k in record))
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(records)
        return out.getvalue()
    return "\n".join(markdown_table(table) for table in report.tables())
