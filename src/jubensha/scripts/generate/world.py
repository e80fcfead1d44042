"""The world behind a generated mystery, drawn from a seed before any text exists: the
setting, the people and their roles, the places, the objects that could have been the
weapon, the clock of the evening in ten-minute slots, where everyone was in each slot, who
killed whom with what and why, and which innocent characters had a motive too.

Everything here is language-neutral (keys and indices), so the English and the Chinese
scripts of one seed are the same mystery. ``draw`` never fails: the evidence planned on a
world (``evidence``) is what the generator checks and may redraw.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

import yaml

from jubensha.scripts.generate.knobs import Knobs

STEP = 10
"""Minutes per time slot."""
SLOTS = 18
"""Slots of the evening the facts speak of (three hours)."""
MOTIVES = ("debt", "inheritance", "blackmail", "jealousy", "revenge", "dismissal", "fraud",
           "stolen_work")
SECRETS = ("affair", "theft", "past", "gambling", "letter")
"""What took an innocent character into the scene before the death, and why they would
rather not say so."""
TRAITS = 12
"""Speaking styles in the text files (performance notes)."""


@cache
def settings() -> dict[str, Any]:
    path = resources.files("jubensha.scripts.generate") / "data" / "settings.yaml"
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data


@dataclass
class Person:
    gender: str
    given: int
    family: int
    age: int
    role: str
    trait: int


@dataclass
class Group:
    """Innocent characters together in one place over the whole time of death."""

    members: list[int]
    place: int
    start: int
    end: int


@dataclass
class World:
    seed: int
    knobs: Knobs
    acts: int
    setting: str
    venue: int
    era: int
    start: int
    """Minutes after midnight at which slot 0 starts."""
    people: list[Person]
    victim: Person
    victim_role: str
    places: list[str]
    scene: int
    items: list[str]
    kinds: list[str]
    weapon: int
    murderers: tuple[int, ...]
    murder: int
    lo: int
    hi: int
    found: int
    finder: int
    hideout: int
    schedule: list[list[int]]
    victim_at: list[int]
    motives: dict[int, str]
    routes: dict[int, str]
    """Each innocent character's way out: means (cannot reach the weapon) or opportunity
    (an alibi over the time of death). Everyone has a motive the game shows."""
    groups: list[Group]
    singles: list[int]
    """Innocent characters alone over the time of death: a record gives their alibi."""
    rival: int
    """The suspect whose alibi is the deciding source."""
    alive_place: int
    """Where the victim was last seen alive, at the start of the time of death."""
    early: dict[int, int] = field(default_factory=dict)
    """Characters at the scene before the time of death, and the slot (one each)."""
    secrets: dict[int, str] = field(default_factory=dict)
    """Why each innocent visitor went into the scene: their secret."""
    hidden: frozenset[int] = frozenset()
    """Visitors who leave the visit out of their timeline (a lie by omission)."""
    before: int = -1
    """Where the murderer was from just before the time of death until the murder."""
    access: tuple[int, ...] = ()
    twins: list[int] = field(default_factory=list)
    record_place: dict[int, int] = field(default_factory=dict)
    """Where each single innocent character spent the time of death."""

    @property
    def innocents(self) -> list[int]:
        return [i for i in range(len(self.people)) if i not in self.murderers]

    @property
    def suspects(self) -> list[int]:
        return [i for i, route in self.routes.items() if route == "opportunity"]

    def time(self, slot: int) -> str:
        minutes = self.start + slot * STEP
        return f"{minutes // 60 % 24:02d}:{minutes % 60:02d}"

    def slot(self, time: str) -> int:
        """The slot a time of the evening starts (times wrap at midnight)."""
        hours, minutes = time.split(":")
        return (int(hours) * 60 + int(minutes) - self.start) % (24 * 60) // STEP


def draw(seed: int, players: int, acts: int, knobs: Knobs, attempt: int = 0) -> World:
    """A world for ``players`` characters; ``attempt`` draws another from the same seed."""
    rng = random.Random(f"jubensha-generate/{seed}/{players}/{acts}/{knobs.level}/{attempt}")
    setting = rng.choice(sorted(settings()))
    data = settings()[setting]
    people, victim = _people(rng, players, data)
    place_keys = list(data["places"])
    rng.shuffle(place_keys)
    scene = next(i for i, key in enumerate(place_keys) if data["places"][key].get("scene"))
    items, kinds, weapon = _items(rng, data, knobs)
    murderer = rng.randrange(players)
    start = rng.choice([19 * 60, 19 * 60 + 30, 20 * 60, 20 * 60 + 30, 21 * 60])
    lo = rng.randint(5, 8)
    murder = lo + rng.randint(1, 2)
    hi = murder + rng.randint(1, 2)
    found = min(hi + rng.randint(1, 3), SLOTS - 2)
    world = World(
        seed=seed, knobs=knobs, acts=acts, setting=setting,
        venue=rng.randrange(len(data["venue"]["en"])), era=rng.randrange(len(data["era"]["en"])),
        start=start, people=people, victim=victim, victim_role=rng.choice(sorted(data["victims"])),
        places=place_keys, scene=scene, items=items, kinds=kinds, weapon=weapon,
        murderers=(murderer,), murder=murder, lo=lo, hi=hi, found=found, finder=-1,
        hideout=-1, schedule=[], victim_at=[], motives={}, routes={}, groups=[], singles=[],
        rival=-1, alive_place=-1)
    _routes(rng, world)
    _window(rng, world)
    _schedules(rng, world)
    return world


def _people(rng: random.Random, players: int, data: dict[str, Any]
            ) -> tuple[list[Person], Person]:
    roles = list(data["roles"])
    rng.shuffle(roles)
    families = rng.sample(range(50), players + 1)
    given: dict[str, list[int]] = {"m": rng.sample(range(40), players + 1),
                                   "f": rng.sample(range(40), players + 1)}
    people = []
    for index in range(players + 1):
        role = roles[index % len(roles)] if index < players else ""
        gender = data["roles"].get(role, {}).get("gender") or rng.choice("mf")
        people.append(Person(gender=gender, given=given[gender][index], family=families[index],
                             age=rng.randint(22, 68), role=role, trait=rng.randrange(TRAITS)))
    return people[:players], people[players]


def _items(rng: random.Random, data: dict[str, Any], knobs: Knobs
           ) -> tuple[list[str], list[str], int]:
    """The objects in play: with no twins, the weapon is the only one of its kind."""
    keys = list(data["items"])
    rng.shuffle(keys)
    kinds = [data["items"][k]["kind"] for k in keys]
    paired = [i for i, kind in enumerate(kinds) if kinds.count(kind) > 1]
    weapon = rng.choice(paired) if knobs.twins else rng.randrange(len(keys))
    if not knobs.twins:
        keep = [i for i, kind in enumerate(kinds) if i == weapon or kind != kinds[weapon]]
        keys, kinds = [keys[i] for i in keep], [kinds[i] for i in keep]
        weapon = keep.index(weapon)
    return keys, kinds, weapon


def _routes(rng: random.Random, world: World) -> None:
    """Everyone's motive, who could not reach the weapon, and the rival whose alibi
    decides."""
    innocents = world.innocents
    rng.shuffle(innocents)
    means = min(world.knobs.means_out, len(innocents) - 1)
    motives = list(MOTIVES)
    rng.shuffle(motives)
    for person in [*world.murderers, *innocents]:
        world.motives[person] = motives.pop() if motives else rng.choice(MOTIVES)
    for position, person in enumerate(innocents):
        world.routes[person] = "means" if position >= len(innocents) - means else "opportunity"
    world.rival = innocents[0]
    world.access = tuple(sorted(p for p in range(len(world.people))
                                if world.routes.get(p) != "means"))
    world.twins = [i for i, kind in enumerate(world.kinds)
                   if kind == world.kinds[world.weapon] and i != world.weapon]


def _window(rng: random.Random, world: World) -> None:
    """Innocent characters in groups (or alone, alibied by a record) over the time of
    death, the murderer's hideout, and where the victim was last seen alive."""
    innocents = [i for i in world.innocents if i != world.rival]
    rng.shuffle(innocents)
    free = [i for i in range(len(world.places)) if i != world.scene]
    rng.shuffle(free)
    apart = [i for i in free if not _shared(world, i, world.scene)]
    world.hideout = apart[-1] if apart else free[-1]
    free.remove(world.hideout)
    record_rival = world.knobs.decider != "testimony"
    if record_rival:
        world.singles.append(world.rival)
    else:
        innocents.insert(0, world.rival)
    while innocents:
        size = 3 if len(innocents) == 3 else 2
        members, innocents = innocents[:size], innocents[size:]
        if len(members) == 1:
            world.singles += members
            continue
        start = world.lo - rng.randint(0, 2)
        end = world.hi + rng.randint(0, 1)
        world.groups.append(Group(members, free[len(world.groups) % len(free)], start,
                                  min(end, world.found)))
    for single in world.singles:
        world.record_place[single] = free[(len(world.groups) + single) % len(free)]
    world.alive_place = free[0]


def _shared(world: World, one: int, other: int) -> bool:
    """Whether two places' names share a word (English) or a character (Chinese): the
    murderer's claimed place shares none with the scene, so the lie reads as a lie."""
    places = settings()[world.setting]["places"]
    first, second = places[world.places[one]], places[world.places[other]]
    return bool(set(first["en"].split()) & set(second["en"].split())
                or set(first["zh"]) & set(second["zh"]))


def _schedules(rng: random.Random, world: World) -> None:
    """Where everyone was in every slot; the window's places are fixed first."""
    slots, scene = SLOTS, world.scene
    others = [i for i in range(len(world.places)) if i != scene]
    world.schedule = [[-1] * slots for _ in world.people]
    for group in world.groups:
        for member in group.members:
            for slot in range(group.start, group.end):
                world.schedule[member][slot] = group.place
    for single, place in world.record_place.items():
        for slot in range(world.lo - 1, world.hi + 1):
            world.schedule[single][slot] = place
    _murderer_path(rng, world, others)
    innocents = world.innocents
    world.finder = rng.choice(innocents)
    _visits(rng, world)
    for person, row in enumerate(world.schedule):
        _fill(rng, row, others, world, person)
    world.victim_at = _victim_path(rng, world, others)


def _murderer_path(rng: random.Random, world: World, others: list[int]) -> None:
    """Somewhere nobody's alibi puts anyone until the murder, the scene at the murder, the
    hideout after it: the account the murderer gives moves the murder's slot to the
    hideout, so the lie starts at the very time a witness may see them go in."""
    used = {g.place for g in world.groups} | set(world.record_place.values()) | {world.hideout}
    spare = [p for p in others if p not in used] or [p for p in others if p != world.hideout]
    world.before = rng.choice(spare)
    for murderer in world.murderers:
        row = world.schedule[murderer]
        for slot in range(world.lo - 1, world.hi + 1):
            row[slot] = (world.before if slot < world.murder else
                         world.scene if slot == world.murder else world.hideout)


def _visits(rng: random.Random, world: World) -> None:
    """Visitors to the scene before the time of death, one per slot (so each found it
    empty): innocent characters on an errand of their secret, and where no witness
    sees the murder, everyone: the murderer and the finder too, so that being seen
    there tells nothing until the times are set against the time of death."""
    knobs = world.knobs
    unseen = knobs.caught == "no"
    candidates = [i for i in world.innocents if i != world.finder or unseen]
    rng.shuffle(candidates)
    visitors = candidates[:round(knobs.visitors * len(candidates))]
    world.hidden = frozenset(visitors[:knobs.hidden_visits])
    for visitor in visitors:
        world.secrets[visitor] = rng.choice(SECRETS)
    if unseen:  # the murderer was in the scene earlier too, and hides it like the others
        visitors = [*world.murderers, *visitors]
        world.hidden |= frozenset(world.murderers)
    slots = list(range(world.lo - 1))
    rng.shuffle(slots)
    for visitor, slot in zip(visitors, slots, strict=False):
        world.early[visitor] = slot
    for visitor in [v for v in visitors if v not in world.early]:
        world.secrets.pop(visitor, None)


def _fill(rng: random.Random, row: list[int], others: list[int], world: World,
          person: int) -> None:
    """Stays of one to four slots in the slots nothing fixed yet; the scene only for an
    early visit, and for everyone once the body is found."""
    slot = 0
    while slot < SLOTS:
        if row[slot] != -1:
            slot += 1
            continue
        length = rng.randint(1, 4)
        place = rng.choice(others)
        while slot < SLOTS and row[slot] == -1 and length:
            row[slot] = place
            slot += 1
            length -= 1
    if person in world.early:
        row[world.early[person]] = world.scene
    for slot in range(world.found, SLOTS):
        row[slot] = world.scene if slot > world.found or person == world.finder else row[slot]


def _victim_path(rng: random.Random, world: World, others: list[int]) -> list[int]:
    """The victim's places: seen alive at the start of the time of death, at the scene
    from the next slot until the murder, nowhere after."""
    path = []
    place = rng.choice(others)
    for slot in range(SLOTS):
        if slot > world.murder:
            path.append(-1)
        elif slot > world.lo:
            path.append(world.scene)
        elif slot == world.lo:
            path.append(world.alive_place)
        else:
            if rng.random() < 0.3:
                place = rng.choice(others)
            path.append(place)
    return path
