"""Internal.

The detective's case: the model's readings added up, with no model.

The rules every murder mystery shares decide how: the murderer had a reason to want the
victim dead (*motive*), could get at the weapon (*means*), and was at the scene when the
victim died (*opportunity*). From the readings (``readings``):

- the **window** of each death: from the latest time the victim was known alive to the
  earliest by which they were dead, and the scene (the place most readings found them in);
- a suspect gains for a motive, for the weapon, for being at the scene in the window (less
  for a trace with no time: their belonging found there, a sighting before or after), and
  loses for being elsewhere in the window: the share of the window an *alibi* covers. An
  alibi told by someone else (a clue card, the seat's own sheet, another seat's words) counts
  whole; one a suspect gives of itself counts ``claim`` of it (a murderer lies);
- what a suspect says *against* itself (its own motive, the weapon in its reach, itself
  at the scene) counts ``own`` of its weight, nothing by default: the murderer hides its
  own, so such words only ever point at innocents (measured: the 1.5B model read the
  introductions "I am X, I came back to the estate when Y died" as motives, and every seat
  of a Chinese game tied at one);
- a suspect whose alibi from others covers the whole window is **cleared** (PLAYER\\*'s
  pruner): ranked after every suspect who is not, whatever else points at it.

A clue that merely names a suspect, or something they own, is no evidence here: what
counts is what the reading says the clue shows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from jubensha.agents.detective.readings import DeathFinding, Finding

SIGHTING_MINUTES = 10
"""How long a sighting at one time lasts (the time a sentence like "at 20:50 I saw her in
the hall" covers)."""
OPEN_SPAN = 60
"""The window's length when only one of its ends is known."""


@dataclass(frozen=True)
class Weights:
    """How much each kind of reading counts (``DetectiveConfig`` sets them)."""

    motive: float = 1.0
    weapon: float = 1.0
    scene: float = 1.5
    trace: float = 0.5
    alibi: float = 2.0
    claim: float = 0.5
    own: float = 0.0


@dataclass(frozen=True)
class Window:
    """When and where a victim died, as far as the readings tell."""

    start: int | None
    end: int | None
    scene: str

    @property
    def known(self) -> bool:
        return self.start is not None and self.end is not None


@dataclass(frozen=True)
class Point:
    """One reading's weight for (positive) or against (negative) a suspect."""

    kind: str
    points: float
    text: str
    source: str


@dataclass
class Weighed:
    """A suspect's standing: the sum of its points, and whether an alibi cleared it."""

    name: str
    points: list[Point] = field(default_factory=list)
    cleared: bool = False
    tiebreak: float = 0.0

    @property
    def score(self) -> float:
        return sum(p.points for p in self.points)

    @property
    def reasons(self) -> list[Point]:
        """The points against it, strongest first."""
        return sorted((p for p in self.points if p.points > 0), key=lambda p: -p.points)

    def rank_key(self) -> tuple[bool, float, float]:
        return (self.cleared, -self.score, -self.tiebreak)


@dataclass
class Case:
    """Every reading a seat has, and the suspects they point at."""

    weights: Weights = field(default_factory=Weights)
    findings: list[Finding] = field(default_factory=list)
    deaths: list[DeathFinding] = field(default_factory=list)

    def window(self, victim: str) -> Window:
        found = [d for d in self.deaths if d.victim == victim]
        alive = max((d.alive_at for d in found if d.alive_at is not None), default=None)
        deads = [d.dead_by for d in found if d.dead_by is not None
                 and (alive is None or d.dead_by >= alive)]
        dead = min(deads, default=None)
        places = Counter(d.found_in.casefold() for d in found if d.found_in)
        scene = places.most_common(1)[0][0] if places else ""
        if alive is None and dead is not None:
            alive = dead - OPEN_SPAN
        elif dead is None and alive is not None:
            dead = alive + OPEN_SPAN
        return Window(alive, dead, scene)

    def weigh(self, candidates: Sequence[str], victim: str,
              tiebreak: Mapping[str, float] | None = None) -> list[Weighed]:
        """The candidates, most suspicious first (cleared ones last)."""
        window = self.window(victim)
        ranked = [self._weigh(name, window, (tiebreak or {}).get(name, 0.0))
                  for name in candidates]
        return sorted(ranked, key=Weighed.rank_key)

    def _weigh(self, name: str, window: Window, tiebreak: float) -> Weighed:
        mine = [f for f in self.findings if f.person == name]
        weighed = Weighed(name, tiebreak=tiebreak)
        for kind in ("motive", "weapon"):
            found = [f for f in mine if f.fact == kind]
            weighed.points += self._strongest(kind, getattr(self.weights, kind), name, found)
        places = [f for f in mine if f.fact == "whereabouts"]
        weighed.points += self._presence(name, places, window)
        alibi, cleared = self._alibi(name, places, window)
        weighed.points += alibi
        weighed.cleared = cleared
        return weighed

    def _strongest(self, kind: str, weight: float, name: str, found: list[Finding]
                   ) -> list[Point]:
        """One point of ``kind`` from the first finding told by another, else from the
        suspect's own words at ``own`` of the weight (none when that is nothing)."""
        told = next((f for f in found if f.source != name), None)
        if told is not None:
            return [Point(kind, weight, told.text, told.source)]
        own = next((f for f in found if f.source == name), None)
        if own is None or self.weights.own <= 0:
            return []
        return [Point(kind, weight * self.weights.own, own.text, own.source)]

    def _presence(self, name: str, places: list[Finding], window: Window) -> list[Point]:
        """The strongest reading putting the suspect at the scene: in the window, or a
        trace with no time."""
        at_scene = [f for f in places if window.scene and same_place(f.place, window.scene)]
        timed = [f for f in at_scene if f.start is not None]
        inside = [f for f in timed if window.known and overlap(f, window) > 0]
        untimed = [f for f in at_scene if f.start is None or not window.known]
        return (self._strongest("scene", self.weights.scene, name, inside)
                or self._strongest("trace", self.weights.trace, name, untimed))

    def _alibi(self, name: str, places: list[Finding], window: Window
               ) -> tuple[list[Point], bool]:
        """The best alibi from others and the best the suspect gave itself, as negative
        points by the share of the window each covers; cleared when others' cover all."""
        if not window.known:
            return [], False
        elsewhere = [f for f in places if f.start is not None and f.place
                     and not (window.scene and same_place(f.place, window.scene))]
        points: list[Point] = []
        cleared = False
        for told_by_self in (False, True):
            told = [f for f in elsewhere if (f.source == name) == told_by_self]
            if not told:
                continue
            best = max(told, key=lambda f: overlap(f, window))
            share = overlap(best, window) / span(window)
            if share <= 0:
                continue
            weight = self.weights.alibi * (self.weights.claim if told_by_self else 1.0)
            kind = "claimed alibi" if told_by_self else "alibi"
            points.append(Point(kind, -weight * share, best.text, best.source))
            cleared = cleared or (not told_by_self and share >= 1.0)
        return points, cleared


def same_place(one: str, other: str) -> bool:
    """Whether two place names are the same place ("the stateroom", "stateroom")."""
    a, b = one.casefold().strip(), other.casefold().strip()
    return bool(a and b) and (a in b or b in a)


def span(window: Window) -> int:
    assert window.start is not None and window.end is not None
    return max(window.end - window.start, SIGHTING_MINUTES)


def overlap(finding: Finding, window: Window) -> int:
    """Minutes of the window the finding's time covers (a sighting covers ten)."""
    if finding.start is None or window.start is None or window.end is None:
        return 0
    end = finding.end if finding.end is not None and finding.end > finding.start \
        else finding.start + SIGHTING_MINUTES
    if window.end == window.start:  # a death known to the minute
        return SIGHTING_MINUTES if finding.start <= window.start < end else 0
    return max(0, min(end, window.end) - max(finding.start, window.start))
