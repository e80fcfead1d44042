"""Internal.

Whether a game's model can answer at all, so that a game against a dead endpoint stops
at once instead of playing to the end on fallbacks.

``Health`` watches every call record of a run (the ``CallLog`` reports each call to it).
It stops the game (``ModelUnreachable``) when a call fails with an error that no retry can
fix (connection refused, key rejected, no such model, a cassette that does not hold the
call) before any call of the game was answered, when the endpoint asks to wait longer
than a call may (``ErrorKind.SPENT``: a spent quota), or when one seat's calls fail
``max_consecutive`` times in a row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jubensha.llm.base import ErrorKind, ModelError
from jubensha.prompts import message

DEFAULT_MAX_CONSECUTIVE = 5


class ModelUnreachable(BaseException):
    """Ends the game at once. It derives from ``BaseException`` because agents and the
    table turn every ``Exception`` of a seat into a fallback, which is exactly what must
    not happen when no call can succeed. ``seat`` is set when that seat's calls kept
    failing (``failures`` in a row), unset when the model could not be reached at all."""

    def __init__(self, model: str, error: BaseException, seat: str | None = None,
                 failures: int = 0) -> None:
        self.model, self.error, self.seat, self.failures = model, error, seat, failures
        super().__init__(self.say("en"))

    def __reduce__(self) -> tuple[Any, ...]:  # pickled by name (process executors)
        return ModelUnreachable, (self.model, self.error, self.seat, self.failures)

    def say(self, lang: str) -> str:
        """What happened, in ``lang`` (the model's own error as it gave it)."""
        if self.seat is None:
            key = "exhausted" if kind_of(self.error) is ErrorKind.SPENT else "unreachable"
            return message(lang, key, model=self.model, error=self.error)
        return message(lang, "failing", failures=self.failures, seat=self.seat,
                       model=self.model, error=self.error)


@dataclass
class Health:
    max_consecutive: int = DEFAULT_MAX_CONSECUTIVE
    """Failed calls in a row of one seat that stop the game; 0 never stops."""
    answered: bool = False
    failures: dict[str, int] = field(default_factory=dict)

    def succeeded(self, seat: str | None) -> None:
        self.answered = True
        self.failures[seat or "-"] = 0

    def failed(self, seat: str | None, model: str, error: Exception) -> None:
        """Count a failed call; raise ``ModelUnreachable`` when the game cannot go on."""
        key = seat or "-"
        self.failures[key] = self.failures.get(key, 0) + 1
        kind = kind_of(error)
        if kind is ErrorKind.SPENT or (kind is ErrorKind.DEAD and not self.answered):
            raise ModelUnreachable(model, error)
        if self.max_consecutive and self.failures[key] >= self.max_consecutive:
            raise ModelUnreachable(model, error, key, self.failures[key])


def kind_of(error: BaseException) -> ErrorKind | None:
    """The kind of a model error (``ErrorKind``); None for anything else that failed."""
    return error.kind if isinstance(error, ModelError) else None
