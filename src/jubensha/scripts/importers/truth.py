"""The truth of an imported script — its murderers and its victims — derived by weighing
every sentence of its texts that names the dead or the culprit.

An importer hands over the texts it has (``Passage``: the truth prose, clue texts,
character texts, each with its source) and its multiple-choice questions with their
answers (``Asked``). Each sentence pattern of ``data/truth_patterns.yaml`` that matches
adds its weight to the person it names; the candidates are persons only (``persons``):
for murderers the characters, for victims the other names the texts treat as persons.
Repeats of one pattern in one source count less and less (1, 1/2, 1/3...), so a death
every character's text tells outweighs one the backstory tells many times. A sentence
that asks or supposes counts little or nothing, dialogue half.

A name is derived when its score is at least half the best (several murderers or victims
are possible) and its confidence — how far it stands above the best name left out, times
how much evidence it has — reaches the margin (``MARGIN``); otherwise nothing is derived
and the candidates are named. docs/script-format.md has the rules and their measured
accuracy.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

import yaml

from jubensha.scripts.importers.common import CJK, name_key
from jubensha.scripts.importers.persons import EN_NAME, Corpus, untitled
from jubensha.scripts.model import Candidate, Character, Derivation, Evidence

Kind = Literal["truth", "character", "clue", "question"]
Fact = Literal["murderers", "victims"]

MARGIN = 0.5
"""The confidence below which nothing is derived."""
SHARE = {"murderers": 0.5, "victims": 0.6}
"""A name's score must be at least this share of the best to be derived beside it (and
beat "nobody" by one temperature step on its own). A murderer's evidence grows with the
victims it killed, so a second murderer may have half the first's; the victims of one
case are told of about as often."""
TEMPERATURE = 1.5
"""Score points per e-fold of odds: a name's confidence is its share of
exp(score / TEMPERATURE) among the candidates and "nobody"."""
NOBODY = 3.0
"""The score of "the texts name nobody": one plain statement (weight 4) alone beats it,
a passing mention (1) does not."""
_KIND_WEIGHT = {"truth": 1.0, "character": 0.8, "clue": 0.8, "question": 1.0}
_SUPPOSED = 0.3
_APPEARS = 0.1
_LONG_AGO = 0.5
_QUOTED = 0.5
_SHOWN = 5
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


@dataclass
class Finding:
    """What the weighing decided for one fact."""

    fact: Fact
    names: list[str]
    confidence: float
    candidates: list[Candidate] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)
    """Every name weighed, with its score (the candidates are the best few)."""
    evidence: dict[str, list[Evidence]] = field(default_factory=dict)
    aliases: dict[str, list[str]] = field(default_factory=dict)
    told: dict[str, set[Kind]] = field(default_factory=dict)
    """The kinds of text that name each one (the truth prose, a character's...)."""

    @property
    def undecided(self) -> bool:
        """Evidence named someone, but not clearly enough to derive anyone."""
        return not self.names and bool(self.candidates)

    def derivation(self, source: str) -> Derivation:
        best = next((c for c in self.candidates if c.derived), None)
        quote = best.evidence[0] if best and best.evidence else None
        return Derivation(
            fact=self.fact, value=self.names, source=quote.source if quote else source,
            origin="text", confidence=round(self.confidence, 2),
            evidence=quote.text if quote else "",
            method=(quote.rule if quote else "") + (" (weighed with the other evidence)"
                                                    if quote else ""),
            candidates=self.candidates)

    def note(self) -> str:
        """The import note: what was derived, or why nothing was."""
        what = "murderer" if self.fact == "murderers" else "victim"
        if self.names:
            return (f"{what} {', '.join(self.names)} derived from the texts "
                    f"(confidence {self.confidence:.2f})")
        if not self.candidates:
            return f"the texts name no {what}: none derived"
        named = ", ".join(f"{c.name} ({c.score:g})" for c in self.candidates[:_SHOWN])
        return (f"the texts do not make the {what} clear (confidence {self.confidence:.2f} "
                f"< {MARGIN}): none derived; candidates by score: {named}; a truth.yaml "
                "beside the script (or --truth) can say who")


# --- patterns --------------------------------------------------------------------------

@dataclass(frozen=True)
class _Rule:
    fact: Fact
    rule: str
    weight: float
    regex: re.Pattern[str]
    slot: Literal["after", "before", "phrase", "name", "none"]
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
    return pattern


@lru_cache(maxsize=4)
def _victim_rules(language: str) -> tuple[_Rule, ...]:
    rules = []
    for spec in _table()["victim"]:
        for raw in spec.get(language, []):
            pattern = _expand(raw)
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
class _Sentence:
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
                    r"|(?<=[.;])\s+(?=[A-Z*【\['\"“‘(])|(?<=\.)(?=[\u4e00-\u9fff])")
"""Sentence ends: 。！？!?, a full stop before a capital, and a line break, except one
after a word that needs its complement (``the real murderer is`` / ``【Security Wei】``)."""
_DIALOGUE = re.compile(r"“[^”]{4,}(?:”|$)|「[^」]{4,}(?:」|$)|\"[^\"\n]{4,}(?:\"|$)")


def _sentences(passages: Iterable[Passage]) -> Iterator[_Sentence]:
    moods = _moods()
    for passage in passages:
        text = " ".join(_ABBREVIATIONS.sub(r"\1", passage.text).split(" "))
        spoken = [m.span() for m in _DIALOGUE.finditer(text)]
        at = 0
        for piece in _SPLIT.split(text):
            start, at = at, at + len(piece)
            sentence = piece.strip()
            if len(sentence) < 3:
                continue
            offset = start + piece.index(sentence[0])
            base = _KIND_WEIGHT[passage.kind] * passage.weight
            factor: dict[Fact, float] = {"victims": base, "murderers": base}
            if passage.kind != "question":
                if moods["asks"].search(sentence):
                    continue
                if moods["supposes"].search(sentence):
                    factor = {fact: f * _SUPPOSED for fact, f in factor.items()}
                if moods["long_ago"].search(sentence):
                    factor["victims"] *= _LONG_AGO
                if moods["appears"].search(sentence):
                    factor["murderers"] *= _APPEARS
            inside = tuple((max(a, offset) - offset, min(b, offset + len(sentence)) - offset)
                           for a, b in spoken if a < offset + len(sentence) and b > offset)
            yield _Sentence(sentence[:3000], passage, factor, inside)


# --- evidence --------------------------------------------------------------------------

@dataclass(frozen=True)
class _Found:
    fact: Fact
    name: str
    weight: float
    rule: str
    sentence: str
    source: str
    kind: Kind = "truth"


class _People:
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


def _victim_evidence(sentences: list[_Sentence], corpus: Corpus, people: _People,
                     language: str) -> Iterator[_Found]:
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
                        yield _Found("victims", name, weight * likeness, rule.rule,
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


def _murderer_evidence(sentences: list[_Sentence], people: _People, victims: list[str],
                       language: str) -> Iterator[_Found]:
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
                yield _Found("murderers", who, weight, rule.rule, sentence.text,
                             sentence.passage.source, sentence.passage.kind)


def _aliases(sentences: list[_Sentence], corpus: Corpus, language: str
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


def _answers(questions: Iterable[Asked], fact: Fact, language: str, corpus: Corpus,
             people: _People) -> Iterator[_Found]:
    spec = _table()["questions"]["murderer" if fact == "murderers" else "victim"]
    asks = re.compile(spec["en"] if language == "en" else spec["zh"])
    moods = _moods()
    for asked in questions:
        if not asks.search(asked.question) or any(
                moods[m].search(asked.question) for m in ("supposes", "appears")):
            continue
        for answer in asked.answers:
            for name in _answer_names(answer.strip(" .。"), fact, corpus, people):
                yield _Found(fact, name, spec["weight"] * asked.weight,
                             f"the answer to “{asked.question}”",
                             f"{asked.question} — {answer}", asked.source, "question")


def _answer_names(answer: str, fact: Fact, corpus: Corpus, people: _People) -> list[str]:
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


# --- weighing --------------------------------------------------------------------------

def _weigh(fact: Fact, found: Iterable[_Found], margin: float,
           aliases: Iterable[tuple[str, str]] = ()) -> Finding:
    """Score every name (two names of one person as one), then decide."""
    found = list(found)
    one = _one_person(found, aliases)
    seen: set[tuple[str, str, str]] = set()
    groups: dict[str, dict[tuple[str, str], list[_Found]]] = defaultdict(
        lambda: defaultdict(list))
    for item in found:
        person = one.get(item.name, item.name)
        key = (person, item.rule, item.sentence)
        if key in seen:
            continue
        seen.add(key)
        groups[person][(item.rule, item.source)].append(item)
    also: dict[str, list[str]] = defaultdict(list)
    for name, person in sorted(one.items()):
        if name != person:
            also[person].append(name)
    told = {n: {f.kind for fs in g.values() for f in fs} for n, g in groups.items()}
    return decide(fact, {n: _score(g) for n, g in groups.items()},
                  {n: _strongest(g) for n, g in groups.items()}, dict(also), told, margin)


def decide(fact: Fact, scores: dict[str, float], evidence: dict[str, list[Evidence]],
           aliases: dict[str, list[str]], told: dict[str, set[Kind]],
           margin: float = MARGIN) -> Finding:
    """The names the scores single out. The best is chosen, and beside it any name with
    at least ``SHARE`` of its score that beats "nobody" by a temperature step and, for a
    victim, is told of outside the truth prose (which tells the backstory's deaths too);
    their confidence is their share of exp(score / TEMPERATURE) among every name and
    "nobody" (``NOBODY``). Below ``margin``, no name is derived."""
    ranked = sorted((n for n in scores if scores[n] > 0), key=lambda n: (-scores[n], n))
    if not ranked:
        return Finding(fact, [], 0.0, scores=scores, evidence=evidence, aliases=aliases,
                       told=told)
    chosen = ranked[:1] + [n for n in ranked[1:] if scores[n] >= SHARE[fact] * scores[ranked[0]]
                           and scores[n] >= NOBODY + TEMPERATURE
                           and (fact == "murderers" or told.get(n, set()) - {"truth"})]
    odds = {n: math.exp(min(scores[n], 300.0) / TEMPERATURE) for n in ranked}
    total = math.exp(NOBODY / TEMPERATURE) + sum(odds.values())
    sure = sum(odds[n] for n in chosen) / total
    names = chosen if sure >= margin else []
    candidates = [Candidate(name=n, score=round(scores[n], 2), derived=n in names,
                            confidence=round(odds[n] / total, 2),
                            aliases=aliases.get(n, []), evidence=evidence.get(n, [])[:3])
                  for n in ranked[:_SHOWN]]
    return Finding(fact, names, sure, candidates, scores, evidence, aliases, told)


def pool(here: Finding, there: Finding, same: dict[str, str], where: str) -> Finding:
    """One finding from the evidence of two versions of a script (its English and Chinese
    texts): ``same`` maps a name of ``there`` to the same person's name here; the scores
    of one person add up, and the other version's sentences join the evidence."""
    scores = dict(here.scores)
    evidence = {n: list(e) for n, e in here.evidence.items()}
    told = {n: set(k) for n, k in here.told.items()}
    person = {a: n for n, names in here.aliases.items() for a in names}
    for name, score in there.scores.items():
        spellings = [name, *there.aliases.get(name, [])]
        mine = next((same[s] for s in spellings if s in same), None)
        if mine is None:
            continue
        mine = person.get(mine, mine)
        scores[mine] = scores.get(mine, 0.0) + score
        told.setdefault(mine, set()).update(there.told.get(name, set()))
        evidence.setdefault(mine, []).extend(
            e.model_copy(update={"source": f"{where}: {e.source}"})
            for e in there.evidence.get(name, []))
    for items in evidence.values():
        items.sort(key=lambda e: -e.weight)
    return decide(here.fact, scores, evidence, here.aliases, told)


def _one_person(found: list[_Found], aliases: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Each name to the name its person goes by: names linked as aliases, or one that is
    the other with a title before it (``Mr Zhao Wanlei``), are one person, called by a
    name without a title, then the one its plainest sentence uses (``Xu Boqing:
    Deceased`` over ``killed Yao Mengren``), then the one used most."""
    uses: dict[str, int] = defaultdict(int)
    plainest: dict[str, float] = defaultdict(float)
    for item in found:
        uses[item.name] += 1
        plainest[item.name] = max(plainest[item.name], item.weight)
    parent = {name: name for name in uses}

    def root(name: str) -> str:
        while parent[name] != name:
            name = parent[name]
        return name

    def rank(name: str) -> tuple[bool, float, int, str]:
        return untitled(name) is not None, -plainest[name], -uses[name], name

    titled = [(name, untitled(name)) for name in uses]
    for a, b in [*aliases, *((n, u) for n, u in titled if u)]:
        if a in parent and b in parent and root(a) != root(b):
            first, second = sorted((root(a), root(b)), key=rank)
            parent[second] = first
    return {name: root(name) for name in uses}


def _score(by_rule: dict[tuple[str, str], list[_Found]]) -> float:
    """Each pattern in each source: 1, 1/2, 1/3... of its sentences' weights, the
    strongest first; a denial (negative weight) counts whole."""
    total = 0.0
    for items in by_rule.values():
        weights = sorted((f.weight for f in items), reverse=True)
        total += sum(w if w < 0 else w / (i + 1) for i, w in enumerate(weights))
    return total


def _strongest(by_rule: dict[tuple[str, str], list[_Found]]) -> list[Evidence]:
    items = sorted((f for fs in by_rule.values() for f in fs), key=lambda f: -f.weight)
    out, rules = [], set()
    for item in items:
        if item.rule in rules or item.weight <= 0:
            continue
        rules.add(item.rule)
        out.append(Evidence(rule=item.rule, source=item.source, weight=round(item.weight, 2),
                            text=item.sentence if len(item.sentence) <= 400
                            else item.sentence[:399] + "…"))
    return out


def derive_truth(passages: list[Passage], questions: list[Asked],
                 characters: list[Character], language: str, *, persons: Iterable[str] = (),
                 margin: float = MARGIN) -> tuple[Finding, Finding]:
    """The murderers and the victims the texts support, each a ``Finding`` with its
    confidence and candidates; ``persons`` are names the source lists as people (a
    relationship list's). Victims are weighed first: a kill whose object is the victim
    says more about its subject than any other kill."""
    people = _People(characters)
    corpus = Corpus([p.text for p in passages]
                    + [f"{q.question} {' '.join(q.answers)}" for q in questions],
                    known=[*persons, *people.by_spelling])
    asked = [Passage(f"{q.question} {' '.join(q.answers)}", q.source, "question",
                     weight=q.weight) for q in questions]
    sentences = list(_sentences([*passages, *asked]))
    aliases = _aliases(sentences, corpus, language)
    for a, b in aliases:
        for name, other in ((a, b), (b, a)):
            if people.character(name) and not people.character(other):
                people.add(other, people.character(name))
    victims = _weigh("victims", [
        *_victim_evidence(sentences, corpus, people, language),
        *_answers(questions, "victims", language, corpus, people)], margin, aliases)
    dead = [*victims.names, *(a for c in victims.candidates if c.derived for a in c.aliases)]
    murderers = _weigh("murderers", [
        *_murderer_evidence(sentences, people, dead, language),
        *_answers(questions, "murderers", language, corpus, people)], margin)
    return murderers, victims
