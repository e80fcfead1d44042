"""Two entrants of a batch compared on the same games (``jubensha runs compare``).

An entrant is the civilians' ``ARCH@MODEL`` (the report's method). Its finished games are
paired with the other's by script, procedure and seed, so that each difference compares
the two on the same mystery and the same dealt table. Per game the numbers compared are
the civilian win (1 or 0), the identification (the game's share of counted ballots that
named a culprit) and every number of every post-game metric; each gets the mean paired
difference with its 95% bootstrap interval and a paired permutation test
(``runs.statistics``).
"""

from __future__ import annotations

import csv
import io
from typing import Literal

from pydantic import BaseModel, Field

from jubensha.eval.report import ResultTable, markdown_table, number
from jubensha.runs.arena import label
from jubensha.runs.index import GameRow
from jubensha.runs.provenance import check_pooled
from jubensha.runs.report import fake_warning
from jubensha.runs.statistics import Paired, paired

CompareFormat = Literal["table", "md", "csv", "json"]
WIN, IDENTIFICATION = "civilian win", "identification"
NOTE = ("A - B: mean of the paired differences over games with the same script, procedure "
        "and seed, with its 95% bootstrap interval (scripts, then games); p: two-sided "
        "paired permutation test (differences flipped in sign at random). Significant "
        "differences among many metrics are expected by chance (1 in 20 at p < 0.05).")


class CompareError(Exception):
    """Entrants that cannot be compared; one line naming what is missing."""


class Comparison(BaseModel):
    a: str
    b: str
    pairs: int = Field(description="Games paired (same script, procedure and seed).")
    results: list[Paired]
    warning: str | None = None
    provenance: list[str] = Field(default_factory=list, description=(
        "What differs between the games compared, when compared on request."))


def entrant(row: GameRow) -> str:
    """The civilians' entrant of a game: what the report's rows and columns call a method."""
    return label(row.architecture, row.model)


def scores(row: GameRow) -> dict[str, float]:
    """The numbers one game gives each compared metric."""
    found = {WIN: float(row.winner == "civilians")}
    if row.votes_counted:
        found[IDENTIFICATION] = (row.votes_on_murderer or 0) / row.votes_counted
    for metric, numbers in sorted(row.metrics.items()):
        for name, value in sorted(numbers.items()):
            if isinstance(value, int | float) and not isinstance(value, bool):
                found[f"{metric}.{name}"] = float(value)
    return found


def _games(rows: list[GameRow], who: str) -> dict[tuple[str, str, int, int], GameRow]:
    """An entrant's finished games by (script, procedure, seed, repeat)."""
    found: dict[tuple[str, str, int, int], GameRow] = {}
    for row in sorted(rows, key=lambda r: r.position):
        if row.status == "finished" and entrant(row) == who:
            key = (row.script, row.procedure, row.seed)
            repeat = sum(k[:3] == key for k in found)
            found[(*key, repeat)] = row
    return found


def compare(rows: list[GameRow], a: str, b: str, metrics: list[str] | None = None,
            allow_mixed: bool = False) -> Comparison:
    """A against B on their paired games; ``metrics`` keeps the metrics whose name starts
    with one of them. Games of different provenance are compared only when
    ``allow_mixed`` (else ``MixedProvenance``)."""
    known = list(dict.fromkeys(entrant(r) for r in rows))
    for name in (a, b):
        if name not in known:
            raise CompareError(f"no entrant {name!r} in this batch (entrants: "
                               f"{', '.join(known) or 'none'})")
    if a == b:
        raise CompareError("compare two different entrants")
    mine, theirs = _games(rows, a), _games(rows, b)
    keys = [key for key in mine if key in theirs]
    if not keys:
        raise CompareError(f"{a} and {b} played no game with the same script, procedure "
                           "and seed")
    mixed = check_pooled([mine[k] for k in keys] + [theirs[k] for k in keys], allow_mixed)
    values: dict[str, list[tuple[float, float, str]]] = {}
    for key in keys:
        left, right = scores(mine[key]), scores(theirs[key])
        for name in left.keys() & right.keys():
            values.setdefault(name, []).append((left[name], right[name], key[0]))
    chosen = [name for name in _ordered(values)
              if not metrics or any(name.startswith(m) for m in metrics)]
    if not chosen:
        raise CompareError(f"no metric named {', '.join(metrics or [])} was scored on both")
    results = [paired(name, [x for x, _, _ in values[name]], [y for _, y, _ in values[name]],
                      [s for _, _, s in values[name]]) for name in chosen]
    return Comparison(a=a, b=b, pairs=len(keys), results=results,
                      warning=fake_warning([mine[k] for k in keys] + [theirs[k] for k in keys]),
                      provenance=mixed)


def _ordered(values: dict[str, list[tuple[float, float, str]]]) -> list[str]:
    first = [name for name in (WIN, IDENTIFICATION) if name in values]
    return first + sorted(name for name in values if name not in first)


def comparison_table(comparison: Comparison) -> ResultTable:
    return ResultTable(
        title=f"{comparison.a} (A) against {comparison.b} (B) on {comparison.pairs} paired "
              "games",
        columns=["metric", "A", "B", "A - B [95% interval]", "p", "pairs"],
        rows=[[r.metric, number(r.a), number(r.b), r.difference.render(),
               number(r.p_value, 4), str(r.pairs)] for r in comparison.results],
        notes=[NOTE])


def render_comparison(comparison: Comparison, fmt: CompareFormat) -> str:
    """Markdown, CSV or JSON text (``table`` is drawn by the caller)."""
    if fmt == "json":
        return comparison.model_dump_json(indent=2)
    warning = comparison.warning
    if fmt == "csv":
        out = io.StringIO()
        if warning:
            out.write(f"# {warning}\n")
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["metric", "a", "b", "difference", "ci_low", "ci_high", "p_value",
                         "pairs"])
        for r in comparison.results:
            writer.writerow([r.metric, r.a, r.b, r.difference.mean, r.difference.low,
                             r.difference.high, r.p_value, r.pairs])
        return out.getvalue()
    return (f"**{warning}**\n\n" if warning else "") + markdown_table(
        comparison_table(comparison))
