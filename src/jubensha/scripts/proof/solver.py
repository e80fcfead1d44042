"""The solver: which answers (murderers, weapon) the revealed facts leave possible.

The rules every generated mystery states: the murderers had a motive that the game shows,
could reach the weapon (means), and were at the scene when the victim died (opportunity).
A fact is always true when the game reveals it as a thing (a clue card on the table, the
background, an act's text); a character's words, and a card a character holds, are true
unless that character is a murderer of the answer being weighed (a murderer may lie or keep
a card back). So an answer is consistent when the facts that hold under it can all be true
together and leave its murderers a motive, the means and the opportunity.

Places are bit masks per (person, time slot); the check is a few hundred integer
operations, so a proof's minimal supports and necessary sources (hundreds of checks) take
milliseconds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations

AT, ALONE, ALIVE, DEAD, SCENE = "at", "alone", "alive", "dead", "scene"
WEAPONS, USED, UNUSED, ACCESS, MOTIVE = "weapons", "used", "unused", "access", "motive"
PLACE_KINDS = frozenset({AT, ALONE, ALIVE, DEAD})
WEAPON_KINDS = frozenset({WEAPONS, USED, UNUSED, ACCESS})
REASONS = ("contradiction", "motive", "opportunity", "means")


@dataclass(frozen=True, slots=True)
class Fact:
    """A fact with persons, places, items and times as indices (slots of the clock).
    ``speaker`` is the character whose word (or held card) it is; -1: always true."""

    kind: str
    who: int = -1
    place: int = -1
    item: int = -1
    start: int = -1
    end: int = -1
    people: frozenset[int] = frozenset()
    items: frozenset[int] = frozenset()
    detail: str = ""
    source: int = -1
    speaker: int = -1


@dataclass(frozen=True)
class Case:
    """The world the facts speak of: ``persons`` characters, the places (``scene`` among
    them), the objects, the number of time slots and of murderers."""

    persons: int
    places: int
    scene: int
    items: int
    slots: int
    murderers: int = 1

    def candidates(self) -> list[tuple[int, ...]]:
        return list(combinations(range(self.persons), self.murderers))


@dataclass(frozen=True)
class Answer:
    murderers: tuple[int, ...]
    weapon: int


@dataclass
class Verdict:
    """An answer's murderers: the weapons left to them, or why none is."""

    murderers: tuple[int, ...]
    weapons: list[int]
    exclusions: dict[str, list[Fact]] = field(default_factory=dict)


def applied(facts: Iterable[Fact], murderers: Sequence[int]) -> list[Fact]:
    """The facts that hold if ``murderers`` are the murderers."""
    return [f for f in facts if f.speaker < 0 or f.speaker not in murderers]


def _domains(case: Case, facts: Iterable[Fact]) -> tuple[list[list[int]], int, int]:
    """Places each person may have been in each slot, and the slots the death may fall in
    (``lo`` to ``hi``, exclusive)."""
    full = (1 << case.places) - 1
    dom = [[full] * case.slots for _ in range(case.persons)]
    lo, hi = 0, case.slots
    for f in facts:
        if f.kind == AT or f.kind == ALONE:
            bit = 1 << f.place
            row = dom[f.who]
            for slot in range(f.start, f.end):
                row[slot] &= bit
            if f.kind == ALONE:
                for other in range(case.persons):
                    if other != f.who:
                        row = dom[other]
                        for slot in range(f.start, f.end):
                            row[slot] &= ~bit
        elif f.kind == ALIVE:
            lo = max(lo, f.start)
        elif f.kind == DEAD:
            hi = min(hi, f.start)
    return dom, lo, hi


def contradicted(case: Case, facts: Sequence[Fact]) -> bool:
    """Facts that cannot all be true: someone in no place at all, or no time to die in."""
    dom, lo, hi = _domains(case, facts)
    return lo >= hi or any(not place for row in dom for place in row)


def no_opportunity(case: Case, facts: Sequence[Fact], murderers: Sequence[int]) -> bool:
    """No slot of the death in which every murderer may have been at the scene: each slot
    is ruled out by a fact that puts a murderer elsewhere, or someone else alone there."""
    lo, hi = 0, case.slots
    for f in facts:
        if f.kind == ALIVE:
            lo = max(lo, f.start)
        elif f.kind == DEAD:
            hi = min(hi, f.start)
    free = set(range(lo, hi))
    for f in facts:
        if free and _keeps_away(case, f, murderers):
            free.difference_update(range(f.start, f.end))
    return not free


def _keeps_away(case: Case, fact: Fact, murderers: Sequence[int]) -> bool:
    """Whether the fact keeps a murderer from the scene over its slots."""
    if fact.kind == AT or fact.kind == ALONE:
        if fact.who in murderers:
            return fact.place != case.scene
        return fact.kind == ALONE and fact.place == case.scene
    return False


def _relevant(case: Case, fact: Fact, murderers: Sequence[int], reason: str) -> bool:
    """Whether the fact can take part in the failure ``reason`` of these murderers."""
    if reason == "opportunity":
        return fact.kind in (ALIVE, DEAD) or _keeps_away(case, fact, murderers)
    return fact.kind in TESTS[reason][1]


def no_motive(case: Case, facts: Sequence[Fact], murderers: Sequence[int]) -> bool:
    shown = {f.who for f in facts if f.kind == MOTIVE}
    return any(m not in shown for m in murderers)


def weapons(case: Case, facts: Sequence[Fact], murderers: Sequence[int]) -> list[int]:
    """The objects that fit the wound and the traces and that a murderer could reach."""
    return [item for item in range(case.items)
            if not any(_rules_out(f, item, murderers) for f in facts)]


def _rules_out(fact: Fact, item: int, murderers: Sequence[int]) -> bool:
    if fact.kind == WEAPONS:
        return item not in fact.items
    if fact.kind == USED:
        return fact.item != item
    if fact.kind == UNUSED:
        return fact.item == item
    if fact.kind == ACCESS:
        return fact.item == item and not any(m in fact.people for m in murderers)
    return False


def no_means(case: Case, facts: Sequence[Fact], murderers: Sequence[int]) -> bool:
    return not weapons(case, facts, murderers)


Test = Callable[[Case, Sequence[Fact], Sequence[int]], bool]
TESTS: dict[str, tuple[Test, frozenset[str]]] = {
    "contradiction": (lambda case, facts, _: contradicted(case, facts), PLACE_KINDS),
    "motive": (no_motive, frozenset({MOTIVE})),
    "opportunity": (no_opportunity, PLACE_KINDS),
    "means": (no_means, WEAPON_KINDS),
}
"""Each reason an answer fails, and the kinds of fact that can make it fail."""


def judge(case: Case, facts: Sequence[Fact], murderers: tuple[int, ...],
          supports: bool = False) -> Verdict:
    """The weapons an answer naming ``murderers`` leaves, or every reason it fails (with
    ``supports``: each with a minimal set of facts that shows it)."""
    held = applied(facts, murderers)
    failed: dict[str, list[Fact]] = {}
    for reason, (test, _) in TESTS.items():
        if test(case, held, murderers):
            failed[reason] = (_minimal(case, [f for f in held
                                              if _relevant(case, f, murderers, reason)],
                                       murderers, test) if supports else [])
    if failed:
        return Verdict(murderers, [], failed)
    return Verdict(murderers, weapons(case, held, murderers))


def _minimal(case: Case, facts: list[Fact], murderers: Sequence[int], test: Test
             ) -> list[Fact]:
    """A subset of ``facts`` that still fails ``test`` and from which no fact can be left
    out; facts over fewer slots are tried first and the time of death's ends last, so a
    long alibi is kept over the short stays it covers. The motive's reason keeps none:
    nothing shows one."""
    if test is no_motive:
        return []
    kept = list(facts)
    for fact in sorted(kept, key=lambda f: (f.kind in (ALIVE, DEAD), f.end - f.start)):
        trial = [f for f in kept if f is not fact]
        if test(case, trial, murderers):
            kept = trial
    return kept


def answers(case: Case, facts: Sequence[Fact]) -> list[Answer]:
    """Every (murderers, weapon) the facts leave possible."""
    found = []
    for murderers in case.candidates():
        verdict = judge(case, facts, murderers)
        found += [Answer(murderers, weapon) for weapon in verdict.weapons]
    return found


def necessary(case: Case, facts: Sequence[Fact]) -> dict[int, list[Answer]]:
    """Each source whose facts, left out, leave more than one answer: the answers then."""
    open_without = {}
    for source in sorted({f.source for f in facts}):
        left = answers(case, [f for f in facts if f.source != source])
        if len(left) > 1:
            open_without[source] = left
    return open_without
