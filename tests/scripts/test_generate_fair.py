"""Generated mysteries are fair to play and to export, over 1,000 of them (every level,
3 to 10 players, 1 to 3 acts, English and Chinese):

- nothing a seat or an exporter sees marks the answer: ``key`` marks the cards the proof
  uses whoever they name, nothing is flagged misleading, and the murderer's timeline,
  story and secrets never state the killing nor give the role away;
- the private stories agree: nobody is alone where another is seen, nobody is in two
  places at once, nobody else is in the scene when a visitor finds it empty;
- no timeline repeats its previous entry, and every mystery has a red herring from an
  innocent character's secret: a visit to the scene, seen, with a belonging left there.
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import cache
from itertools import pairwise

from jubensha.scripts.generate.build import Request, mystery, write
from jubensha.scripts.model import Script
from jubensha.scripts.proof.phrases import Reader, Said

COUNT = 1000
LEVELS = ("easy", "medium", "hard")
KILLING = {"en": re.compile(r"\b(kill(ed|ing)?|stab(bed)?|strangled?|struck|poison(ed)?|"
                            r"murder(ed|er)?|point the others|suspicion fall|if anyone asks)\b",
                            re.IGNORECASE),
           "zh": re.compile(r"杀|刺死|勒死|毒死|打倒在地|凶手|互相猜疑|要是有人问起")}


@cache
def _batch() -> tuple[Script, ...]:
    scripts = []
    for n in range(COUNT):
        request = Request(seed=n, players=3 + n % 8, acts=1 + n % 3, level=LEVELS[n % 3])
        scripts.append(write(mystery(request), "zh" if n % 4 == 3 else "en"))
    return tuple(scripts)


def _reader(script: Script) -> Reader:
    world = script.truth.proof.world  # type: ignore[union-attr]
    return Reader(script.language, script.names, [v.name for v in script.victims],
                  world.places, world.items)


def _slot(script: Script, time: str) -> int:
    world = script.truth.proof.world  # type: ignore[union-attr]
    hours, minutes = (int(x) for x in time.split(":"))
    start_h, start_m = (int(x) for x in world.start.split(":"))
    return ((hours * 60 + minutes) - (start_h * 60 + start_m)) % (24 * 60) // \
        world.step_minutes


def _innocent_says(script: Script) -> list[Said]:
    """Every fact the innocent characters' words and the clue cards state."""
    reader = _reader(script)
    said: list[Said] = []
    for clue in script.clues:
        said += reader.read(clue.text)
    for character in script.characters:
        if character.name in script.murderers:
            continue
        for entry in character.timeline:
            said += reader.read(entry.text, character.name)
        for sheet in character.acts:
            said += reader.read(sheet.text, character.name)
    return said


def test_no_flag_marks_the_answer_and_the_murderer_never_tells_the_killing() -> None:
    for script in _batch():
        proof = script.truth.proof  # type: ignore[union-attr]
        used = {f.source.clue for f in proof.facts if f.source.where == "clue"}
        assert all(clue.key == (clue.id in used) for clue in script.clues), script.id
        assert not any(clue.misleading for clue in script.clues), script.id
        murderer = next(c for c in script.characters if c.name in script.murderers)
        voiced = [murderer.story, murderer.description, *murderer.secrets,
                  *(e.text for e in murderer.timeline), *(a.text for a in murderer.acts),
                  *(r.description for r in murderer.relationships)]
        for text in voiced:
            assert not KILLING[script.language].search(text), (script.id, text)
        reader = _reader(script)
        for entry in murderer.timeline:
            assert reader.read(entry.text, murderer.name), (script.id, entry.text)


def test_the_private_stories_agree_with_each_other() -> None:
    """Nobody alone where another is seen, nobody in two places at once, and one visitor
    at most in the scene before the time of death (each says it was empty)."""
    for script in _batch():
        proof = script.truth.proof  # type: ignore[union-attr]
        where: dict[tuple[str, int], set[str]] = defaultdict(set)
        alone: list[tuple[str, str, int]] = []
        for said in _innocent_says(script):
            if said.kind not in ("at", "alone") or said.who is None or said.start is None:
                continue
            first = _slot(script, said.start)
            last = _slot(script, said.end) if said.end else first + 1
            for slot in range(first, last):
                where[(said.who, slot)].add(said.place or "")
                if said.kind == "alone":
                    alone.append((said.who, said.place or "", slot))
        assert all(len(places) == 1 for places in where.values()), script.id
        for who, place, slot in alone:
            others = [p for (p, s), ps in where.items() if s == slot and p != who and place in ps]
            assert not others, (script.id, who, place, slot, others)
        scene = proof.world.scene
        visits = defaultdict(set)
        for (who, slot), places in where.items():
            if scene in places:
                visits[slot].add(who)
        alive = min((_slot(script, f.start) for f in proof.facts if f.kind == "dead"
                     and f.start), default=0)
        assert all(len(people) <= 1 for slot, people in visits.items() if slot < alive), \
            script.id


def test_no_timeline_entry_repeats_the_one_before_it() -> None:
    """Two stays in a row in one place with the same company are one entry (a gap
    between them, where a visitor leaves out the visit, is not a repeat: it is the
    question to ask)."""
    for script in _batch():
        reader = _reader(script)
        for character in script.characters:
            read = [reader.read(e.text, character.name) for e in character.timeline]
            stays = [said for said in read if said and said[0].end]
            for before, after in pairwise(stays):
                same = [(s.kind, s.who, s.place) for s in before] == \
                    [(s.kind, s.who, s.place) for s in after]
                assert not (same and before[0].end == after[0].start), \
                    (script.id, character.name, after[0].text)


def test_every_mystery_has_a_red_herring_from_an_innocent_secret() -> None:
    """An innocent character placed in the scene before the body was found (by their own
    account or, when they hide it, by someone who saw them), with the secret that sent
    them there on their sheet, and a belonging of theirs found there when the level
    leaves traces (medium and hard)."""
    for script in _batch():
        scene = script.truth.proof.world.scene  # type: ignore[union-attr]
        seen = {s.who for s in _innocent_says(script) if s.kind in ("at", "alone")
                and s.place == scene}
        left = {name for clue in script.clues if clue.location == scene
                for name in script.names if name in clue.text}
        herrings = [c.name for c in script.characters if c.name not in script.murderers
                    and c.name in seen and len(c.secrets) >= 2]
        assert herrings, script.id
        if "easy" not in script.id:
            assert set(herrings) & left, script.id
