"""The fact language of generated mysteries: the sentences that state a fact, written by the
generator (``Phrasebook``) and read back (``Reader``) by ``scripts validate`` and by the
``solver`` agent. One data file per language (``data/phrases.<lang>.yaml``) holds every
sentence; a sentence is read whole, so prose around the facts is never taken for one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, Literal

import yaml

from jubensha.scripts.model import Language

Form = Literal["third", "second", "first"]
"""Who ``{me}`` is: a name, "you" (a character's sheet), "I" (the character speaking)."""

SLOT = re.compile(r"\{(\w+)\}")
TIME = r"\d{1,2}:\d{2}"
FREE = ("record", "amount")
MAX_SENTENCE = 400
"""Characters a fact sentence may have: a longer one states nothing (and a reader never
spends long on a hostile text)."""
SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*|\s*\n\s*")
PRODUCES: dict[str, tuple[str, ...]] = {
    "with": ("at:me", "at:who"), "self": ("at:me",), "at": ("at:who",),
    "alone": ("alone:me",), "saw": ("at:who",), "joined": ("at:who",), "alive": ("alive",), "dead": ("dead",),
    "found": ("scene", "dead"), "window": ("alive", "dead"), "weapons": ("weapons",),
    "used": ("used",), "unused": ("unused",), "access": ("access",),
}
"""The facts each kind of sentence states (motive.* kinds state one motive)."""


@dataclass(frozen=True)
class Said:
    """A fact as a sentence states it: names, places and times as written. An ``at``
    without an ``end`` is a sighting: the one time slot that starts at ``start``."""

    kind: str
    who: str | None = None
    place: str | None = None
    item: str | None = None
    start: str | None = None
    end: str | None = None
    people: tuple[str, ...] = ()
    items: tuple[str, ...] = ()
    detail: str | None = None
    text: str = field(default="", compare=False)


@cache
def phrase_data(lang: Language) -> dict[str, Any]:
    path = resources.files("jubensha.scripts.proof") / "data" / f"phrases.{lang}.yaml"
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data


def sentences(text: str) -> list[str]:
    return [part.strip() for part in SENTENCE_END.split(text) if part.strip()]


def clock(text: str) -> str:
    """A time as every fact writes it: ``HH:MM``."""
    hours, minutes = text.split(":")
    return f"{int(hours):02d}:{minutes}"


class Phrasebook:
    """Writes facts as sentences of one language."""

    def __init__(self, lang: Language):
        self.lang = lang
        self.data = phrase_data(lang)

    def count(self, kind: str) -> int:
        return len(self.data["kinds"][kind])

    def variants(self, kind: str, slots: set[str]) -> list[int]:
        """The sentences of ``kind`` whose slots ``slots`` (and the verbs) can fill."""
        known = slots | set(self.data["verbs"])
        return [number for number, template in enumerate(self.data["kinds"][kind])
                if set(SLOT.findall(template)) <= known]

    def people(self, names: list[str]) -> str:
        return _joined(self.data["people"], names)

    def items(self, names: list[str]) -> str:
        return _joined(self.data["items"], names)

    def render(self, kind: str, variant: int, form: Form = "third", **slots: str) -> str:
        """The sentence ``variant`` of ``kind`` with ``slots`` filled; ``{me}`` is
        ``slots["me"]`` for a third-person form, else "you" or "I"."""
        options = self.data["kinds"][kind]
        template = str(options[variant % len(options)])
        values = dict(slots)
        if form != "third":
            values["me"] = self.data["pronouns"][form]
        for verb, forms in self.data["verbs"].items():
            values[verb] = forms[form]
        text = SLOT.sub(lambda m: values[m.group(1)], template)
        return text[:1].upper() + text[1:] if self.lang == "en" else text


def _joined(joining: dict[str, str], names: list[str]) -> str:
    """"A", "A and B", "A, B and C" in the language's way (with articles for objects)."""
    if len(names) == 1:
        return str(joining.get("one", "{a}")).format(a=names[0])
    if len(names) == 2:
        return str(joining["two"]).format(a=names[0], b=names[1])
    return str(joining["more"]).format(rest=joining["sep"].join(names[:-1]), last=names[-1])


@dataclass(frozen=True)
class _Pattern:
    kind: str
    regex: re.Pattern[str]


NAMED = ("me", "who", "victim", "place", "item", "people", "items")
"""Slots whose words the reader checks against the persons, places and objects it knows."""


@cache
def _patterns(lang: Language) -> tuple[_Pattern, ...]:
    """Every sentence of the language as a regular expression, compiled once: slots match
    any words between the sentence's fixed parts (the reader checks them afterwards)."""
    data = phrase_data(lang)
    flags = re.IGNORECASE if lang == "en" else 0
    word = r"[^,.;:!?]+?" if lang == "en" else r"[^，。、；：！？\s]+?"
    slots = {**dict.fromkeys(NAMED, word), "people": ".+?", "items": ".+?",
             "t": TIME, "t1": TIME, "t2": TIME}
    return tuple(_Pattern(kind, re.compile(_regex(template, slots, data), flags))
                 for kind, templates in data["kinds"].items() for template in templates)


def _regex(template: str, slots: dict[str, str], data: dict[str, Any]) -> str:
    parts, seen, last = [], set(), 0
    for match in SLOT.finditer(template):
        parts.append(_literal(template[last:match.start()]))
        name = match.group(1)
        if name in data["verbs"]:
            parts.append("(?:" + "|".join(sorted(set(data["verbs"][name].values()))) + ")")
        elif name in FREE:
            parts.append(".+?")
        elif name in seen:
            parts.append(f"(?P={name})")
        else:
            parts.append(f"(?P<{name}>{slots[name]})")
            seen.add(name)
        last = match.end()
    parts.append(_literal(template[last:]))
    return "".join(parts)


class Reader:
    """Reads the facts that the sentences of a text state. Persons and victims are known
    by name; places and objects too when given (else any words between the sentence's
    fixed parts are taken for one). ``read(text, owner)`` takes "you" and "I" for
    ``owner``. A sentence whose names are not known states nothing."""

    def __init__(self, lang: Language, persons: list[str], victims: list[str],
                 places: list[str] | None = None, items: list[str] | None = None):
        self.lang = lang
        self.data = phrase_data(lang)
        self.patterns = _patterns(lang)
        self.pronouns = {p.casefold() for p in self.data["pronouns"].values()}
        self.characters = {name.casefold(): name for name in persons}
        self.victims = {name.casefold(): name for name in victims}
        self.places = {p.casefold(): p for p in places} if places else None
        self.items = {i.casefold(): i for i in items} if items else None

    def read(self, text: str, owner: str | None = None) -> list[Said]:
        """Every fact the sentences of ``text`` state, in order; a sentence that no pattern
        reads whole, with known names, states none."""
        found: list[Said] = []
        for sentence in sentences(text):
            if len(sentence) > MAX_SENTENCE:
                continue
            for pattern in self.patterns:
                match = pattern.regex.fullmatch(sentence)
                if match is None:
                    continue
                slots = self._known(match.groupdict(), owner)
                if slots is not None:
                    found += self._facts(pattern.kind, slots, sentence)
                    break
        return found

    def _known(self, slots: dict[str, str | None], owner: str | None
               ) -> dict[str, str | None] | None:
        """The slots with names as the script writes them, or None when one names no
        one (or nothing) the reader knows."""
        known: dict[str, str | None] = dict(slots)
        for name in NAMED:
            value = slots.get(name)
            if value is None:
                continue
            key = value.strip().casefold()
            if name == "me" and key in self.pronouns:
                known[name] = owner
            elif name in ("me", "who"):
                known[name] = self.characters.get(key)
            elif name == "victim":
                known[name] = self.victims.get(key)
            elif name == "place":
                known[name] = self._thing(value, self.places)
            elif name == "item":
                known[name] = self._thing(value, self.items)
            elif name in ("people", "items"):
                listed = self._listed(name, value)
                known[name] = None if listed is None else "\n".join(listed)
            if known[name] is None and not (name == "me" and key in self.pronouns):
                return None
        return known

    def _thing(self, value: str, things: dict[str, str] | None) -> str | None:
        """A place or object as written: one of ``things`` when known, else any words
        that name no person (so "the wardrobe room with Nora Vance" is no place, and the
        sentence is left to the kind that names her)."""
        key = value.strip().casefold()
        if things is not None:
            return things.get(key)
        if any(name in key for name in (*self.characters, *self.victims)):
            return None
        return value.strip()

    def _facts(self, kind: str, slots: dict[str, str | None], sentence: str) -> list[Said]:
        if kind.startswith("motive."):
            return [Said("motive", who=slots.get("who"), detail=kind.split(".", 1)[1],
                         text=sentence)]
        names = {"me": slots.get("me"), "who": slots.get("who")}
        start = slots.get("t1") or slots.get("t")
        said = []
        for produced in PRODUCES[kind]:
            fact, _, person = produced.partition(":")
            timed = fact in ("at", "alone", "alive", "dead")
            people, items = slots.get("people"), slots.get("items")
            said.append(Said(
                fact, who=names.get(person) if person else None,
                place=slots.get("place") if fact in ("at", "alone", "scene") else None,
                item=slots.get("item") if fact in ("used", "unused", "access") else None,
                start=self._start(fact, kind, slots, start) if timed else None,
                end=self._end(kind, slots) if fact in ("at", "alone") else None,
                people=tuple(people.split("\n")) if fact == "access" and people else (),
                items=tuple(items.split("\n")) if fact == "weapons" and items else (),
                text=sentence))
        return [s for s in said if s.who is not None or s.kind not in ("at", "alone")]

    def _start(self, fact: str, kind: str, slots: dict[str, str | None],
               start: str | None) -> str | None:
        if fact == "dead" and kind == "window":
            start = slots.get("t2")
        return clock(start) if start else None

    def _end(self, kind: str, slots: dict[str, str | None]) -> str | None:
        end = slots.get("t2") if kind != "window" else None
        return clock(end) if end else None

    def _listed(self, slot: str, text: str) -> list[str] | None:
        """The names of a list of characters (``people``) or objects (``items``), as the
        script writes them; None when one is unknown."""
        joining = self.data[slot]
        article = str(joining.get("article", ""))
        pieces = [p.strip() for p in re.split("|".join(map(re.escape, joining["split"])), text)
                  if p.strip()]
        if slot == "people":
            names = [self.characters.get(p.casefold()) for p in pieces]
        else:
            pieces = [p[len(article):] if article and p.casefold().startswith(article) else p
                      for p in pieces]
            names = [p if self.items is None else self.items.get(p.casefold()) for p in pieces]
        return None if None in names else [n for n in names if n]


def _literal(text: str) -> str:
    return r"\s+".join(re.escape(piece) for piece in text.split(" "))
