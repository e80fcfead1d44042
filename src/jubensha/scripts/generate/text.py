"""Words for a world in one language: names, places, objects, times, the prose variants
of ``data/text.<lang>.yaml`` and the fact sentences of the phrasebook. A ``Voice`` picks
each variant with its own random stream, so a language's texts vary between mysteries
while the world (drawn once) stays the same in both languages."""

from __future__ import annotations

import copy
import random
import string
from functools import cache, cached_property
from importlib import resources
from typing import Any

import yaml

from jubensha.scripts.generate.evidence import Card
from jubensha.scripts.generate.world import World, settings
from jubensha.scripts.model import Language
from jubensha.scripts.proof.phrases import Form, Phrasebook
from jubensha.scripts.proof.solver import ACCESS, ALIVE, AT, DEAD, MOTIVE, USED, WEAPONS, Fact

_FORMATTER = string.Formatter()


@cache
def _data(name: str) -> dict[str, Any]:
    path = resources.files("jubensha.scripts.generate") / "data" / name
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data


def capital(text: str) -> str:
    """``text`` with a capital first letter (Chinese has none)."""
    return text[:1].upper() + text[1:]


class Voice:
    """Writes one world's texts in one language."""

    def __init__(self, world: World, lang: Language):
        self.world = world
        self.lang = lang
        self.text = _data(f"text.{lang}.yaml")
        self.names = _data(f"names.{lang}.yaml")
        self.setting = settings()[world.setting]
        self.phrases = Phrasebook(lang)
        self.rng = random.Random(f"jubensha-text/{world.seed}/{world.knobs.level}/{lang}")
        self.amount = self.shared("amounts")
        self.written: dict[tuple[int, str], str] = {}

    # -- choosing and filling --------------------------------------------------------------
    def pick(self, path: str, **slots: object) -> str:
        """One variant of the entry at ``path`` (dotted), its slots filled: a sentence,
        so it starts with a capital."""
        return capital(self.choose(path, **slots))

    def choose(self, path: str, **slots: object) -> str:
        """One variant of the entry at ``path``, its slots filled, as it is written."""
        entry = self.entry(path)
        chosen = self.rng.choice(entry) if isinstance(entry, list) else entry
        return self.fill(str(chosen), **slots)

    def shared(self, path: str, key: object = "") -> str:
        """The variant of ``path`` that every language of the mystery takes (the lists
        of both languages are as long): what a player may be asked about is the same."""
        entry = self.entry(path)
        world = self.world
        index = random.Random(f"{world.seed}/{world.knobs.level}/{path}/{key}").randrange(
            len(entry))
        return str(entry[index])

    def entry(self, path: str) -> Any:
        node: Any = self.text
        for part in path.split("."):
            node = node[part]
        return node

    def fill(self, template: str, **slots: object) -> str:
        """``template`` with its slots; the world's common ones are always there."""
        values = {**self.common, **slots}
        used = {name for _, name, _, _ in _FORMATTER.parse(template) if name}
        return template.format(**{name: values[name] for name in used})

    @cached_property
    def common(self) -> dict[str, object]:
        """The slots every text may use ({Venue}: the venue starting a sentence)."""
        world = self.world
        return {"victim": self.victim, "scene": self.place(world.scene),
                "venue": self.venue, "Venue": capital(self.venue),
                "weapon": self.item(world.weapon),
                "hideout": self.place(world.hideout), "amount": self.amount,
                "found": world.time(world.found)}

    def aside(self) -> Voice:
        """This voice for a character's own sheet: the victim is "your host" there, never
        named (the facts a sheet quotes keep the name: the reader needs it)."""
        aside = copy.copy(self)
        aside.__dict__["common"] = {**self.common, "victim": self.entry("host")}
        return aside

    def say(self, kind: str, form: Form = "third", **slots: str) -> str:
        """A fact sentence of the phrasebook: a random variant of those ``slots`` fill."""
        variant = self.rng.choice(self.phrases.variants(kind, set(slots)))
        return self.phrases.render(kind, variant, form, **slots)

    # -- names -----------------------------------------------------------------------------
    def person(self, index: int) -> str:
        world = self.world
        person = world.victim if index < 0 else world.people[index]
        given = self.names["given"][person.gender][person.given]
        family = self.names["family"][person.family]
        return f"{given} {family}" if self.lang == "en" else f"{family}{given}"

    @cached_property
    def victim(self) -> str:
        return self.person(-1)

    def place(self, index: int) -> str:
        return str(self.setting["places"][self.world.places[index]][self.lang])

    def item(self, index: int) -> str:
        return str(self.setting["items"][self.world.items[index]][self.lang])

    @property
    def venue(self) -> str:
        return str(self.setting["venue"][self.lang][self.world.venue])

    def role(self, index: int) -> str:
        if index < 0:
            entry = self.setting["victims"][self.world.victim_role]
        else:
            entry = self.setting["roles"][self.world.people[index].role]
        return str(entry[self.lang]).format(victim=self.common["victim"])

    def record(self, card: Card) -> str:
        """The document a card quotes (the same in each language)."""
        records = self.setting["records"][self.lang]
        return str(records[(card.id + self.world.seed) % len(records)])

    def people(self, indices: list[int] | tuple[int, ...] | frozenset[int]) -> str:
        return self.phrases.people([self.person(i) for i in sorted(indices)])

    def join(self, sentences: list[str]) -> str:
        return (" " if self.lang == "en" else "").join(sentences)

    def list(self, words: list[str]) -> str:
        return ("、" if self.lang == "zh" else ", ").join(words)

    # -- facts -----------------------------------------------------------------------------
    def belonging(self, person: int) -> str:
        """What a person may leave behind at the scene."""
        belongings = self.entry("belongings")
        return str(belongings[(person + self.world.seed) % len(belongings)])

    def card_text(self, card: Card, form: Form = "third") -> str:
        """The sentence that states a card's facts (its phrase, its slots from the facts),
        written once: the script and its proof quote the same sentence."""
        key = (card.id, form)
        if key not in self.written:
            self.written[key] = self._card_text(card, form)
        return self.written[key]

    def _card_text(self, card: Card, form: Form) -> str:
        facts = card.facts
        slots: dict[str, str] = {"victim": self.victim, "amount": self.amount}
        if card.where in ("timeline", "act_sheet"):
            slots["me"] = self.person(card.character)
        else:
            slots["record"] = self.record(card)
        for fact in facts:
            slots.update(self._slots(fact, card))
        return self.say(card.phrase, form, **slots)

    def _slots(self, fact: Fact, card: Card) -> dict[str, str]:
        world = self.world
        slots: dict[str, str] = {}
        if fact.kind in (AT, "alone"):
            slots["place"] = self.place(fact.place)
            slots["t1"], slots["t2"] = world.time(fact.start), world.time(fact.end)
            slots["t"] = world.time(fact.start)
            if fact.who != card.character:
                slots["who"] = self.person(fact.who)
        elif fact.kind == ALIVE:
            slots["t"] = slots["t1"] = world.time(fact.start)
            slots["place"] = self.place(world.victim_at[fact.start])
        elif fact.kind == DEAD:
            slots["t"] = slots["t2"] = world.time(fact.start)
        elif fact.kind == "scene":
            slots["place"] = self.place(fact.place)
        elif fact.kind == WEAPONS:
            slots["items"] = self.phrases.items([self.item(i) for i in sorted(fact.items)])
        elif fact.kind in (USED, "unused", ACCESS):
            slots["item"] = self.item(fact.item)
            if fact.people:
                slots["people"] = self.people(fact.people)
        elif fact.kind == MOTIVE:
            slots["who"] = self.person(fact.who)
            slots["t"] = world.time(max(card.slot, 0))
        return slots
