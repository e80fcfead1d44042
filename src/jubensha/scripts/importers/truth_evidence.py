"""The evidence for the truth of an imported script: the sentence patterns of
``data/truth_patterns.yaml`` matched against an importer's texts (``Passage``) and
questions (``Asked``), each match a ``Found``: a person, a weight, the rule and the sentence.

A sentence's weight depends on its kind of text and its mood: one that asks counts
nothing, one that supposes 0.3, one about suspicion 0.1 for murderers, a death of the
story's past half for victims, dialogue half. ``truth.py`` weighs what is found.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

import yaml

from jubensha.llm.text import HAN
from jubensha.scripts.importers.common import CJK, name_key
from jubensha.scripts.importers.persons import EN_NAME, Corpus
from jubensha.scripts.model import Character

Kind = Literal["truth", "character", "clue", "question"]
Slot = Literal["after", "before", "phrase", "name", "none"]
Fact = Literal["murderers", "victims"]

_KIND_WEIGHT = {"truth": 1.0, "character": 0.8, "clue": 0.8, "question": 1.0}
_SUPPOSED = 0.3
_APPEARS = 0.1
_LONG_AGO = 0.5
_QUOTED = 0.5
_INTENDED = re.compile(r"[^。，,]{0,12}?的(?:想法|念头|计划|打算|主意|意图|阴谋)")
"""产生了杀死丁硕楠的想法: a thought of killing, not a kill."""


@dataclass(frozen=True)
class Passage:
    """A text the derivation reads; ``owner`` is the character whose own text it is (its
    "you" or "I" is that character); ``weight`` below 1 for a text less sure than its kind."""

    text: str
    source: str
    kind: Kind = "truth"
    owner: str | None = None
    weight: float = 1.0


@dataclass(frozen=True)
class Asked:
    """A multiple-choice question and the texts of its correct options; ``weight`` less
    than 1 for a set that tests a character's view rather than the truth."""

    question: str
    answers: tuple[str, ...]
    source: str
    weight: float = 1.0


# --- patterns --------------------------------------------------------------------------

@dataclass(frozen=True)
class _Rule:
    fact: Fact
    rule: str
    weight: float
    regex: re.Pattern[str]
    slot: Slot
    strong: bool = False
    self_: bool = False
    subject: bool = False
    object_before: bool = False


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    source = resources.files("jubensha.scripts.importers").joinpath("data/truth_patterns.yaml")
    return yaml.safe_load(source.read_text(encoding="utf-8"))


def _expand(pattern: str) -> str:
    for key in ("KILL_ZH", "KILL", "WHEN", "KIN"):
        pattern = pattern.replace("{" + key + "}", _table()["words"][key])
    return pattern.replace("{HAN}", HAN)


@lru_cache(maxsize=4)
def _victim_rules(language: str) -> tuple[_Rule, ...]:
    rules = []
    for spec in _table()["victim"]:
        for raw in spec.get(language, []):
            pattern = _expand(raw)
            slot: Slot
            if language == "en":
                slot, regex = "name", pattern.replace("{X}", f"(?P<x>{EN_NAME})")
            elif "{P}" in pattern:
                slot, regex = "phrase", pattern.replace("{P}", "")
            elif pattern.endswith("{X}"):
                slot, regex = "after", pattern[:-3]
            else:
                slot, regex = "before", pattern.replace("{X}", "", 1)
            rules.append(_Rule("victims", spec["rule"], spec["weight"], re.compile(regex),
                               slot, strong=spec.get("strong", False)))
    return tuple(rules)


def _murderer_rules(language: str, names: str) -> list[_Rule]:
    rules = []
    for spec in _table()["murderer"]:
        for raw in spec.get(language, []):
            regex = re.compile(_expand(raw).replace("{X}", f"(?P<x>{names})"))
            rules.append(_Rule("murderers", spec["rule"], spec["weight"], regex,
                               "none" if spec.get("self") else "name",
                               self_=spec.get("self", False),
                               subject=spec.get("subject", False),
                               object_before=spec.get("object_before", False)))
    return rules


@lru_cache(maxsize=1)
def _moods() -> dict[str, re.Pattern[str]]:
    words = _table()["words"]
    return {key: re.compile(words[key]) for key in
            ("unfinished_en", "unfinished_zh", "intent_en", "intent_zh", "asks", "supposes",
             "appears", "long_ago", "the_victim")}


# --- sentences -------------------------------------------------------------------------

@dataclass(frozen=True)
class Sentence:
    text: str
    passage: Passage
    factor: dict[Fact, float]
    """How much the sentence's evidence counts for each fact: its source's kind and mood."""
    spoken: tuple[tuple[int, int], ...] = ()
    """The spans of the sentence that are someone's words (dialogue counts half)."""

    def said(self, position: int) -> bool:
        return any(a <= position < b for a, b in self.spoken)


_ABBREVIATIONS = re.compile(r"\b(Dr|Mr|Mrs|Ms|St|Mt)\.")
_SPLIT = re.compile(r"(?<=[。！？!?])|(?<![:：—\-是为])(?<! is)(?<! was)(?<! by)(?<! are)(?<! were)\n"
                    r"|(?<=[.;])\s+(?=[A-Z*【\['\"“‘(])" f"|(?<=\\.)(?=[{HAN}])")
"""Sentence ends: 。！？!?, a full stop before a capital, and a line break, except one
after a word that needs its complement (``the real murderer is`` / ``【Security Wei】``)."""
_DIALOGUE = re.compile(r"“[^”]{4,}(?:”|$)|「[^」]{4,}(?:」|$)|\"[^\"\n]{4,}(?:\"|$)")


def sentences(passages: Iterable[Passage]) -> Iterator[Sentence]:
    """Each passage's sentences with the weight their kind of text and mood give them; a
    question of the question sets asks by nature, so only texts' questions count nothing."""
    moods = _moods()
    for passage in passages:
        text = " ".join(_ABBREVIATIONS.sub(r"\1", passage.text).split(" "))
        spoken = [m.span() for m in _DIALOGUE.finditer(text)]
        at = 0
        for piece in _SPLIT.split(text):
            sentence = piece.strip()
            if len(sentence) < 3:
                continue
            offset = text.index(sentence, at)
            at = offset + len(sentence)
            if passage.kind != "question" and moods["asks"].search(sentence):
                continue
            base = _KIND_WEIGHT[passage.kind] * passage.weight
            factor: dict[Fact, float] = {"victims": base, "murderers": base}
            if moods["supposes"].search(sentence):
                factor = {fact: f * _SUPPOSED for fact, f in factor.items()}
            if moods["long_ago"].search(sentence):
                factor["victims"] *= _LONG_AGO
            if moods["appears"].search(sentence):
                factor["murderers"] *= _APPEARS
            inside = tuple((max(a, offset) - offset, min(b, at) - offset)
                           for a, b in spoken if a < at and b > offset)
            yield Sentence(sentence[:3000], passage, factor, inside)


# --- evidence --------------------------------------------------------------------------

@dataclass(frozen=True)
class Found:
    fact: Fact
    name: str
    weight: float
    rule: str
    sentence: str
    source: str
    kind: Kind = "truth"


class People:
    """The characters' spellings, to tell a character from anyone else."""

    def __init__(self, characters: list[Character]):
        self.by_spelling: dict[str, str] = {}
        for character in characters:
            for spelling in character.all_names:
                for variant in _variants(spelling):
                    self.by_spelling.setdefault(variant, character.name)
        self.keys = {name_key(s): n for s, n in self.by_spelling.items()}
        self.order = [c.name for c in characters]

    def character(self, spelling: str) -> str | None:
        return self.by_spelling.get(spelling) or self.keys.get(name_key(spelling))

    def add(self, spelling: str, character: str) -> None:
        """Another name the texts give a character (``Fang Minyue`` for Doctor Fang)."""
        self.by_spelling.setdefault(spelling, character)
        self.keys.setdefault(name_key(spelling), character)

    def pattern(self) -> str:
        spellings = sorted(self.by_spelling, key=len, reverse=True)
        return "|".join(re.escape(s) if CJK.search(s) else rf"\b{re.escape(s)}\b"
                        for s in spellings) or r"(?!x)x"


def _variants(spelling: str) -> list[str]:
    """``Doctor Fang`` is also written ``Dr Fang`` (after ``Dr.`` lost its full stop)."""
    out = [spelling.strip()]
    if spelling.startswith("Doctor "):
        out.append("Dr " + spelling[len("Doctor "):])
    if spelling.startswith("Dr. "):
        out.append("Dr " + spelling[len("Dr. "):])
    return [s for s in out if s]


def victim_evidence(sentences: list[Sentence], corpus: Corpus, people: People,
                     language: str) -> Iterator[Found]:
    intent = _moods()["intent_zh" if language == "zh" else "intent_en"]
    for sentence in sentences:
        for rule in _victim_rules(language):
            for match in rule.regex.finditer(sentence.text):
                weight = rule.weight * sentence.factor["victims"]
                if sentence.said(match.start()):
                    weight *= _QUOTED
                if rule.slot in ("after", "name") and intent.search(
                        sentence.text[max(0, match.start() - 12):match.start()]):
                    weight *= 0.5  # a kill planned or not done: its target, not a death
                for name, likeness in _victim_names(rule, match, sentence.text, corpus):
                    if people.character(name) is None:
                        yield Found("victims", name, weight * likeness, rule.rule,
                                     sentence.text, sentence.passage.source,
                                     sentence.passage.kind)


def _victim_names(rule: _Rule, match: re.Match[str], text: str,
                  corpus: Corpus) -> list[tuple[str, float]]:
    """The persons a victim pattern's match names, each with how surely it is one."""
    if rule.slot == "name":
        name = corpus.english(match.group("x"))
        return [(name, 1.0)] if name else []
    if rule.slot == "phrase":
        units = corpus.units_in(text, match.end())
    elif rule.slot == "after":
        unit = corpus.unit_after(text, match.end())
        units = [(unit, match.end())] if unit else []
    else:
        unit = corpus.unit_before(text, match.start())
        units = [(unit, match.start() - len(unit))] if unit else []
    found = [(unit, corpus.chinese(unit, strong=rule.strong, before=text[max(0, at - 6):at],
                                   after=text[at + len(unit):at + len(unit) + 6]))
             for unit, at in units]
    return [(unit, likeness) for unit, likeness in found if likeness > 0]


def murderer_evidence(sentences: list[Sentence], people: People, victims: list[str],
                       language: str) -> Iterator[Found]:
    moods = _moods()
    unfinished = moods["unfinished_zh" if language == "zh" else "unfinished_en"]
    the_victim = re.compile("|".join([moods["the_victim"].pattern,
                                      *(re.escape(v) for v in victims)]))
    rules = _murderer_rules(language, people.pattern())
    for sentence in sentences:
        owner = sentence.passage.owner
        for rule in rules:
            if rule.self_ and owner is None:
                continue
            for match in rule.regex.finditer(sentence.text):
                said = sentence.said(match.start())
                who = owner if rule.self_ else people.character(match.group("x"))
                if who is None or (said and rule.self_):
                    continue  # in dialogue, "I" is whoever speaks
                weight = rule.weight * sentence.factor["murderers"] * (_QUOTED if said else 1)
                if rule.subject:
                    if unfinished.search(match.group("gap")) or _INTENDED.match(
                            match.group("object")):
                        continue
                    weight *= 1.5 if the_victim.search(match.group("object")) else 0.5
                elif rule.object_before:
                    weight *= 1.5 if the_victim.search(sentence.text[:match.start()]) else 0.5
                yield Found("murderers", who, weight, rule.rule, sentence.text,
                             sentence.passage.source, sentence.passage.kind)


def find_aliases(sentences: list[Sentence], corpus: Corpus, language: str
             ) -> list[tuple[str, str]]:
    """Pairs of names the texts give one person: ``Xu Boqing, who had changed his name
    from Yao Mengren``, ``Di Zhu (Zhang Decai)``, 已经改名【徐伯清】的【姚孟仁】."""
    if language == "en":
        names = EN_NAME
    else:
        names = "|".join(re.escape(k) for k in corpus.known if CJK.match(k))
        if not names:
            return []
    regexes = [re.compile(pattern.replace("{A}", f"(?P<a>{names})").replace(
        "{B}", f"(?P<b>{names})")) for pattern in _table()["aliases"][language]]
    pairs = []
    for sentence in sentences:
        for regex in regexes:
            for match in regex.finditer(sentence.text):
                a, b = match.group("a"), match.group("b")
                if language == "en":
                    a, b = corpus.english(a) or "", corpus.english(b) or ""
                if a and b and a != b:
                    pairs.append((a, b))
    return pairs


def answers(questions: Iterable[Asked], fact: Fact, language: str, corpus: Corpus,
             people: People) -> Iterator[Found]:
    spec = _table()["questions"]["murderer" if fact == "murderers" else "victim"]
    asks = re.compile(spec["en"] if language == "en" else spec["zh"])
    moods = _moods()
    for asked in questions:
        if not asks.search(asked.question) or any(
                moods[m].search(asked.question) for m in ("supposes", "appears")):
            continue
        for answer in asked.answers:
            for name in _answer_names(answer.strip(" .。"), fact, corpus, people):
                yield Found(fact, name, spec["weight"] * asked.weight,
                             f"the answer to “{asked.question}”",
                             f"{asked.question} — {answer}", asked.source, "question")


def _answer_names(answer: str, fact: Fact, corpus: Corpus, people: People) -> list[str]:
    """Who an answer names: for murderers the characters in it (``Guo Wangshan instructed
    Qi Yue`` names two), for victims the answer when it is a person's name."""
    character = people.character(answer)
    if fact == "murderers":
        if character is not None:
            return [character]
        return list(dict.fromkeys(people.character(m.group()) or m.group()
                                  for m in re.finditer(people.pattern(), answer)))
    if character is not None:
        return []
    if CJK.search(answer):
        return [answer] if corpus.chinese(answer.strip("【】"), strong=True) > 0 else []
    name = corpus.english(answer) if re.fullmatch(EN_NAME, answer) else None
    return [name] if name else []
