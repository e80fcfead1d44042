"""What the game reveals of a world: the sources (the background, clue cards, each
innocent character's timeline entries and act sheets) and the facts each one states.

Every fact is true of the world, so the true answer stays consistent whatever is added;
what makes the answer unique is planned: a motive card for the murderer, a window on the
time of death, an alibi over it for every innocent character with a motive and the means,
and the weapon pinned down with who could reach it for those with a motive but no means.
The rival's alibi goes where the difficulty puts the deciding source.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from jubensha.scripts.generate.world import World
from jubensha.scripts.proof.model import Where
from jubensha.scripts.proof.solver import (
    ACCESS,
    ALIVE,
    ALONE,
    AT,
    DEAD,
    MOTIVE,
    SCENE,
    UNUSED,
    USED,
    WEAPONS,
    Fact,
)


@dataclass
class Card:
    """One source: where the game reveals it, its facts, and what its text is about."""

    id: int
    where: Where
    role: str
    facts: list[Fact] = field(default_factory=list)
    character: int = -1
    """The timeline's or act sheet's owner (-1: nobody's words)."""
    act: int = 1
    location: int = -1
    key: bool = False
    misleading: bool = False
    subject: int = -1
    """The person a trace card names."""
    slot: int = -1
    phrase: str = ""
    """The kind of sentence that states the facts (phrases.<lang>.yaml)."""
    companion: int = -1
    number: int = 0
    """A clue card's number among the clue cards (its id is ``c`` and the number)."""


@dataclass
class Plan:
    cards: list[Card]

    def facts(self) -> list[Fact]:
        return [fact for card in self.cards for fact in card.facts]

    def by_id(self, source: int) -> Card:
        return self.cards[source]

    def add(self, where: Where, role: str, phrase: str = "", **fields: object) -> Card:
        card = Card(id=len(self.cards), where=where, role=role, phrase=phrase,
                    **fields)  # type: ignore[arg-type]
        if where == "clue":
            card.number = 1 + sum(c.where == "clue" for c in self.cards)
        self.cards.append(card)
        return card

    def state(self, card: Card, kind: str, **fields: object) -> None:
        speaker = card.character if card.where in ("timeline", "act_sheet") else -1
        card.facts.append(Fact(kind=kind, source=card.id, speaker=speaker,
                               **fields))  # type: ignore[arg-type]


def plan(world: World, rng: random.Random) -> Plan:
    """Every source of the world's game, the facts each states, and where it lies."""
    evidence = Plan([])
    _background(evidence, world)
    _autopsy(evidence, world)
    _weapon(evidence, world, rng)
    _motives(evidence, world, rng)
    _records(evidence, world, rng)
    for person in world.innocents:
        _timeline(evidence, world, person)
    _sightings(evidence, world, rng)
    for person in world.innocents:
        _saw_someone(evidence, world, person)
    _traces(evidence, world, rng)
    return evidence


def _hidden(world: World, rng: random.Random) -> bool:
    return rng.random() < world.knobs.located


def _later(world: World, rng: random.Random) -> int:
    return rng.randint(1, world.acts)


def _background(evidence: Plan, world: World) -> None:
    card = evidence.add("background", "background", "found")
    evidence.state(card, SCENE, place=world.scene)
    evidence.state(card, DEAD, start=world.found)
    if world.knobs.window == "public":
        window = evidence.add("background", "window", "window")
        evidence.state(window, ALIVE, start=world.lo)
        evidence.state(window, DEAD, start=world.hi)
    elif world.knobs.window == "half":
        alive = evidence.add("background", "alive", "alive")
        evidence.state(alive, ALIVE, start=world.lo)


def _autopsy(evidence: Plan, world: World) -> None:
    card = evidence.add("clue", "autopsy", "weapons", key=True)
    evidence.state(card, WEAPONS, items=frozenset([world.weapon, *world.twins]))
    if world.knobs.window == "public":
        return
    hidden = world.knobs.window == "hidden"
    time = evidence.add("clue", "time", "dead", key=True,
                        location=world.scene if hidden else -1,
                        act=world.acts if hidden else 1)
    evidence.state(time, DEAD, start=world.hi)


def _weapon(evidence: Plan, world: World, rng: random.Random) -> None:
    """The traces that tell the weapon from its twins, and who could reach it."""
    if world.twins:
        if world.knobs.used_trace:
            card = evidence.add("clue", "used", "used", key=True,
                                location=_place(world, rng), act=_later(world, rng))
            evidence.state(card, USED, item=world.weapon)
        for twin in world.twins:
            card = evidence.add("clue", "unused", "unused", key=True,
                                location=_place(world, rng) if _hidden(world, rng) else -1)
            evidence.state(card, UNUSED, item=twin)
    if any(route == "means" for route in world.routes.values()):
        card = evidence.add("clue", "access", "access", key=True,
                            location=_place(world, rng) if _hidden(world, rng) else -1)
        evidence.state(card, ACCESS, item=world.weapon, people=frozenset(world.access))


def _place(world: World, rng: random.Random) -> int:
    return rng.randrange(len(world.places))


def _motives(evidence: Plan, world: World, rng: random.Random) -> None:
    """A card for each motive; an innocent's may be heard instead (a quarrel)."""
    for person, motive in sorted(world.motives.items()):
        innocent = person not in world.murderers
        hearers = [i for i in world.innocents if i != person]
        if innocent and hearers and rng.random() < 0.3:
            hearer = rng.choice(hearers)
            card = evidence.add("timeline", "threat", "motive.threat", character=hearer,
                                slot=rng.randint(0, world.lo - 2), subject=person)
            evidence.state(card, MOTIVE, who=person, detail="threat")
            continue
        card = evidence.add("clue", "motive", f"motive.{motive}", key=not innocent,
                            subject=person,
                            location=_place(world, rng) if _hidden(world, rng) else -1,
                            act=_later(world, rng) if innocent else 1)
        evidence.state(card, MOTIVE, who=person, detail=motive)


def _records(evidence: Plan, world: World, rng: random.Random) -> None:
    """A record (a book, a log) for each single innocent character's whereabouts over the
    time of death; the rival's lies where the deciding source has to."""
    for single in world.singles:
        if world.routes.get(single) != "opportunity":
            continue
        decider = world.knobs.decider if single == world.rival else ""
        located = decider == "investigation" or (not decider and _hidden(world, rng))
        act = world.acts if decider == "later_act" else 1 if decider else _later(world, rng)
        card = evidence.add("clue", "record", "at", key=True, subject=single, act=act,
                            location=world.record_place[single] if located else -1)
        evidence.state(card, AT, who=single, place=world.record_place[single],
                       start=world.lo - 1, end=world.hi + 1)


def segments(world: World, person: int) -> list[tuple[int, int, int, frozenset[int]]]:
    """The person's stays before the body is found, split where the place or the company
    changes: (place, start, end, the characters present the whole time)."""
    row = world.schedule[person]
    stays: list[tuple[int, int, int, frozenset[int]]] = []
    for slot in range(world.found):
        company = frozenset(p for p, other in enumerate(world.schedule)
                            if p != person and other[slot] == row[slot])
        if stays and stays[-1][0] == row[slot] and stays[-1][3] == company:
            place, start, _, _ = stays[-1]
            stays[-1] = (place, start, slot + 1, company)
        else:
            stays.append((row[slot], slot, slot + 1, company))
    return stays


def _timeline(evidence: Plan, world: World, person: int) -> None:
    """An innocent character's timeline: one entry per stay, with the company kept; the
    rival's only alibi moves to the last act's sheet where the deciding source must."""
    for place, start, end, company in segments(world, person):
        if place == world.scene and start < world.lo:
            continue  # an early visit to the scene: the character's secret, not testimony
        victim_there = any(world.victim_at[s] == place for s in range(start, end))
        companion = _companion(world, person, company)
        where: Where = "timeline"
        act = 1
        if companion == world.rival and world.knobs.decider == "testimony" and world.acts > 1 \
                and _covers(world, start, end):
            where, act = "act_sheet", world.acts
        phrase = "with" if companion >= 0 else "self" if company or victim_there else "alone"
        card = evidence.add(where, "stay", phrase, character=person, act=act, slot=start,
                            companion=companion)
        evidence.state(card, ALONE if phrase == "alone" else AT, who=person, place=place,
                       start=start, end=end)
        if companion >= 0:
            evidence.state(card, AT, who=companion, place=place, start=start, end=end)
        if _sees_alive(world, person, place, start, end):
            card = evidence.add("timeline", "alive", "alive", character=person,
                                slot=world.lo, key=True)
            evidence.state(card, ALIVE, start=world.lo)


def _saw_someone(evidence: Plan, world: World, person: int) -> None:
    """A character whose timeline names nobody tells when it last saw the victim alive
    (where both were, before the time of death): everyone saw something."""
    if any(c.character == person and (c.companion >= 0 or c.subject >= 0 or c.role == "alive")
           for c in evidence.cards):
        return
    seen = [s for s in range(world.lo) if world.victim_at[s] == world.schedule[person][s]]
    if seen:
        card = evidence.add("timeline", "alive", "alive", character=person, slot=seen[-1])
        evidence.state(card, ALIVE, start=seen[-1])


def _covers(world: World, start: int, end: int) -> bool:
    return start <= world.lo and end >= world.hi


def _sees_alive(world: World, person: int, place: int, start: int, end: int) -> bool:
    """Whether this stay is where the person, one of the witness's group, saw the victim
    alive at the start of the time of death (each of them says so)."""
    group = next((g for g in world.groups if world.witness in g.members), None)
    return (group is not None and person in group.members and place == world.alive_place
            and start <= world.lo < end)


def _companion(world: World, person: int, company: frozenset[int]) -> int:
    """Whom an entry names: the next member of the person's group (so that each member's
    alibi comes from exactly one other's words), else the first innocent present."""
    for group in world.groups:
        if person in group.members:
            nxt = group.members[(group.members.index(person) + 1) % len(group.members)]
            if nxt in company:
                return nxt
    present = sorted(company, key=lambda p: (p in world.murderers, p))
    return present[0] if present else -1


def _sightings(evidence: Plan, world: World, rng: random.Random) -> None:
    """A pointer seen by an innocent (the murderer going into the scene at the murder)
    and misleading ones (an innocent going in before the time of death)."""
    innocents = world.innocents
    if world.knobs.pointers > 1:
        for murderer in world.murderers:
            seer = innocents[(1 + murderer) % len(innocents)]
            card = evidence.add("timeline", "pointer", "saw", character=seer,
                                slot=world.murder, subject=murderer, key=True)
            evidence.state(card, AT, who=murderer, place=world.scene, start=world.murder,
                           end=world.murder + 1)
    for visitor, slot in sorted(world.early.items()):
        seers = [i for i in innocents if i != visitor and world.schedule[i][slot] != world.scene]
        if seers:
            card = evidence.add("timeline", "early", "saw", character=rng.choice(seers),
                                slot=slot, subject=visitor, misleading=True)
            evidence.state(card, AT, who=visitor, place=world.scene, start=slot, end=slot + 1)


def _traces(evidence: Plan, world: World, rng: random.Random) -> None:
    """Things found that name someone: the murderer's belonging at the scene and the
    weapon hidden among the murderer's things (pointers), early visitors' belongings
    (misleading); no fact of the proof rests on them."""
    for murderer in world.murderers:
        if world.knobs.pointers > 0:
            evidence.add("clue", "trace", subject=murderer, location=world.scene, key=True)
        if world.knobs.pointers > 2:
            evidence.add("clue", "hidden", subject=murderer, key=True, act=world.acts)
    for visitor in sorted(world.early):
        evidence.add("clue", "trace", subject=visitor, misleading=True,
                     location=world.scene if _hidden(world, rng) else -1,
                     act=_later(world, rng))
