"""Internal.

No number from failure: the one rule every metric is held to.

A metric's value rests on answers: a judge's verdicts, the seats' post-game answers, the
game's ballots and ratings. An answer fails when it was not really given: the reply did not
parse, it was empty, the call failed, or the table used its fallback. While a metric
computes, every answer it reads is noted here by kind (``note``; ``judge.ask`` notes its
own); when more than ``max_failed`` of one kind failed (default: most, 0.5), the value is
no value and the metric fails with the count (``AnswerTally.problem``). ``eval all``, ``eval
METRIC``, and a batch apply it the same way (``--max-failed``, a spec's
``metric_max_failed``); docs/evaluation.md states it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Literal

MAX_FAILED = 0.5
"""A metric whose answers of one kind failed in more than this share has no value."""
Kind = Literal["judge", "seat", "ballot", "rating"]
KINDS: dict[Kind, str] = {"judge": "judge answers", "seat": "post-game answers",
                          "ballot": "ballots", "rating": "ratings"}
"""What each kind of answer is called in a failed metric's note."""


@dataclass
class AnswerTally:
    """The answers one metric read, by kind (``[asked, failed]``), and its judges. The rule
    holds per kind, so that the seats' good answers cannot hide a judge that never
    answered, nor the reverse."""

    kinds: dict[Kind, list[int]] = field(default_factory=dict)
    judges: set[str] = field(default_factory=set)
    """The judge models the metric asked (``judge.judge_of`` notes them)."""

    def add(self, kind: Kind, failed: bool, count: int) -> None:
        counts = self.kinds.setdefault(kind, [0, 0])
        counts[0] += count
        counts[1] += count if failed else 0

    @property
    def asked(self) -> int:
        return sum(asked for asked, _ in self.kinds.values())

    @property
    def failed(self) -> int:
        return sum(failed for _, failed in self.kinds.values())

    def problem(self, max_failed: float = MAX_FAILED) -> str | None:
        """Why the metric has no value: of one kind of its answers, more than
        ``max_failed`` failed."""
        for kind, (asked, failed) in self.kinds.items():
            if asked and failed > max_failed * asked:
                return f"{failed} of {asked} {KINDS[kind]} failed"
        return None


_TALLY: ContextVar[AnswerTally | None] = ContextVar("jubensha_answer_tally", default=None)


@contextmanager
def tallied() -> Iterator[AnswerTally]:
    """Count every answer noted inside (by the metric computing, and the tasks it starts)."""
    tally = AnswerTally()
    token = _TALLY.set(tally)
    try:
        yield tally
    finally:
        _TALLY.reset(token)


def note(kind: Kind, failed: bool, count: int = 1) -> None:
    """Note ``count`` answers of ``kind`` a metric read, failed or given (nothing outside
    ``tallied``)."""
    tally = _TALLY.get()
    if tally is not None and count:
        tally.add(kind, failed, count)


def note_judge(name: str) -> None:
    """Note that the metric computing asks the judge model ``name``."""
    tally = _TALLY.get()
    if tally is not None:
        tally.judges.add(name)


def check_max_failed(value: float) -> float:
    """``value`` as a share, or a ``ValueError`` saying what a share is."""
    if not 0 <= value < 1:
        raise ValueError(f"max_failed {value}: give a share from 0 (any failed answer "
                         "fails the metric) up to, not including, 1")
    return value
