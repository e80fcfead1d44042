"""Each agent's suspicion over time, from what the run log already holds.

Two sources: MIRAGE's trust and doubt ratings (``Rated`` events: a rater's running doubt
minus trust toward each speaker) and PLAYER*'s suspect lists (the parsed reply of each
``pruner`` call: whom the seat still suspects). A trust chart is one rater with a line
per rated seat, drawn against a zero line; a suspect chart is one pruning seat with a row
per seat it ever suspected, filled while that seat was on its list (a list is a set, so
rows say more than lines crossing between 0 and 1). The page draws both as inline SVG
(no script library), so they work wherever the page does.

Every seat has one colour in every chart (``roster.colours``, by its place in the script);
the review marks the murderers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence

from pydantic import BaseModel, Field

from jubensha.engine.events import Event, Rated
from jubensha.llm.calls import CallRecord
from jubensha.web.roster import colours

WIDTH, HEIGHT = 480, 220
LEFT, RIGHT, TOP, BOTTOM = 44, 12, 12, 34
ROW = 22


class Line(BaseModel):
    seat: str
    colour: str
    points: list[tuple[float, float]] = Field(description="(x, y) in chart pixels")
    last: float = Field(description="The latest value, for the legend.")
    murderer: bool = False


class Row(BaseModel):
    """A seat's row in a suspect chart: the spans (x from, x to) it was on the list."""

    seat: str
    colour: str
    y: float
    spans: list[tuple[float, float]]
    now: bool = Field(description="Still on the list at the last reading.")
    murderer: bool = False


class Chart(BaseModel):
    kind: str = Field(description="'trust' (MIRAGE ratings) or 'suspects' (PLAYER* lists)")
    owner: str = Field(description="Whose suspicion this is.")
    colour: str
    lines: list[Line] = Field(default_factory=list)
    rows: list[Row] = Field(default_factory=list)
    low: float = 0.0
    high: float = 1.0
    zero: float = Field(0.0, description="y of the value 0, in chart pixels")
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right: int = WIDTH - RIGHT
    top: int = TOP
    bottom: int = HEIGHT - BOTTOM


def charts(events: Sequence[Event], calls: Iterable[CallRecord], seats: Sequence[str], *,
           hide: Collection[str] = (), murderers: Collection[str] = ()) -> list[Chart]:
    """Every chart the log supports: one per rater, then one per pruning seat. ``seats``
    (the script's characters in order) choose the colours; ``hide`` leaves out seats whose
    ratings are not to be shown (a person's, while the game runs); ``murderers`` are
    marked (the review)."""
    palette = colours(seats)
    trust = [c for c in _trust_charts(events, palette, murderers) if c.owner not in hide]
    return [*trust, *_suspect_charts(calls, palette, murderers)]


def _colour(palette: dict[str, str], seat: str) -> str:
    return palette.get(seat, "#555555")


def _trust_charts(events: Sequence[Event], palette: dict[str, str],
                  murderers: Collection[str]) -> list[Chart]:
    running: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    series: dict[str, dict[str, list[tuple[int, float]]]] = defaultdict(
        lambda: defaultdict(list))
    for event in events:
        if isinstance(event, Rated):
            score = running[event.rater]
            score[event.speaker] += event.doubt - event.trust
            series[event.rater][event.speaker].append((event.index, score[event.speaker]))
    return [_trust_chart(rater, lines, palette, murderers) for rater, lines in series.items()]


def _trust_chart(owner: str, raw: dict[str, list[tuple[int, float]]],
                 palette: dict[str, str], murderers: Collection[str]) -> Chart:
    xs = [x for points in raw.values() for x, _ in points] or [0]
    ys = [y for points in raw.values() for _, y in points] or [0.0]
    low, high = min(-1.0, *ys), max(1.0, *ys)
    x0, x1 = min(xs), max(max(xs), min(xs) + 1)

    def place(x: float, y: float) -> tuple[float, float]:
        px = LEFT + (x - x0) / (x1 - x0) * (WIDTH - LEFT - RIGHT)
        py = TOP + (high - y) / (high - low) * (HEIGHT - TOP - BOTTOM)
        return round(px, 1), round(py, 1)

    order = {seat: number for number, seat in enumerate(palette)}
    lines = [Line(seat=seat, colour=_colour(palette, seat), last=points[-1][1],
                  points=[place(x, y) for x, y in points], murderer=seat in murderers)
             for seat, points in sorted(raw.items(), key=lambda kv: order.get(kv[0], 99))
             if points]
    return Chart(kind="trust", owner=owner, colour=_colour(palette, owner), lines=lines,
                 low=low, high=high, zero=place(x0, 0.0)[1])


def _suspect_charts(calls: Iterable[CallRecord], palette: dict[str, str],
                    murderers: Collection[str]) -> list[Chart]:
    seen: dict[str, list[tuple[int, set[str]]]] = defaultdict(list)
    for call in calls:
        if call.purpose == "pruner" and call.seat and isinstance(call.parsed, dict):
            chosen = call.parsed.get("suspicion")
            if isinstance(chosen, list):
                seen[call.seat].append((call.index, {str(name) for name in chosen}))
    return [_suspect_chart(seat, lists, palette, murderers) for seat, lists in seen.items()]


def _suspect_chart(owner: str, lists: list[tuple[int, set[str]]], palette: dict[str, str],
                   murderers: Collection[str]) -> Chart:
    order = {seat: number for number, seat in enumerate(palette)}
    suspects = sorted(set().union(*(chosen for _, chosen in lists)),
                      key=lambda seat: (order.get(seat, 99), seat))
    xs = [x for x, _ in lists]
    gap = max((xs[-1] - xs[0]) / max(len(xs) - 1, 1), 1)
    ends = [*xs[1:], xs[-1] + gap]  # each reading holds until the next one
    x0, x1 = xs[0], ends[-1]
    left = LEFT + 90
    height = TOP + BOTTOM + ROW * max(len(suspects), 1)

    def px(x: float) -> float:
        return round(left + (x - x0) / (x1 - x0) * (WIDTH - left - RIGHT), 1)

    rows = []
    for number, seat in enumerate(suspects):
        spans: list[tuple[float, float]] = []
        for (x, chosen), end in zip(lists, ends, strict=True):
            if seat not in chosen:
                continue
            if spans and spans[-1][1] == px(x):
                spans[-1] = (spans[-1][0], px(end))
            else:
                spans.append((px(x), px(end)))
        rows.append(Row(seat=seat, colour=_colour(palette, seat), y=TOP + ROW * number,
                        spans=spans, now=seat in lists[-1][1], murderer=seat in murderers))
    return Chart(kind="suspects", owner=owner, colour=_colour(palette, owner), rows=rows,
                 height=height, bottom=height - BOTTOM, left=left, zero=height - BOTTOM)
