"""Each agent's suspicion over time, from what the run log already holds.

Two sources: MIRAGE's trust and doubt ratings (``Rated`` events: a rater's running doubt
minus trust toward each speaker) and PLAYER*'s suspect lists (the parsed reply of each
``pruner`` call: 1 while a seat is on the list, 0 once dropped). A chart is one rater (or
pruning seat) with a line per other seat; the page draws it as inline SVG from
``Chart.lines`` (no script library), so it works wherever the page does.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

from jubensha.engine.events import Event, Rated
from jubensha.llm.calls import CallRecord

WIDTH, HEIGHT, PAD = 420, 160, 28
COLOURS = ("#c0392b", "#2471a3", "#229954", "#b9770e", "#7d3c98", "#17a589", "#566573",
           "#d35400", "#2e4053", "#a93226", "#1f618d", "#196f3d")


class Line(BaseModel):
    seat: str
    colour: str
    points: list[tuple[float, float]] = Field(description="(x, y) in chart pixels")
    last: float = Field(description="The latest value, for the legend.")


class Chart(BaseModel):
    kind: str = Field(description="'trust' (MIRAGE ratings) or 'suspects' (PLAYER* lists)")
    owner: str = Field(description="Whose suspicion this is.")
    lines: list[Line]
    low: float
    high: float
    width: int = WIDTH
    height: int = HEIGHT


def charts(events: Sequence[Event], calls: Iterable[CallRecord]) -> list[Chart]:
    """Every chart the log supports: one per rater, then one per pruning seat."""
    return [*_trust_charts(events), *_suspect_charts(calls)]


def _trust_charts(events: Sequence[Event]) -> list[Chart]:
    running: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    series: dict[str, dict[str, list[tuple[int, float]]]] = defaultdict(
        lambda: defaultdict(list))
    for event in events:
        if isinstance(event, Rated):
            score = running[event.rater]
            score[event.speaker] += event.doubt - event.trust
            series[event.rater][event.speaker].append((event.index,
                                                       score[event.speaker]))
    return [_chart("trust", rater, lines) for rater, lines in series.items()]


def _suspect_charts(calls: Iterable[CallRecord]) -> list[Chart]:
    seen: dict[str, list[tuple[int, set[str]]]] = defaultdict(list)
    for call in calls:
        if call.purpose == "pruner" and call.seat and isinstance(call.parsed, dict):
            chosen = call.parsed.get("suspicion")
            if isinstance(chosen, list):
                seen[call.seat].append((call.index, {str(name) for name in chosen}))
    out = []
    for seat, lists in seen.items():
        others = sorted(set().union(*(chosen for _, chosen in lists)))
        lines = {other: [(index, 1.0 if other in chosen else 0.0) for index, chosen in lists]
                 for other in others}
        out.append(_chart("suspects", seat, lines))
    return out


def _chart(kind: str, owner: str, raw: dict[str, list[tuple[int, float]]]) -> Chart:
    xs = [x for points in raw.values() for x, _ in points] or [0]
    ys = [y for points in raw.values() for _, y in points] or [0.0]
    low, high = min(0.0, *ys), max(1.0, *ys)
    x0, x1 = min(xs), max(max(xs), min(xs) + 1)

    def place(x: int, y: float) -> tuple[float, float]:
        px = PAD + (x - x0) / (x1 - x0) * (WIDTH - 2 * PAD)
        py = HEIGHT - PAD - (y - low) / (high - low) * (HEIGHT - 2 * PAD)
        return round(px, 1), round(py, 1)

    lines = [Line(seat=seat, colour=COLOURS[n % len(COLOURS)],
                  points=[place(x, y) for x, y in points], last=points[-1][1])
             for n, (seat, points) in enumerate(sorted(raw.items())) if points]
    return Chart(kind=kind, owner=owner, lines=lines, low=low, high=high)
