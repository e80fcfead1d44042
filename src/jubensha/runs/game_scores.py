"""Internal.

The numbers one finished game gives a report, a comparison and the HTML page, defined
once so the three agree: the civilian win (1 or 0; none when the game has no winner), the
identification (the game's share of its counted ballots that named a culprit: a per-game
mean, never ballots pooled across games), and each post-game metric's real-valued numbers
with how the metric was scored. Integers in a metric's result are counts or settings
(questions, samples, points), never averaged. A metric that failed on the game (more of its
answers failed than allowed: ``eval.failure``) has no numbers, only its failure.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from jubensha.runs.index import GameRow

WIN, IDENTIFICATION = "civilian win", "identification"
SCORING = "scoring"
"""The key under which a metric's numbers in the index say how it was scored."""


class MetricOutcome(NamedTuple):
    """One metric on one game: its real-valued numbers (empty when it failed), how it
    was scored, and whether it failed."""

    values: dict[str, float]
    scoring: str
    failed: bool


def is_value(value: Any) -> bool:
    """A number to average: a real value, not a count (int) nor a flag (bool)."""
    return isinstance(value, float)


def win(row: GameRow) -> float | None:
    return float(row.winner == "civilians") if row.winner in ("civilians", "murderers") \
        else None


def identification(row: GameRow) -> float | None:
    """The game's share of counted ballots on a culprit; None without a counted ballot."""
    return (row.votes_on_murderer or 0) / row.votes_counted if row.votes_counted else None


def outcomes(row: GameRow) -> dict[str, MetricOutcome]:
    """Each post-game metric that was scored or failed on the game (skipped ones left out)."""
    found = {}
    for metric, numbers in sorted(row.metrics.items()):
        if not isinstance(numbers, dict) or "skipped" in numbers:
            continue
        values = {name: float(value) for name, value in sorted(numbers.items())
                  if is_value(value)}
        found[metric] = MetricOutcome(values, str(numbers.get(SCORING, "")), "error" in numbers)
    return found


def game_values(row: GameRow) -> dict[str, float]:
    """Every number of the game a comparison pairs: win, identification, and each metric
    number as ``metric.name``."""
    found = {name: value for name, value in ((WIN, win(row)),
                                             (IDENTIFICATION, identification(row)))
             if value is not None}
    for metric, outcome in outcomes(row).items():
        found |= {f"{metric}.{name}": value for name, value in outcome.values.items()}
    return found
