"""A batch's report as one self-contained HTML page (``runs report BATCH --html FILE``).

The page holds the paper-style tables (script × method, mean ± std over games), the groups'
win rate and identification with their intervals, calls/tokens/cost per game, cost
against win rate with the Pareto front, the leaderboard, and a link to every game's
transcript. Plots are PNG images embedded as base64, the style is inline, there is no
script: the file opens offline, anywhere. Every text of the batch (script ids, names,
errors) is untrusted and escaped by Jinja's autoescaping; links are percent-encoded paths
relative to the page.
"""

from __future__ import annotations

import base64
import io
import os
import statistics
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from urllib.parse import quote

import jinja2
from matplotlib.figure import Figure

from jubensha.runlog.folder import TRANSCRIPT
from jubensha.runs.arena import label
from jubensha.runs.compare import Comparison, comparison_table
from jubensha.runs.game_scores import IDENTIFICATION, WIN, game_values
from jubensha.runs.index import GameRow
from jubensha.runs.plots import cost_figure, rates_figure, ratings_figure, tokens_figure
from jubensha.runs.ratings import leaderboard_table, rate
from jubensha.runs.report import BatchReport, GroupStats, batch_title, build_report, murderers_of
from jubensha.runs.statistics import estimate
from jubensha.terminal import plain_text

TEMPLATE = "report.html.j2"


@dataclass
class Cell:
    mean: float
    std: float | None
    n: int
    ci_low: float | None = None
    ci_high: float | None = None
    why: str = ""

    def render(self) -> str:
        spread = f" ± {self.std:.2f}" if self.std is not None else ""
        interval = (f" [{self.ci_low:.2f}, {self.ci_high:.2f}]"
                    if self.ci_low is not None and self.ci_high is not None
                    else f"; no interval: {self.why}")
        return f"{self.mean:.2f}{spread} (n={self.n}{interval})"


@dataclass
class PaperTable:
    """One score as script (rows) × method (columns), each cell mean ± std over games."""

    title: str
    scripts: list[str]
    methods: list[str]
    cells: dict[tuple[str, str], Cell]

    def cell(self, script: str, method: str) -> str:
        found = self.cells.get((script, method))
        return found.render() if found else "–"


def method(row: GameRow) -> str:
    """The civilians' entrant: what the papers' tables call the method."""
    return label(row.architecture, row.model)


def _cell(values: list[float], trials: bool) -> Cell:
    std = statistics.stdev(values) if len(values) > 1 else None
    found = estimate(values, trials=trials)
    return Cell(mean=found.mean, std=std, n=len(values), ci_low=found.ci_low,
                ci_high=found.ci_high, why=found.why)


def paper_tables(rows: list[GameRow]) -> list[PaperTable]:
    """Civilian win (0/1 per game), identification (a game's share of ballots on a
    culprit) and every post-game metric number, script × method over finished games."""
    done = [r for r in sorted(rows, key=lambda r: r.position) if r.status == "finished"]
    scripts = list(dict.fromkeys(r.script for r in done))
    methods = list(dict.fromkeys(method(r) for r in done))
    scores: dict[str, dict[tuple[str, str], list[float]]] = {}

    def add(title: str, row: GameRow, value: float) -> None:
        scores.setdefault(title, {}).setdefault((row.script, method(row)), []).append(value)

    titles = {WIN: "Civilian win rate", IDENTIFICATION: "Murderer identification"}
    for row in done:
        for name, value in game_values(row).items():
            add(titles.get(name, name.replace(".", ": ", 1)), row, value)
    return [PaperTable(title=title, scripts=scripts, methods=methods,
                       cells={key: _cell(values, title == titles[WIN])
                              for key, values in cells.items()})
            for title, cells in scores.items()]


def pareto_front(points: list[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point dominates (cost no higher and score no lower,
    one of them strictly): the choices worth making at some budget."""
    front = []
    for i, (cost, score) in enumerate(points):
        if not any((c <= cost and s >= score) and (c, s) != (cost, score)
                   for c, s in points):
            front.append(i)
    return front


def cost_axis(report: BatchReport) -> tuple[str, list[tuple[int, float, float]]]:
    """What the cost plot's x axis is (dollars per finished game when every group has a
    price, else tokens per game) and each group's (index, cost, win rate)."""
    groups = report.groups
    priced = all(g.cost_usd is not None and g.finished for g in groups)
    points = []
    for i, group in enumerate(groups):
        rate_ = group.civilian_wins.mean if group.civilian_wins else None
        if rate_ is None or not group.finished:
            continue
        cost = (group.cost_usd or 0.0) / group.finished if priced else group.tokens_per_game
        if cost is not None:
            points.append((i, cost, rate_))
    return ("$ per game" if priced else "tokens per game"), points


def png(figure: Figure) -> str:
    """A figure as a ``data:`` URI."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def transcript_link(batch_dir: Path, page: Path, row: GameRow) -> str | None:
    """The game's transcript as a percent-encoded path relative to the page; none for a
    name that would lead outside the folder (the index is not trusted). Names of loose
    run folders may be nested (``a/b``)."""
    name = PurePosixPath(row.name)
    if name.is_absolute() or "\\" in row.name or not name.parts or ".." in name.parts:
        return None
    path = batch_dir.joinpath(*name.parts) / TRANSCRIPT
    if not path.is_file() or not path.resolve().is_relative_to(batch_dir.resolve()):
        return None
    relative = os.path.relpath(path.resolve(), page.resolve().parent)
    return quote(Path(relative).as_posix())


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("jubensha.runs", "templates"),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
        lstrip_blocks=True)


def render_html(batch_dir: Path, rows: list[GameRow], page: Path,
                against: list[Comparison] | None = None) -> str:
    """The page for the batch in ``batch_dir`` (links are made relative to ``page``);
    ``against``: the methods compared with a baseline on paired games. Whether games of
    mixed provenance may be pooled was decided by the caller (the report's notes say it)."""
    title = batch_title(batch_dir)
    report = build_report(rows, batch=title, allow_mixed=True)
    board = rate(rows, batch=title)
    axis, points = cost_axis(report)
    front = set(pareto_front([(c, s) for _, c, s in points]))
    on_front = {points[i][0] for i in front}
    groups: list[GroupStats] = report.groups
    plots = {"rates": png(rates_figure(report)), "tokens": png(tokens_figure(report, rows)),
             "cost": png(cost_figure(report, points, on_front, axis))}
    if board.entrants:
        plots["ratings"] = png(ratings_figure(board))
    return plain_text(_environment().get_template(TEMPLATE).render(
        batch=title, generated=datetime.now(UTC).isoformat(timespec="seconds"),
        report=report, groups=groups, tables=report.tables(), paper=paper_tables(rows),
        against=[comparison_table(c) for c in against or []],
        on_front=on_front, axis=axis, leaderboard=leaderboard_table(board), plots=plots,
        games=[(row, transcript_link(batch_dir, page, row), sides_label(row))
               for row in sorted(rows, key=lambda r: r.position)]))


def sides_label(row: GameRow) -> str:
    """Both entrants of a game: ``civilians vs murderers`` where they differ."""
    against = murderers_of(row)
    return method(row) + (f" vs {against}" if against else "")


def write_html(batch_dir: Path, rows: list[GameRow], page: Path,
               against: list[Comparison] | None = None) -> Path:
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(render_html(batch_dir, rows, page, against), encoding="utf-8")
    return page
