"""What a reader of the game has learned: facts read from the texts the game reveals, each
text one source, with the persons, places, objects and clock they speak of as the solver's
indices. ``scripts validate`` keeps one with the proof's own vocabulary; the ``solver``
agent keeps one per seat, learning places and objects as the texts name them."""

from __future__ import annotations

from jubensha.scripts.model import Language
from jubensha.scripts.proof.phrases import Reader, Said
from jubensha.scripts.proof.solver import SCENE, Answer, Case, Fact, answers

DAY = 24 * 60
NEEDS = {"at": ("who", "place"), "alone": ("who", "place"), "scene": ("place",),
         "used": ("item",), "unused": ("item",), "access": ("item",), "motive": ("who",)}
"""What each kind of fact must name to mean anything."""


class Notebook:
    """Facts as the solver reads them. With ``places`` and ``items`` given, a sentence that
    names another states nothing; without, each new name is learned. Times count in
    ``step``-minute slots from ``start``."""

    def __init__(self, lang: Language, persons: list[str], victims: list[str], *,
                 places: list[str] | None = None, items: list[str] | None = None,
                 start: str = "12:00", step: int = 10, slots: int = DAY // 10,
                 murderers: int = 1):
        self.reader = Reader(lang, persons, victims, places, items)
        self.persons = {name: i for i, name in enumerate(persons)}
        self.places = {name: i for i, name in enumerate(places or [])}
        self.items = {name: i for i, name in enumerate(items or [])}
        self.fixed = places is not None
        self.start = _minutes(start)
        self.step = step
        self.slots = slots
        self.murderers = murderers
        self.facts: list[Fact] = []
        self.sources = 0

    def slot(self, time: str | None) -> int:
        """A time's slot; ValueError when it falls between slots of the clock or after
        its last slot (the end of the last slot is the clock's end)."""
        if time is None:
            return -1
        offset = (_minutes(time) - self.start) % DAY
        if offset % self.step:
            raise ValueError(f"{time} is not on the clock of {self.step}-minute slots")
        if offset // self.step > self.slots:
            raise ValueError(f"{time} is outside the clock's {self.slots} slots")
        return offset // self.step

    def read(self, text: str, owner: str | None = None) -> list[Fact]:
        """Learn the facts ``text`` states, as one source; ``owner`` is whose words (or
        card) they are, and the "I" or "you" of its sentences."""
        source = self.sources
        self.sources += 1
        speaker = self.persons.get(owner or "", -1)
        found = []
        for said in self.reader.read(text, owner):
            fact = self.fact(said, source, speaker)
            if fact is not None:
                found.append(fact)
        self.facts += found
        return found

    def fact(self, said: Said, source: int = -1, speaker: int = -1) -> Fact | None:
        """A sentence's fact in indices, or None when it names what the notebook does not
        know, or a time off the clock (a sighting lasts one slot)."""
        try:
            start = self.slot(said.start)
            end = self.slot(said.end) if said.end else start + 1 if said.kind == "at" else -1
        except ValueError:
            return None
        fact = Fact(kind=said.kind, who=self.persons.get(said.who or "", -1),
                    place=self._index(self.places, said.place),
                    item=self._index(self.items, said.item), start=start,
                    end=end if said.kind in ("at", "alone") else -1,
                    people=frozenset(self.persons.get(p, -1) for p in said.people),
                    items=frozenset(self._index(self.items, i) for i in said.items),
                    detail=said.detail or "", source=source, speaker=speaker)
        known = all(getattr(fact, name) >= 0 for name in NEEDS.get(fact.kind, ()))
        return fact if known and -1 not in fact.people and -1 not in fact.items else None

    def _index(self, table: dict[str, int], name: str | None) -> int:
        if name is None:
            return -1
        if name not in table and not self.fixed:
            table[name] = len(table)
        return table.get(name, -1)

    def case(self, scene: int | None = None) -> Case | None:
        """The world as far as the facts show it; None while no fact names the scene."""
        scenes = [f.place for f in self.facts if f.kind == SCENE]
        chosen = scene if scene is not None else scenes[-1] if scenes else -1
        if chosen < 0:
            return None
        return Case(persons=len(self.persons), places=max(len(self.places), 1), scene=chosen,
                    items=len(self.items), slots=self.slots, murderers=self.murderers)

    def answers(self, scene: int | None = None) -> list[Answer]:
        case = self.case(scene)
        return [] if case is None else answers(case, self.facts)


def _minutes(time: str) -> int:
    hours, minutes = time.split(":")
    return int(hours) * 60 + int(minutes)
