"""A batch report's plots, written as PNG files with matplotlib's Agg renderer.

``rates.png``: civilian win rate and murderer identification per architecture × model,
each a point with its 95% interval where a method gives one (``runs.statistics``); ``tokens.png``: tokens per finished game, a box
per group with the games drawn over it; ``ratings.png`` (``runs leaderboard --plot``): each
entrant's combined, civilian and murderer rating, mu with a bar of ± 2 sigma. The ``Figure`` API is used without ``pyplot``, so
nothing depends on a display or on global plotting state.
"""

from __future__ import annotations

import random
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from jubensha.runs.index import GameRow
from jubensha.runs.ratings import Leaderboard, Rating
from jubensha.runs.report import BatchReport, GroupStats, build_report
from jubensha.runs.statistics import Estimate


def _labels(groups: list[GroupStats]) -> list[str]:
    return [f"{g.architecture}\n{g.model}" for g in groups]


def _rates(axes: Axes, groups: list[GroupStats], pick: str, title: str, label: str) -> None:
    """Each group's mean as a point, with its interval where a method gives one."""
    for x, group in enumerate(groups):
        found: Estimate | None = getattr(group, pick)
        if found is None:
            continue
        low, high = found.ci_low, found.ci_high
        errors = ([[found.mean - low], [high - found.mean]]
                  if low is not None and high is not None else None)
        axes.errorbar([x], [found.mean], yerr=errors, fmt="o", capsize=6, color="tab:blue")
        axes.annotate(f"n={found.n}", (x, found.mean), xytext=(8, 0),
                      textcoords="offset points", va="center", fontsize=8)
    axes.set_title(title, fontsize=10)
    axes.set_ylabel(label)
    axes.set_ylim(-0.03, 1.03)
    axes.set_xlim(-0.5, len(groups) - 0.5)
    axes.set_xticks(range(len(groups)), _labels(groups), fontsize=8)
    axes.grid(axis="y", alpha=0.3)


def rates_figure(report: BatchReport) -> Figure:
    figure = Figure(figsize=(max(8.0, 3.2 * len(report.groups)), 4), layout="constrained")
    FigureCanvasAgg(figure)
    left, right = figure.subplots(1, 2)
    _rates(left, report.groups, "civilian_wins", "Civilian win rate (95% interval)",
           "share of finished games")
    _rates(right, report.groups, "identification", "Murderer identification (95% interval)",
           "mean share of a game's ballots on a culprit")
    return figure


def tokens_figure(report: BatchReport, rows: list[GameRow]) -> Figure:
    figure = Figure(figsize=(max(5.0, 1.4 * len(report.groups)), 4), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots()
    per_group = [[r.usage.tokens for r in rows if r.status == "finished"
                  and (r.architecture, r.model) == (g.architecture, g.model)]
                 for g in report.groups]
    positions = list(range(len(per_group)))
    axes.boxplot([values or [0] for values in per_group], positions=positions, widths=0.5,
                 showfliers=False)
    jitter = random.Random(0)
    for x, values in zip(positions, per_group, strict=True):
        axes.scatter([x + jitter.uniform(-0.12, 0.12) for _ in values], values, s=12,
                     alpha=0.6, color="tab:orange", zorder=3)
    axes.set_xticks(positions, _labels(report.groups), fontsize=8)
    axes.set_ylabel("tokens per game (prompt + completion)")
    axes.set_title("Tokens per finished game", fontsize=10)
    axes.grid(axis="y", alpha=0.3)
    return figure


def cost_figure(report: BatchReport, points: list[tuple[int, float, float]],
                front: set[int], axis: str) -> Figure:
    """Civilian win rate against cost per game, one point per group (``points``: group
    index, cost, rate); the Pareto front (``front``: group indices) joined by a line."""
    figure = Figure(figsize=(7, 4.5), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots()
    middle = (min(c for _, c, _ in points) + max(c for _, c, _ in points)) / 2 if points else 0
    for i, cost, rate in points:
        group = report.groups[i]
        best = i in front
        axes.scatter([cost], [rate], s=60 if best else 30, zorder=3,
                     color="tab:red" if best else "tab:blue")
        left = cost > middle  # a label points inwards, never off the plot's edge
        axes.annotate(f"{group.architecture}@{group.model}", (cost, rate),
                      xytext=(-6 if left else 6, 4), ha="right" if left else "left",
                      textcoords="offset points", fontsize=8)
    line = sorted((c, r) for i, c, r in points if i in front)
    if line:
        axes.step([c for c, _ in line], [r for _, r in line], where="post", color="tab:red",
                  alpha=0.6, label="Pareto front")
        # Below the plot, not in it: inside, it hid a point and its label.
        figure.legend(fontsize=8, loc="outside lower center")
    axes.set_xlabel(axis)
    axes.set_ylabel("civilian win rate")
    axes.set_ylim(-0.03, 1.03)
    axes.set_title("Win rate against cost", fontsize=10)
    axes.grid(alpha=0.3)
    return figure


def write_plots(rows: list[GameRow], out: Path) -> list[Path]:
    """Write ``rates.png`` and ``tokens.png`` into ``out``; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    report = build_report(rows)
    written = []
    for name, figure in (("rates.png", rates_figure(report)),
                         ("tokens.png", tokens_figure(report, rows))):
        figure.savefig(out / name, dpi=120)
        written.append(out / name)
    return written


def ratings_figure(board: Leaderboard) -> Figure:
    """Three panels (combined, as civilian, as murderer), entrants in leaderboard order
    from the top, each rating drawn as mu ± 2 sigma with its wins/games."""
    names = [e.entrant for e in board.entrants]
    figure = Figure(figsize=(12, max(2.5, 0.55 * len(names) + 1.2)), layout="constrained")
    FigureCanvasAgg(figure)
    panels = figure.subplots(1, 3, sharey=True)
    for axes, pool, title in zip(panels, ("combined", "civilian", "murderer"),
                                 ("Combined", "As civilian", "As murderer"), strict=True):
        for y, entry in enumerate(board.entrants):
            rating: Rating | None = getattr(entry, pool)
            if rating is None:
                continue
            axes.errorbar([rating.mu], [y], xerr=[[2 * rating.sigma]], fmt="o", capsize=4,
                          color="tab:blue")
            axes.annotate(f"{rating.wins}/{rating.games}", (rating.mu, y), xytext=(0, 7),
                          textcoords="offset points", ha="center", fontsize=7)
        axes.axvline(25.0, color="grey", lw=0.8, ls="--")
        axes.set_title(title, fontsize=10)
        axes.set_xlabel("rating mu (bar: ± 2 sigma; start 25)")
        axes.grid(axis="x", alpha=0.3)
    panels[0].set_yticks(range(len(names)), names, fontsize=8)
    panels[0].set_ylim(len(names) - 0.5, -0.5)
    return figure
