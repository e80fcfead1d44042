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
SAME_AS_GAME = {f"{IDENTIFICATION}.accuracy": IDENTIFICATION}
"""Metric numbers that are one of the game's own numbers under another name (the
``identification`` metric's accuracy is the game's identification share): counted once."""
SCORING = "scoring"
"""The key under which a metric's numbers in the index say how it was scored."""


ANSWERS, FAILED_ANSWERS = "answers", "failed_answers"
"""The keys under which a metric's numbers in the index count the answers it asked and
those that failed (``eval.failure``)."""


class MetricOutcome(NamedTuple):
    """One metric on one game: its real-valued numbers (empty when it failed), how it
    was scored, whether it failed, and the answers it asked and how many failed."""

    values: dict[str, float]
    scoring: str
    failed: bool
    answers: int = 0
    failed_answers: int = 0


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
        found[metric] = MetricOutcome(values, str(numbers.get(SCORING, "")), "error" in numbers,
                                      _count(numbers.get(ANSWERS)),
                                      _count(numbers.get(FAILED_ANSWERS)))
    return found


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def game_values(row: GameRow) -> dict[str, float]:
    """Every number of the game a comparison pairs: win, identification, and each metric
    number as ``metric.name`` (but one that is the game's own number under another name,
    ``SAME_AS_GAME``, where the game has that number: one quantity is one test)."""
    found = {name: value for name, value in ((WIN, win(row)),
                                             (IDENTIFICATION, identification(row)))
             if value is not None}
    for metric, outcome in outcomes(row).items():
        found |= {key: value for name, value in outcome.values.items()
                  if (key := f"{metric}.{name}") not in SAME_AS_GAME
                  or SAME_AS_GAME[key] not in found}
    return found
