"""Whether a game's model can answer at all, so that a game against a dead endpoint stops
at once instead of playing to the end on fallbacks.

``Health`` watches every call record of a run (the ``CallLog`` reports each call to it).
It stops the game (``ModelUnreachable``) when a call fails with an error that no retry can
fix (connection refused, key rejected, no such model, a cassette that does not hold the
call) before any call of the game was answered, when the endpoint asks to wait longer
than a call may (``ModelExhausted``: a spent quota), or when one seat's calls fail
``max_consecutive`` times in a row.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jubensha.llm.base import ModelError, ModelExhausted

DEFAULT_MAX_CONSECUTIVE = 5


class ModelUnreachable(BaseException):
    """Ends the game at once. It derives from ``BaseException`` because agents and the
    table turn every ``Exception`` of a seat into a fallback, which is exactly what must
    not happen when no call can succeed."""


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
        if isinstance(error, ModelExhausted):
            raise ModelUnreachable(f"the model {model!r} cannot answer now: {error}")
        if is_fatal(error) and not self.answered:
            raise ModelUnreachable(f"the model {model!r} cannot be reached: {error}")
        if self.max_consecutive and self.failures[key] >= self.max_consecutive:
            raise ModelUnreachable(f"{self.failures[key]} model calls in a row failed for "
                                   f"{key} ({model}); the last: {error}")


def is_fatal(error: BaseException) -> bool:
    """An error that every later call would meet as well."""
    return isinstance(error, ModelError) and error.fatal
