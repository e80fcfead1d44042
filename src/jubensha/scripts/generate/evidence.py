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
    for person in range(len(world.people)):
        if not world.knobs.quiet:
            _saw_someone(evidence, world, person)
    _traces(evidence, world, rng)
    _even_cards(evidence, world, rng)
    _even_mentions(evidence, world, rng)
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
    card = evidence.add("clue", "autopsy", "weapons")
    evidence.state(card, WEAPONS, items=frozenset([world.weapon, *world.twins]))
    if world.knobs.window == "public":
        return
    hidden = world.knobs.window == "hidden"
    time = evidence.add("clue", "time", "dead",
                        location=world.scene if hidden else -1,
                        act=world.acts if hidden else 1)
    evidence.state(time, DEAD, start=world.hi)
    if hidden:
        alive = evidence.add("clue", "alive", "alive", location=world.alive_place)
        evidence.state(alive, ALIVE, start=world.lo)


def _weapon(evidence: Plan, world: World, rng: random.Random) -> None:
    """The traces that tell the weapon from its twins, and who could reach it."""
    if world.twins:
        if world.knobs.used_trace:
            card = evidence.add("clue", "used", "used",
                                location=_place(world, rng), act=_later(world, rng))
            evidence.state(card, USED, item=world.weapon)
        for twin in world.twins:
            card = evidence.add("clue", "unused", "unused",
                                location=_place(world, rng) if _hidden(world, rng) else -1)
            evidence.state(card, UNUSED, item=twin)
    if any(route == "means" for route in world.routes.values()):
        card = evidence.add("clue", "access", "access",
                            location=_place(world, rng) if _hidden(world, rng) else -1)
        evidence.state(card, ACCESS, item=world.weapon, people=frozenset(world.access))


def _place(world: World, rng: random.Random) -> int:
    return rng.randrange(len(world.places))


def _motives(evidence: Plan, world: World, rng: random.Random) -> None:
    """A card for each motive; anyone's may be heard instead (a quarrel), unless the
    sheets keep quiet about the victim."""
    for person, motive in sorted(world.motives.items()):
        innocent = person not in world.murderers
        hearers = [i for i in world.innocents if i != person]
        if hearers and not world.knobs.quiet and rng.random() < 0.3:
            hearer = rng.choice(hearers)
            card = evidence.add("timeline", "threat", "motive.threat", character=hearer,
                                slot=rng.randint(0, world.lo - 2), subject=person)
            evidence.state(card, MOTIVE, who=person, detail="threat")
            continue
        card = evidence.add("clue", "motive", f"motive.{motive}", subject=person,
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
        card = evidence.add("clue", "record", "at", subject=single, act=act,
                            location=world.record_place[single] if located else -1)
        evidence.state(card, AT, who=single, place=world.record_place[single],
                       start=world.lo - 1, end=world.hi + 1)


def segments(world: World, person: int, row: list[int] | None = None
             ) -> list[tuple[int, int, int, frozenset[int]]]:
    """The person's stays before the body is found (by ``row``, their places, when given:
    an account), split where the place or the company changes: (place, start, end, the
    characters present the whole time)."""
    row = world.schedule[person] if row is None else row
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


@dataclass
class Entry:
    """One timeline entry: a stay, whom it names (-1: nobody) and its kind of sentence."""

    place: int
    start: int
    end: int
    companion: int
    phrase: str


def entries(world: World, person: int, row: list[int] | None = None) -> list[Entry]:
    """A timeline's entries: one per stay, adjacent stays in one place with the same
    companion merged (an entry never repeats the one before it), the company named."""
    found: list[Entry] = []
    for place, start, end, company in segments(world, person, row):
        victim_there = any(world.victim_at[s] == place for s in range(start, end))
        companion = _companion(world, person, company)
        phrase = "with" if companion >= 0 else "self" if company or victim_there else "alone"
        last = found[-1] if found else None
        if last is not None and last.place == place and last.companion == companion:
            last.end = end
            last.phrase = phrase if phrase == last.phrase else "self"
        else:
            found.append(Entry(place, start, end, companion, phrase))
    return found


def account(world: World, murderer: int) -> list[int]:
    """The places a murderer's own account gives: the truth, but the hideout at the
    murder and the place before it at an earlier visit to the scene."""
    row = list(world.schedule[murderer])
    row[world.murder] = world.hideout
    if murderer in world.early:
        slot = world.early[murderer]
        row[slot] = row[slot - 1] if slot > 0 else row[slot + 1]
    return row


def _timeline(evidence: Plan, world: World, person: int) -> None:
    """An innocent character's timeline: one entry per stay, with the company kept; the
    rival's only alibi moves to the last act's sheet where the deciding source must. A
    visitor who hides the visit to the scene leaves it out."""
    for entry in entries(world, person):
        place, start, end, companion = entry.place, entry.start, entry.end, entry.companion
        if place == world.scene and start < world.lo and person in world.hidden:
            continue  # the visit the character's secret keeps back
        where: Where = "timeline"
        act = 1
        if companion == world.rival and world.knobs.decider == "testimony" and world.acts > 1 \
                and _covers(world, start, end):
            where, act = "act_sheet", world.acts
        card = evidence.add(where, "stay", entry.phrase, character=person, act=act, slot=start,
                            companion=companion)
        evidence.state(card, ALONE if entry.phrase == "alone" else AT, who=person, place=place,
                       start=start, end=end)
        if companion >= 0:
            evidence.state(card, AT, who=companion, place=place, start=start, end=end)


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


def _seers(world: World, slot: int, away: int) -> list[int]:
    """Everyone not at ``away`` in ``slot`` (the murderer by the account they give), nor
    in the scene on a visit then."""
    rows = {p: account(world, p) if p in world.murderers else world.schedule[p]
            for p in range(len(world.people))}
    return [p for p, row in rows.items() if row[slot] != away
            and not (p in world.early and world.early[p] == slot)]


def _sightings(evidence: Plan, world: World, rng: random.Random) -> None:
    """Who was seen going into the scene: each visitor who leaves the visit out of their
    own account (someone else must tell it), and the murderer at the murder when the
    difficulty lets a witness catch the lie."""
    seen = {v: slot for v, slot in world.early.items() if v in world.hidden}
    if world.knobs.caught != "no":
        seen.update(dict.fromkeys(world.murderers, world.murder))
    for person, slot in sorted(seen.items()):
        at_murder = person in world.murderers and slot == world.murder
        witnesses = world.knobs.witnesses if at_murder else world.knobs.visit_witnesses
        seers = [i for i in world.innocents if world.schedule[i][slot] != world.scene
                 and i != person]
        for seer in rng.sample(seers, min(witnesses, len(seers))):
            joined = at_murder and world.knobs.caught == "joined"
            card = evidence.add("timeline", "seen", "joined" if joined else "saw",
                                character=seer, slot=slot, subject=person)
            evidence.state(card, AT, who=person, place=world.scene, start=slot, end=slot + 1)


def _traces(evidence: Plan, world: World, rng: random.Random) -> None:
    """Everyone's belonging turns up somewhere: at the scene for those who were there (a
    visitor's, or the murderer's) when the difficulty leaves traces, else where its
    owner spent part of the evening; no fact of the proof rests on them."""
    for person in range(len(world.people)):
        at_scene = world.knobs.traces and (person in world.early or person in world.murderers)
        place = world.scene if at_scene else world.schedule[person][rng.randrange(world.lo)]
        evidence.add("clue", "trace" if at_scene else "belonging", subject=person,
                     location=place, act=_later(world, rng))


def _named(card: Card) -> set[int]:
    named = {f.who for f in card.facts if f.who >= 0}
    named |= {p for f in card.facts for p in f.people}
    if card.subject >= 0:
        named.add(card.subject)
    return named


def _even_cards(evidence: Plan, world: World, rng: random.Random) -> None:
    """As many clue cards name each character as any other: a record of where someone
    was before the time of death (true, and outside it) for each one short."""
    counts = {p: 0 for p in range(len(world.people))}
    for card in evidence.cards:
        if card.where == "clue":
            for person in _named(card):
                counts[person] += 1
    most = max(counts.values())
    for person, count in counts.items():
        for _ in range(most - count):
            slot = rng.choice([t for t in range(world.lo - 1)
                               if world.schedule[person][t] != world.scene])
            card = evidence.add("clue", "record", "at", subject=person,
                                act=_later(world, rng))
            evidence.state(card, AT, who=person, place=world.schedule[person][slot],
                           start=slot, end=slot + 1)


def _even_mentions(evidence: Plan, world: World, rng: random.Random) -> None:
    """As many mentions of each character in the others' timelines (the murderer's account
    counted) as of any other: a passing sighting away from the time of death, told by
    someone who was elsewhere, for each one short. Then rounds of one more sighting of
    everyone, each told by whoever has the shortest timeline, so that no timeline's
    length stands out either."""
    counts = mentions(evidence, world)
    most = max(counts.values())
    said: set[tuple[int, int, int, int]] = set()
    for person, count in counts.items():
        for _ in range(most - count):
            _passing(evidence, world, rng, person, said, shortest=False)
    for _ in range(ROUNDS):
        lengths = [len(told(evidence, world, p)) for p in range(len(world.people))]
        everyone = range(len(world.people))
        if max(lengths) - min(lengths) <= 1 or not all(
                _options(world, p, said) for p in everyone):
            break  # a round that could not name everyone would undo the mentions' balance
        for person in everyone:
            _passing(evidence, world, rng, person, said, shortest=True)


ROUNDS = 3
"""Rounds of sightings that even out the timelines' lengths."""


def _options(world: World, person: int, said: set[tuple[int, int, int, int]]
             ) -> list[tuple[int, int, int]]:
    """Every (slot, place, seer) of a passing sighting of ``person`` away from the time of
    death that would not repeat the seer's sighting of them there a slot before or
    after."""
    outside = [*range(world.lo - 1), *range(world.hi + 1, world.found)]
    options = []
    for slot in outside:
        place = world.schedule[person][slot]
        if place != world.scene:
            options += [(slot, place, p) for p in _seers(world, slot, place)
                        if p != person and not {(p, person, place, slot + d)
                                                for d in (-1, 0, 1)} & said]
    return options


def _passing(evidence: Plan, world: World, rng: random.Random, person: int,
             said: set[tuple[int, int, int, int]], shortest: bool) -> None:
    """One passing sighting of ``person`` away from the time of death, if anyone can tell
    it (never the seer's sighting of them in that place again)."""
    options = _options(world, person, said)
    if not options:
        return
    if shortest:
        length = {p: len(told(evidence, world, p)) for p in range(len(world.people))}
        fewest = min(length[p] for *_, p in options)
        options = [o for o in options if length[o[2]] == fewest]
    slot, place, seer = rng.choice(options)
    said.add((seer, person, place, slot))
    card = evidence.add("timeline", "passing", "saw", character=seer, slot=slot,
                        subject=person)
    evidence.state(card, AT, who=person, place=place, start=slot, end=slot + 1)


def told(evidence: Plan, world: World, person: int) -> list[Card | Entry]:
    """A timeline in the order it is written: the cards of the person's words, and for a
    murderer the stays of their account among them, by time."""
    cards: list[Card | Entry] = [c for c in evidence.cards
                                 if c.where == "timeline" and c.character == person]
    if person in world.murderers:
        cards += entries(world, person, account(world, person))
    return sorted(cards, key=lambda c: (c.start, -1, 0) if isinstance(c, Entry)
                  else (c.slot, c.id, 1))


def mentions(evidence: Plan, world: World) -> dict[int, int]:
    """How often each character is named in the others' timelines."""
    counts = {p: 0 for p in range(len(world.people))}
    for card in evidence.cards:
        if card.where == "timeline":
            for person in _named(card) - {card.character}:
                counts[person] += 1
    for murderer in world.murderers:
        for entry in entries(world, murderer, account(world, murderer)):
            if entry.companion >= 0:
                counts[entry.companion] += 1
    return counts
