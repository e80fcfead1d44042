"""Two entrants of a batch compared on the same games (``jubensha runs compare``).

An entrant is the civilians' ``ARCH@MODEL`` (the report's method). Its finished games are
paired with the other's by script, procedure and seed, so that each difference compares
the two on the same mystery and the same dealt table. Per game the numbers compared are
those of ``runs.game_scores`` (the civilian win, the game's identification share, every
real-valued number of every post-game metric scored the same way on both); each gets the
mean paired difference, the paired sign-flip test's p and the test inverted as its 95%
interval, so the two agree (``runs.statistics``), and every p of the table is also given
Holm-adjusted. A metric that failed on a game leaves that pair out, and the table counts
such games per side.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from jubensha.eval.report import ResultTable, markdown_table, number
from jubensha.runs.arena import label
from jubensha.runs.game_scores import IDENTIFICATION, WIN, game_values, outcomes
from jubensha.runs.index import GameRow
from jubensha.runs.provenance import check_pooled, served_apart
from jubensha.runs.report import fake_warning, flatten
from jubensha.runs.statistics import Paired, holm, paired
from jubensha.terminal import plain_text

CompareFormat = Literal["table", "md", "csv", "json"]
NOTE = ("a, b: the means of A and of B; difference: mean of the paired differences A - B "
        "over games with the same script, procedure and seed, with its 95% interval "
        "[ci_low, ci_high]: the paired sign-flip test inverted, so it excludes 0 exactly "
        "when p < 0.05 (none with five pairs or fewer, where no p reaches 0.05, nor when "
        "every pair differs by one amount). p_value: the test's two-sided p; p_holm: "
        "adjusted over every test of the table. failed_a/b: games on which the metric "
        "failed, left out; failed_answers_a/b: of the answers the metric asked on the "
        "paired games, the ones that failed (counted wrong, or left out, by its rule).")


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
    ``allow_mixed`` (else ``MixedProvenance``); one model served by two servers is two
    entrants (``runs.provenance.served_apart``)."""
    rows = served_apart(rows)
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
    pairs = [(mine[k], theirs[k]) for k in keys]
    values = paired_values(pairs)
    chosen = [name for name in _ordered(values)
              if not metrics or any(name.startswith(m) for m in metrics)]
    if not chosen:
        raise CompareError(f"no metric named {', '.join(metrics or [])} was scored on both")
    failed = failures(pairs)
    results = []
    for name in chosen:
        found = paired(name, [x for x, _, _ in values[name]], [y for _, y, _ in values[name]],
                       [s for _, _, s in values[name]])
        metric, dot, _ = name.partition(".")  # the win and identification are the game's
        counts = failed.get(metric, Failures()) if dot else Failures()
        results.append(found.model_copy(update={
            "scoring": scoring_of(pairs, name) if dot else "", **counts.fields()}))
    return Comparison(a=a, b=b, pairs=len(keys), results=adjusted(results),
                      warning=fake_warning([mine[k] for k in keys] + [theirs[k] for k in keys]),
                      provenance=mixed)


def paired_values(pairs: list[tuple[GameRow, GameRow]]
                  ) -> dict[str, list[tuple[float, float, str]]]:
    """Per number, (A's value, B's value, script) of each pair that has it on both sides,
    a metric counted only where both scored it the same way."""
    values: dict[str, list[tuple[float, float, str]]] = {}
    for left, right in pairs:
        same = {metric for metric, outcome in outcomes(left).items()
                if (other := outcomes(right).get(metric)) and other.scoring == outcome.scoring}
        mine, theirs = game_values(left), game_values(right)
        for name in sorted(mine.keys() & theirs.keys()):
            if name in (WIN, IDENTIFICATION) or name.split(".")[0] in same:
                values.setdefault(name, []).append((mine[name], theirs[name], left.script))
    return values


class Failures(BaseModel):
    """Per side (a, b): the paired games a metric failed on, the answers it asked on
    them and how many of those failed."""

    games: list[int] = Field(default_factory=lambda: [0, 0])
    answers: list[int] = Field(default_factory=lambda: [0, 0])
    failed_answers: list[int] = Field(default_factory=lambda: [0, 0])

    def fields(self) -> dict[str, int]:
        return {f"{key}_{side}": getattr(self, name)[i] for i, side in enumerate("ab")
                for key, name in (("failed", "games"), ("answers", "answers"),
                                  ("failed_answers", "failed_answers"))}


def failures(pairs: list[tuple[GameRow, GameRow]]) -> dict[str, Failures]:
    """Per metric, on how many of A's and of B's paired games it failed, and the answers
    it asked and lost on each side."""
    found: dict[str, Failures] = {}
    for left, right in pairs:
        for side, row in enumerate((left, right)):
            for metric, outcome in outcomes(row).items():
                counts = found.setdefault(metric, Failures())
                counts.games[side] += outcome.failed
                counts.answers[side] += outcome.answers
                counts.failed_answers[side] += outcome.failed_answers
    return found


def scoring_of(pairs: list[tuple[GameRow, GameRow]], name: str) -> str:
    """How the metric behind ``name`` was scored (the same on both sides of a pair)."""
    metric = name.split(".")[0]
    found = {o.scoring for left, _ in pairs if (o := outcomes(left).get(metric))
             and not o.failed}
    return ", ".join(sorted(found))


def adjusted(results: Sequence[Paired]) -> list[Paired]:
    """``results`` with their Holm-adjusted p-values over the whole family."""
    return [r.model_copy(update={"p_holm": p})
            for r, p in zip(results, holm([r.p_value for r in results]), strict=True)]


def adjusted_together(comparisons: list[Comparison]) -> list[Comparison]:
    """Several comparisons as one family (a ``--baseline`` table): every p adjusted by
    Holm over all their tests."""
    flat = adjusted([r for c in comparisons for r in c.results])
    found, start = [], 0
    for comparison in comparisons:
        end = start + len(comparison.results)
        found.append(comparison.model_copy(update={"results": flat[start:end]}))
        start = end
    return found


def _ordered(values: dict[str, list[tuple[float, float, str]]]) -> list[str]:
    first = [name for name in (WIN, IDENTIFICATION) if name in values]
    return first + sorted(name for name in values if name not in first)


def comparison_table(comparison: Comparison) -> ResultTable:
    return ResultTable(
        title=f"{comparison.a} (A) against {comparison.b} (B) on {comparison.pairs} paired "
              "games",
        columns=["metric", "scoring", "a", "b", "difference [ci_low, ci_high]", "p_value",
                 "p_holm", "pairs", "failed_a", "failed_b", "failed_answers_a",
                 "failed_answers_b"],
        rows=[[r.metric, r.scoring or "–", number(r.a), number(r.b), r.difference.render(),
               number(r.p_value, 4), number(r.p_holm, 4), str(r.pairs), str(r.failed_a),
               str(r.failed_b), _share(r.failed_answers_a, r.answers_a),
               _share(r.failed_answers_b, r.answers_b)] for r in comparison.results],
        notes=[NOTE, *comparison.provenance])


def _share(failed: int, asked: int) -> str:
    return f"{failed}/{asked}" if asked else "–"


def render_comparison(comparison: Comparison, fmt: CompareFormat) -> str:
    """Markdown, CSV or JSON text (``table`` is drawn by the caller), without escape
    sequences; the CSV's columns are the JSON's keys of each result, nested ones joined
    by dots."""
    return plain_text(_render(comparison, fmt))


def _render(comparison: Comparison, fmt: CompareFormat) -> str:
    if fmt == "json":
        return comparison.model_dump_json(indent=2)
    warning = comparison.warning
    if fmt == "csv":
        out = io.StringIO()
        for line in ([warning] if warning else []) + comparison.provenance:
            out.write(f"# {line}\n")
        records = [flatten(r.model_dump(mode="json")) for r in comparison.results]
        writer = csv.DictWriter(out, fieldnames=list(dict.fromkeys(
            key for record in records for key in record)), lineterminator="\n")
        writer.writeheader()
        writer.writerows(records)
        return out.getvalue()
    return (f"**{warning}**\n\n" if warning else "") + markdown_table(
        comparison_table(comparison))
