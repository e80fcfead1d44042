"""The batch report's plots read as drawn: on "Win rate against cost" the legend hides no
point and no label, wherever the groups land (a cheap losing group sits bottom right)."""

from __future__ import annotations

from matplotlib.text import Annotation
from matplotlib.transforms import Bbox

from jubensha.runs.html import cost_axis, pareto_front
from jubensha.runs.plots import cost_figure
from jubensha.runs.report import BatchReport, GroupStats
from jubensha.runs.statistics import estimate


def group(name: str, wins: int, tokens: float) -> GroupStats:
    return GroupStats(architecture=name, model="scripted", games=4, finished=4, failed=0,
                      unfinished=0,
                      civilian_wins=estimate([1] * wins + [0] * (4 - wins), trials=True),
                      identification=estimate([1] * wins + [0] * (4 - wins)),
                      tokens_per_game=tokens)


def test_the_cost_plot_legend_covers_no_point_and_no_label() -> None:
    # Every corner taken, the Pareto front drawn (its legend shown).
    report = BatchReport(games=20, groups=[
        group("cheap-loser", 0, 100.0), group("dear-loser", 0, 9000.0),
        group("cheap-winner", 4, 150.0), group("dear-winner", 4, 9000.0),
        group("middle", 2, 4000.0)])
    axis, points = cost_axis(report)
    front = {points[i][0] for i in pareto_front([(c, s) for _, c, s in points])}
    figure = cost_figure(report, points, front, axis)
    figure.canvas.draw()
    [axes] = figure.axes
    [legend] = figure.legends
    assert legend is not None
    box = legend.get_window_extent()
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    labels = [child for child in axes.get_children() if isinstance(child, Annotation)]
    assert len(labels) == len(points)
    for label in labels:
        assert not box.overlaps(label.get_window_extent(renderer)), label.get_text()
    for _, cost, rate in points:
        x, y = axes.transData.transform((cost, rate))
        assert not box.overlaps(Bbox.from_extents(x - 4, y - 4, x + 4, y + 4))
        # and every label lies inside the figure, not cut at its edge
    width, height = figure.canvas.get_width_height()
    for label in labels:
        extent = label.get_window_extent(renderer)
        assert extent.x1 <= width and extent.y1 <= height, label.get_text()
