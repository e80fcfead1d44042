"""Shortcuts: guesses at the murderer that read a generated script's files without
reasoning (counting names, flags, order). A mystery whose difficulty only reasoning climbs
leaves each of them at chance: 1 over the number of characters.

Each shortcut gives the characters it cannot tell apart; its score on a mystery is
1/len(them) when the murderer is among them (a random pick among ties), else 0.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from jubensha.scripts.model import Script
from jubensha.scripts.proof.phrases import Reader

Shortcut = Callable[[Script], list[str]]


def _named(text: str, names: list[str]) -> list[str]:
    return [name for name in names if name in text]


def _card_counts(script: Script) -> dict[str, int]:
    counts = dict.fromkeys(script.names, 0)
    for clue in script.clues:
        for name in _named(clue.title + " " + clue.text, script.names):
            counts[name] += 1
    return counts


def _timeline_counts(script: Script) -> dict[str, int]:
    """How often each character is named in the other characters' timelines."""
    counts = dict.fromkeys(script.names, 0)
    for character in script.characters:
        for entry in character.timeline:
            for name in _named(entry.text, script.names):
                if name != character.name:
                    counts[name] += 1
    return counts


def _extreme(counts: dict[str, int], most: bool) -> list[str]:
    best = max(counts.values()) if most else min(counts.values())
    return [name for name, count in counts.items() if count == best]


def _reader(script: Script) -> Reader:
    return Reader(script.language, script.names, [v.name for v in script.victims])


def _motives(script: Script) -> set[str]:
    reader = _reader(script)
    return {said.who for clue in script.clues for said in reader.read(clue.text)
            if said.kind == "motive" and said.who}


def _keys(script: Script) -> set[str]:
    """Characters an access card lists (who could reach an object)."""
    reader = _reader(script)
    return {person for clue in script.clues for said in reader.read(clue.text)
            if said.kind == "access" for person in said.people}


def _belonging_owners(script: Script) -> set[str]:
    """Characters named on a clue card that states no fact (a belonging found)."""
    reader = _reader(script)
    return {name for clue in script.clues if not reader.read(clue.text)
            for name in _named(clue.text, script.names)}


def _or_all(chosen: set[str] | list[str], script: Script) -> list[str]:
    """The chosen characters, or everyone when the rule picks nobody."""
    picked = [name for name in script.names if name in chosen]
    return picked or list(script.names)


def motive_key(script: Script) -> list[str]:
    return _or_all(_motives(script) & (_keys(script) or set(script.names)), script)


def motive_key_no_belonging(script: Script) -> list[str]:
    owners = _belonging_owners(script)
    return _or_all((_motives(script) & (_keys(script) or set(script.names))) - owners, script)


def random_owner(script: Script) -> list[str]:
    return _or_all(_belonging_owners(script), script)


def flagged(script: Script) -> list[str]:
    """Named on a card flagged key (or misleading: the others)."""
    key = {n for c in script.clues if c.key for n in _named(c.text, script.names)}
    return _or_all(key, script)


def _entries(script: Script, most: bool) -> list[str]:
    return _extreme({c.name: len(c.timeline) for c in script.characters}, most)


SHORTCUTS: dict[str, Shortcut] = {
    "most named on cards": lambda s: _extreme(_card_counts(s), True),
    "fewest named on cards": lambda s: _extreme(_card_counts(s), False),
    "most mentioned in timelines": lambda s: _extreme(_timeline_counts(s), True),
    "fewest mentioned in timelines": lambda s: _extreme(_timeline_counts(s), False),
    "motive + key": motive_key,
    "motive + key, no belonging found": motive_key_no_belonging,
    "random among belonging owners": random_owner,
    "named on a key card": flagged,
    "longest timeline": lambda s: _entries(s, True),
    "shortest timeline": lambda s: _entries(s, False),
    "first listed": lambda s: list(s.names[:1]),
    "last listed": lambda s: list(s.names[-1:]),
    "random": lambda s: [random.Random(s.id).choice(s.names)],
}


def score(shortcut: Shortcut, script: Script) -> float:
    """The shortcut's expected hit on one mystery (ties broken at random)."""
    picked = shortcut(script)
    return 1 / len(picked) if script.murderers[0] in picked else 0.0


def chance(script: Script) -> float:
    return 1 / len(script.names)
