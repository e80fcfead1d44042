"""A batch's report: games grouped by the civilians' architecture × model (× script).

Per group: games, the civilian win rate and the murderer identification (the mean over
games of each game's share of counted ballots on a culprit: ``runs.game_scores``, the one
definition the comparisons and the HTML page use too), each with its 95% interval where a
method holds (``runs.statistics``), failed games, model calls, tokens, cost and duration,
and the mean of every real-valued number the post-game metrics wrote, per metric and way
of scoring it, with the share of games on which the metric failed (never averaged in).
Data first (``BatchReport``), rendered as tables (the eval package's ``ResultTable``:
terminal or Markdown), JSON, or CSV whose columns are the JSON's keys joined by dots.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from jubensha.eval.report import ResultTable, markdown_table, number
from jubensha.runs.arena import label
from jubensha.runs.game_scores import identification, win
from jubensha.runs.game_scores import outcomes as game_outcomes
from jubensha.runs.index import GameRow
from jubensha.runs.provenance import check_pooled, served_apart, summary
from jubensha.runs.statistics import Estimate, estimate
from jubensha.terminal import plain_text

ReportFormat = Literal["table", "md", "csv", "json"]
MATRIX_NOTE = ("k/n: the civilians won k of the n finished games in which these murderers "
               "met these civilians.")
CI_NOTE = ("mean [ci_low, ci_high]: the 95% interval of the mean over finished games, by "
           "the method named (cluster bootstrap from 10 scripts; else a bootstrap within "
           "scripts from 10 games, each script with 2 or more; never for values all equal; "
           "else no interval, saying why; docs/experiments.md). "
           "failed: games on which the metric failed (most of its answers failed): no "
           "value, never averaged in. failed_answers: of the answers the metric asked on "
           "those games, the ones that failed (counted wrong, or left out, by its rule).")
RATE_NOTE = ("Win rate: finished games with a winner (a script that records no solution "
             "has none), value (k/n); identification: the mean over finished games of each "
             "game's share of counted ballots on a culprit. Intervals: 95%, by the method "
             "that holds (Wilson score for the win rate below 10 scripts or at 0 or 1; "
             "docs/experiments.md). Cost: finished games only (– while no price is known).")


def rate_cell(found: Estimate | None, counted: bool = False) -> str:
    """``0.500 (2/4)`` or ``0.625 (n=4)``, the interval on a second line; – without games."""
    if found is None:
        return "– (0 games)"
    count = f"{round(found.mean * found.n)}/{found.n}" if counted else f"n={found.n}"
    interval = (f"[{found.ci_low:.3f}, {found.ci_high:.3f}]"
                if found.ci_low is not None and found.ci_high is not None
                else f"no interval: {found.why}")
    return f"{found.mean:.3f} ({count})\n{interval}"


FAKE_MODEL = "scripted"


def fake_warning(rows: Iterable[GameRow]) -> str | None:
    """The warning every table built on the scripted fake starts with; None without it."""
    games = sum(FAKE_MODEL in models_of(row) for row in rows)
    if not games:
        return None
    return (f"warning: {games} game(s) here were played by the scripted fake model "
            f"({FAKE_MODEL}): their scores measure the pipeline, not a model")


def models_of(row: GameRow) -> set[str]:
    """Every model of a game's seats (a model spec's kind: ``scripted``, ``openai``...)."""
    specs = set(row.model.split("+"))
    seats = row.settings.get("seats") if isinstance(row.settings, dict) else None
    if isinstance(seats, dict):
        specs |= {str(p.get("model", "")) for p in seats.values() if isinstance(p, dict)}
    return {spec.split(":")[0] for spec in specs if spec}


class SideUse(BaseModel):
    """One side's model use per finished game, and its finished games' cost."""

    calls_per_game: float
    tokens_per_game: float
    cost_usd: float | None = None


class MetricSummary(BaseModel):
    """One metric over a group's finished games: how it was scored, the games it was
    scored or failed on, and the mean of each of its numbers over the scored ones."""

    metric: str
    scoring: str = ""
    games: int = Field(description="Finished games the metric was scored or failed on.")
    failed: int = Field(0, description="Of those, the games on which it failed: no value.")
    answers: int = Field(0, description="The answers its values rest on, over those games.")
    failed_answers: int = Field(0, description=(
        "Of those answers, the ones that failed (counted wrong, or left out, by the metric's "
        "rule) on games where it still has a value and on games where it failed."))
    values: dict[str, Estimate] = Field(default_factory=dict)

    def failure_share(self) -> str:
        return f"{self.failed}/{self.games}"

    def answer_failure_share(self) -> str:
        return f"{self.failed_answers}/{self.answers}" if self.answers else "–"


class GroupStats(BaseModel):
    architecture: str
    model: str
    murderers: str | None = Field(None, description="The murderers' entrant (ARCH@MODEL) "
                                  "where it is not the civilians' (an arena, a fixed murderer).")
    script: str | None = None
    games: int
    finished: int
    failed: int
    unfinished: int = Field(description="Pending or running.")
    civilian_wins: Estimate | None = Field(None, description="Per finished game with a "
                                           "winner, 1 when the civilians won.")
    identification: Estimate | None = Field(None, description="Per finished game with a "
                                            "counted ballot, its share on a culprit.")
    failures_per_game: float | None = Field(
        None, description="Failure events (failed calls answered by a fallback) per finished game.")
    calls_per_game: float | None = None
    tokens_per_game: float | None = None
    cost_usd: float | None = Field(None, description="Finished games' cost.")
    spent_cost_usd: float | None = Field(None, description="Every attempt's cost.")
    mean_duration_s: float | None = None
    metrics: dict[str, MetricSummary] = Field(default_factory=dict, description=(
        "Per metric (and way of scoring it, when the games differ in it), its numbers."))
    sides: dict[str, SideUse] = Field(default_factory=dict, description=(
        "Model use of the civilians' and the murderers' seats."))

    @property
    def label(self) -> str:
        against = f"vs {self.murderers}" if self.murderers else None
        return " / ".join(p for p in (self.architecture, self.model, against, self.script)
                          if p)


class MatrixCell(BaseModel):
    """Finished games of one murderers' entrant against one civilians' entrant."""

    murderers: str
    civilians: str
    civilian_wins: int
    games: int


class FailedGame(BaseModel):
    name: str
    attempts: int
    error: str


class BatchReport(BaseModel):
    batch: str = ""
    warning: str | None = Field(None, description="Said first: the games were played by "
                                "the scripted fake (fake_warning).")
    games: int
    by_script: bool = False
    groups: list[GroupStats]
    failed: list[FailedGame] = Field(default_factory=list)
    matrix: list[MatrixCell] = Field(default_factory=list, description=(
        "Wins of each murderers' entrant against each civilians' entrant (arenas)."))
    presets: list[str] = Field(default_factory=list, description=(
        "The paper presets the games played, each with what was overridden."))
    provenance: list[str] = Field(default_factory=list, description=(
        "What the games were played with (code, prompts, models), and what differs when "
        "games of different provenance were pooled on request (runs.provenance)."))

    @property
    def against(self) -> bool:
        """Whether some games' murderers are another entrant than their civilians."""
        return any(g.murderers for g in self.groups)

    def _keys(self, group: GroupStats) -> list[str]:
        return [group.architecture, group.model,
                *([group.murderers or "(as civilians)"] if self.against else []),
                *([group.script or ""] if self.by_script else [])]

    def tables(self) -> list[ResultTable]:
        keys = ["architecture", "model", *(["murderers"] if self.against else []),
                *(["script"] if self.by_script else [])]
        main = ResultTable(
            title=f"Batch {self.batch}: civilians' architecture × model".strip(),
            columns=[*keys, *MAIN_COLUMNS],
            rows=[[*self._keys(g), str(g.games), str(g.finished), str(g.failed),
                   rate_cell(g.civilian_wins, counted=True), rate_cell(g.identification),
                   number(g.failures_per_game, 2), number(g.calls_per_game, 1),
                   number(g.tokens_per_game, 0), number(g.cost_usd, 4),
                   number(g.mean_duration_s, 2)] for g in self.groups],
            notes=[RATE_NOTE, *self.presets, *self.provenance])
        tables = [main]
        metric_rows = [row for g in self.groups for found in g.metrics.values()
                       for row in self._metric_rows(g, found)]
        if metric_rows:
            tables.append(ResultTable(
                title="Post-game metrics (mean over finished games)",
                columns=[*keys, "metric", "scoring", "value", "mean [ci_low, ci_high]",
                         "n", "method", "failed", "failed_answers"],
                rows=metric_rows, notes=[CI_NOTE]))
        if any(g.sides for g in self.groups):
            tables.append(self._sides_table(keys))
        if self.matrix:
            tables.append(self._matrix_table())
        if self.failed:
            tables.append(ResultTable(
                title="Failed games (a resume plays them again)",
                columns=["game", "attempts", "error"],
                rows=[[f.name, str(f.attempts), f.error.splitlines()[0] if f.error else ""]
                      for f in self.failed]))
        return tables

    def _metric_rows(self, group: GroupStats, found: MetricSummary) -> list[list[str]]:
        """A row per value of the metric; one row of dashes when it failed on every game."""
        first = [*self._keys(group), found.metric, found.scoring or "–"]
        shares = [found.failure_share(), found.answer_failure_share()]
        if not found.values:
            return [[*first, "–", "–", "0", "–", *shares]]
        return [[*first, name, mean.render(), str(mean.n), mean.method, *shares]
                for name, mean in found.values.items()]

    def _sides_table(self, keys: list[str]) -> ResultTable:
        def cells(use: SideUse | None) -> list[str]:
            return ([number(use.calls_per_game, 1), number(use.tokens_per_game, 0),
                     number(use.cost_usd, 4)] if use else ["–"] * 3)

        return ResultTable(
            title="Model use by side (per finished game; cost of the finished games)",
            columns=[*keys, *(f"sides.{side}.{key}" for side in ("civilians", "murderers")
                              for key in SideUse.model_fields)],
            rows=[[*self._keys(g), *cells(g.sides.get("civilians")),
                   *cells(g.sides.get("murderers"))] for g in self.groups if g.sides])

    def _matrix_table(self) -> ResultTable:
        murderers = list(dict.fromkeys(c.murderers for c in self.matrix))
        civilians = list(dict.fromkeys(c.civilians for c in self.matrix))
        found = {(c.murderers, c.civilians): c for c in self.matrix}
        return ResultTable(
            title="Civilian wins: murderers (rows) × civilians (columns), finished games",
            columns=["murderers \\ civilians", *civilians],
            rows=[[m, *(f"{found[m, c].civilian_wins}/{found[m, c].games}"
                        if (m, c) in found else "–" for c in civilians)] for m in murderers],
            notes=[MATRIX_NOTE])

    def flat(self) -> list[dict[str, Any]]:
        """One record per group (the CSV rows): its JSON with nested keys joined by dots,
        so a CSV column and a JSON key have the same name; the columns of a group's own
        numbers are the same in every report, whether a number is there or not (an empty
        cell), and those of the metrics are the ones the batch scored."""
        return [flatten(_filled(g.model_dump(mode="json", exclude_none=False)))
                for g in self.groups]

    def comments(self) -> list[str]:
        """What the CSV says above its header: the warning, the presets and the provenance
        (with the ``Mixed provenance`` lines of a pooling on request)."""
        return [*([self.warning] if self.warning else []), *self.presets, *self.provenance]


MAIN_COLUMNS = ["games", "finished", "failed", "civilian_wins", "identification",
                "failures_per_game", "calls_per_game", "tokens_per_game", "cost_usd",
                "mean_duration_s"]
"""The main table's columns after the group's keys: the JSON's keys."""
EMPTY_ESTIMATE = {key: None for key in Estimate.model_fields}
EMPTY_SIDES = {side: {key: None for key in SideUse.model_fields}
               for side in ("civilians", "murderers")}


def _filled(group: dict[str, Any]) -> dict[str, Any]:
    """A group's JSON with an absent estimate or side as its fields, each empty."""
    for key in ("civilian_wins", "identification"):
        if group.get(key) is None:
            group[key] = dict(EMPTY_ESTIMATE)
    group["sides"] = {side: group.get("sides", {}).get(side) or dict(empty)
                      for side, empty in EMPTY_SIDES.items()}
    return group


def flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` → ``{"a.b": 1}`` (lists are kept whole)."""
    found: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict) and value:
            found |= flatten(value, f"{prefix}{key}.")
        elif not isinstance(value, dict):
            found[f"{prefix}{key}"] = value
    return found


def batch_title(folder: Path) -> str:
    """What every report calls a batch: its folder's name (the spec's name is only the
    folder's default), so `runs batch`, `runs report` and the HTML page agree."""
    return folder.resolve().name


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _cost(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def murderers_of(row: GameRow) -> str | None:
    """The murderers' entrant of a game where it is not the civilians' (None otherwise)."""
    settings = row.settings if isinstance(row.settings, dict) else {}
    architecture, model = settings.get("murderer_architecture"), settings.get("murderer_model")
    if not architecture and not model:
        return None
    return label(str(architecture or row.architecture), str(model or row.model))


def side_use(rows: list[GameRow], side: str) -> SideUse | None:
    spends = [r.sides[side] for r in rows if side in r.sides]
    if not spends:
        return None
    return SideUse(calls_per_game=sum(s.calls for s in spends) / len(spends),
                   tokens_per_game=sum(s.tokens for s in spends) / len(spends),
                   cost_usd=_cost(s.cost_usd for s in spends))


def matrix(rows: list[GameRow]) -> list[MatrixCell]:
    """Civilian wins per (murderers' entrant, civilians' entrant) over finished games."""
    cells: dict[tuple[str, str], MatrixCell] = {}
    for row in rows:
        if row.status != "finished":
            continue
        civilians = label(row.architecture, row.model)
        murderers = murderers_of(row) or civilians
        cell = cells.setdefault((murderers, civilians), MatrixCell(
            murderers=murderers, civilians=civilians, civilian_wins=0, games=0))
        cell.games += 1
        cell.civilian_wins += row.winner == "civilians"
    return list(cells.values())


def presets_of(rows: list[GameRow]) -> list[str]:
    """'Preset paper:player (docs/presets.md); overridden: ...' per distinct use."""
    found: dict[str, None] = {}
    for row in rows:
        preset = row.settings.get("preset") if isinstance(row.settings, dict) else None
        if isinstance(preset, dict) and preset.get("name"):
            changed = preset.get("overridden") or {}
            found[f"Preset {preset['name']} (the paper's settings, docs/presets.md)" + (
                "; overridden: " + ", ".join(f"{k} = {v}" for k, v in changed.items())
                if changed else "")] = None
    return list(found)


def metric_summaries(done: list[GameRow]) -> dict[str, MetricSummary]:
    """Every metric of the finished games, per way of scoring it: failures counted, the
    real values of the games it scored averaged with their intervals."""
    outcomes = [(row, metric, outcome) for row in done
                for metric, outcome in game_outcomes(row).items()]
    scorings: dict[str, set[str]] = {}
    for _, metric, outcome in outcomes:
        if not outcome.failed:
            scorings.setdefault(metric, set()).add(outcome.scoring)
    found: dict[str, MetricSummary] = {}
    values: dict[str, dict[str, list[tuple[float, str]]]] = {}
    for row, metric, outcome in outcomes:
        several = len(scorings.get(metric, ())) > 1
        key = f"{metric} · {outcome.scoring}" if several and not outcome.failed else metric
        summary = found.setdefault(key, MetricSummary(
            metric=metric, scoring="" if outcome.failed and several else outcome.scoring,
            games=0))
        summary.games += 1
        summary.failed += outcome.failed
        summary.answers += outcome.answers
        summary.failed_answers += outcome.failed_answers
        for name, value in outcome.values.items():
            values.setdefault(key, {}).setdefault(name, []).append((value, row.script))
    for key, numbers in values.items():
        found[key].values = {name: estimate([x for x, _ in v], [c for _, c in v])
                             for name, v in numbers.items()}
    return dict(sorted(found.items()))


def _estimate(values: list[tuple[float, str]], trials: bool = False) -> Estimate | None:
    return (estimate([x for x, _ in values], [c for _, c in values], trials) if values
            else None)


def group_stats(rows: list[GameRow], architecture: str, model: str,
                script: str | None = None, murderers: str | None = None) -> GroupStats:
    """The numbers of one group of games."""
    done = [r for r in rows if r.status == "finished"]
    wins = [(w, r.script) for r in done if (w := win(r)) is not None]
    shares = [(i, r.script) for r in done if (i := identification(r)) is not None]
    sides = {side: use for side in ("civilians", "murderers")
             if (use := side_use(done, side)) is not None}
    return GroupStats(
        architecture=architecture, model=model, murderers=murderers, script=script,
        games=len(rows), sides=sides,
        finished=len(done), failed=sum(r.status == "failed" for r in rows),
        unfinished=sum(r.status in ("pending", "running") for r in rows),
        civilian_wins=_estimate(wins, trials=True), identification=_estimate(shares),
        failures_per_game=_mean([r.failures or 0 for r in done]),
        calls_per_game=_mean([r.usage.calls for r in done]),
        tokens_per_game=_mean([r.usage.tokens for r in done]),
        cost_usd=_cost(r.usage.cost_usd for r in done),
        spent_cost_usd=_cost(r.spent.cost_usd for r in rows),
        mean_duration_s=_mean([r.duration_s or 0.0 for r in done]),
        metrics=metric_summaries(done))


def build_report(rows: list[GameRow], *, by_script: bool = False,
                 batch: str = "", allow_mixed: bool = False) -> BatchReport:
    """Group ``rows`` (in the batch's order) and compute each group's numbers; games of
    different provenance are pooled only when ``allow_mixed`` (else ``MixedProvenance``)."""
    mixed = check_pooled(rows, allow_mixed)
    rows = served_apart(rows)
    groups: dict[tuple[str, str, str | None, str | None], list[GameRow]] = {}
    for row in sorted(rows, key=lambda r: r.position):
        key = (row.architecture, row.model, row.script if by_script else None,
               murderers_of(row))
        groups.setdefault(key, []).append(row)
    stats = [group_stats(members, arch, model, script, against)
             for (arch, model, script, against), members in groups.items()]
    cells = matrix(rows) if any(g.murderers for g in stats) else []
    return BatchReport(batch=batch, games=len(rows), by_script=by_script,
                       warning=fake_warning(rows), groups=stats, matrix=cells,
                       presets=presets_of(rows), provenance=[*summary(rows), *mixed],
                       failed=[FailedGame(name=r.name, attempts=r.attempts, error=r.error or "")
                               for r in rows if r.status == "failed"])


def render(report: BatchReport, fmt: ReportFormat) -> str:
    """The report as Markdown, CSV or JSON text (``table`` is drawn by the caller),
    without escape sequences (``terminal.plain_text``): names in it come from scripts."""
    return plain_text(_render(report, fmt))


def _render(report: BatchReport, fmt: ReportFormat) -> str:
    if fmt == "json":
        return report.model_dump_json(indent=2)
    if fmt == "csv":
        records = report.flat()
        columns = list(dict.fromkeys(k for record in records for k in record))
        out = io.StringIO()
        for line in report.comments():
            out.write(f"# {line}\n")
        writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(records)
        return out.getvalue()
    warning = [f"**{report.warning}**\n"] if report.warning else []
    return "\n".join([*warning, *(markdown_table(table) for table in report.tables())])
