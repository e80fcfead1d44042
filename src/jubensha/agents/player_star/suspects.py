"""Internal.

The suspicious state s_ik of PLAYER* (section 2.1): per victim, whom the seat suspects.

Every list starts as everyone but the seat itself. The pruner replaces a list with the
subset it finds most suspicious, and may bring back seats it dropped. The state also keeps
the latest sensor readings per victim and suspect, and how many questions the seat has put
to each other seat (the paper's diminishing reward of asking the same seat again).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel

from jubensha.agents.player_star.sensors import Sensor, SensorReading

NEUTRAL_SCORE = 0.5
"""The score of a suspect no sensor has read yet."""


class SuspectUpdate(BaseModel):
    """One change of a suspect list, for the record and for tests."""

    victim: str | None
    before: list[str]
    after: list[str]


class SuspectState:
    def __init__(self, others: Sequence[str], victims: Sequence[str | None]) -> None:
        self.others = list(others)
        self.victims = list(victims)
        self._lists: dict[str | None, list[str]] = {v: list(others) for v in victims}
        self._readings: dict[tuple[str | None, str], dict[str, SensorReading]] = {}
        self.updates: list[SuspectUpdate] = []
        self.asked: Counter[str] = Counter()

    def suspects(self, victim: str | None) -> list[str]:
        return list(self._lists[victim])

    def update(self, victim: str | None, chosen: Sequence[str]) -> list[str]:
        """Replace ``victim``'s list with ``chosen`` (kept in seat order, others only);
        an empty choice keeps the list as it was."""
        wanted = set(chosen)
        after = [seat for seat in self.others if seat in wanted]
        before = self.suspects(victim)
        if after:
            self._lists[victim] = after
        self.updates.append(SuspectUpdate(victim=victim, before=before,
                                          after=self.suspects(victim)))
        return self.suspects(victim)

    def fresh(self, victim: str | None, suspect: str, sensor: str,
              context: str) -> SensorReading | None:
        """The reading of ``sensor`` taken from exactly the same retrieved ``context``."""
        reading = self._readings.get((victim, suspect), {}).get(sensor)
        return reading if reading is not None and reading.context == context else None

    def record(self, victim: str | None, suspect: str, reading: SensorReading) -> None:
        self._readings.setdefault((victim, suspect), {})[reading.sensor] = reading

    def readings(self, victim: str | None, suspect: str,
                 sensors: Sequence[Sensor] | None = None) -> list[SensorReading]:
        """The latest reading of each sensor (of ``sensors``, in their order, if given)."""
        latest = self._readings.get((victim, suspect), {})
        if sensors is None:
            return list(latest.values())
        return [latest[s.name] for s in sensors if s.name in latest]

    def score(self, victim: str | None, suspect: str, sensors: Sequence[Sensor]) -> float:
        """Weighted mean of the latest readings' scores; neutral when nothing was read."""
        weights = {s.name: s.weight for s in sensors}
        pairs = [(weights[r.sensor], r.score)
                 for r in self.readings(victim, suspect, sensors) if weights[r.sensor] > 0]
        total = sum(weight for weight, _ in pairs)
        if not total:
            return NEUTRAL_SCORE
        return sum(weight * score for weight, score in pairs) / total

    def pick(self, pairs: Sequence[tuple[str | None, str]], sensors: Sequence[Sensor],
             discount: float) -> tuple[str | None, str]:
        """The (victim, suspect) to question now: the highest score divided by
        ``1 + discount * questions already put to the suspect``; ties go to the seat asked
        least, then to the earlier victim and seat."""
        def value(index: int) -> tuple[float, int, int]:
            victim, suspect = pairs[index]
            asked = self.asked[suspect]
            return (self.score(victim, suspect, sensors) / (1 + discount * asked), -asked,
                    -index)

        return pairs[max(range(len(pairs)), key=value)]
