"""Internal.

The extractive agent (architecture ``extractive``): a player that uses no language model.

It says only sentences of its own script, picked by BM25 (``memory.lexical``), inside
template lines (``prompts/extractive``); it questions, accuses and votes for the seat that its
lexical evidence makes most suspicious. It is deterministic and fast: the floor of every
benchmark table, the quickest smoke test of a procedure, the offline player for large
batches. A civilian answers truthfully from everything it knows; a murderer never says a
sentence about its kill or its secrets (``Guard``). ``docs/agents/baselines.md`` gives the
withholding rules and the evidence score.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib import resources
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from jubensha.agents.options import parse_options
from jubensha.engine import (
    NOBODY,
    Accusation,
    Accuse,
    Accused,
    ActStarted,
    Agent,
    AskQuestions,
    CastVote,
    CharacterSheet,
    ClueRevealed,
    Event,
    Investigate,
    Questions,
    RateStatement,
    Rating,
    SeatContext,
    Speak,
    Speech,
    Spoke,
    TakeTurn,
    Vote,
)
from jubensha.memory.lexical import BM25Index
from jubensha.memory.text import TokenizerOptions, split_sentences, tokenize
from jubensha.prompts import render
from jubensha.scripts.model import ActSheet, Character

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_CLOCK = re.compile(r"(?<![\d:])\d{1,2}[:：]\d{2}(?![\d:])")
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_NAME_SPLIT = re.compile(r"[\s·•・()（）,，.。/]+")
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|「[^」]*」|『[^』]*』")
_YOU = re.compile(r"\b(you|your|yours|yourself)\b((?:'|’)(?:re|ve|ll|d)\b)?(\s+(?:are|were)\b)?",
                  re.IGNORECASE)
_CONTRACTIONS = {"re": "I'm", "ve": "I've", "ll": "I'll", "d": "I'd"}
QUOTABLE = ("answer", "statement", "reasoning", "clue_share")
"""Speech kinds whose sentences a question may quote back (not questions or introductions)."""


class ExtractiveConfig(BaseModel):
    """Set per seat with ``extractive:key=value+key=value``."""

    model_config = ConfigDict(extra="forbid")

    answer_sentences: int = Field(2, ge=1, description="Script sentences in an answer.")
    intro_sentences: int = Field(2, ge=0, description="Script sentences in an introduction.")
    statement_sentences: int = Field(2, ge=0, description="Crime-related sentences in a "
                                                          "statement.")
    voice: Literal["first", "verbatim"] = Field(
        "first", description="first: retell a second-person script ('you went') as 'I went'.")
    spread: int = Field(1, ge=0, description="A murderer also withholds this many sentences "
                                             "either side of a sentence about its kill.")
    secret_overlap: int = Field(2, ge=1, description="Shared content words with a secret that "
                                                     "make a sentence secret.")
    own_weight: float = Field(0.5, ge=0, description="Evidence: own script naming a seat.")
    clue_weight: float = Field(1.0, ge=0, description="Evidence: a clue naming a seat.")
    said_weight: float = Field(0.0, ge=0, description="Evidence: what a seat said itself.")
    heard_weight: float = Field(0.25, ge=0, description="Evidence: others' words naming a seat.")
    accused_weight: float = Field(1.0, ge=0, description="Evidence: per accusation of a seat.")
    contradiction_weight: float = Field(2.0, ge=0, description="Evidence: per clock time at "
                                        "which a seat's account differs from own script.")
    evasion_weight: float = Field(4.0, ge=0, description="Evidence: per unit of shortfall of "
                                  "a seat's answers in speaking to the crime.")
    scene_texts: int = Field(3, ge=0, description="Crime query: clue and act texts whose "
                             "words extend it (those that best match the crime).")
    scene_words: int = Field(12, ge=0, description="Crime query: words those texts add.")

    @classmethod
    def parse(cls, option: str) -> ExtractiveConfig:
        return parse_options(cls, option, "extractive")


class Lexicon(BaseModel):
    """The word lists in ``agents/data/extractive.yaml``."""

    kill_words_en: frozenset[str]
    kill_words_zh: tuple[str, ...]
    motive_words: tuple[str, ...]
    titles: frozenset[str]
    zh_honorifics: tuple[str, ...]
    function_words: frozenset[str]
    object_you_after: frozenset[str]


@cache
def lexicon() -> Lexicon:
    data = yaml.safe_load(resources.files("jubensha.agents").joinpath(
        "data", "extractive.yaml").read_text(encoding="utf-8"))
    return Lexicon(kill_words_en=frozenset(data["kill_words"]["en"]["exact"]),
                   kill_words_zh=tuple(data["kill_words"]["zh"]),
                   motive_words=(*data["motive_words"]["en"], *data["motive_words"]["zh"]),
                   titles=frozenset(data["titles"]),
                   zh_honorifics=tuple(data["zh_honorifics"]),
                   function_words=frozenset(data["function_words"]),
                   object_you_after=frozenset(data["object_you_after"]))


class CachedTokenizer(TokenizerOptions):
    """The memory tokenizer with a cache: the same sheets, crime queries and names come back
    in every game of a batch, and jieba is the slow part of a Chinese game."""

    def tokenize(self, text: str) -> list[str]:
        return list(_tokens(self, text))


@lru_cache(maxsize=16384)
def _tokens(options: TokenizerOptions, text: str) -> tuple[str, ...]:
    return tuple(tokenize(text, zh_mode=options.zh_mode, stopwords=options.stopwords,
                          keep_words=options.keep_words))


@lru_cache(maxsize=4096)
def sentences(text: str) -> tuple[str, ...]:
    return tuple(split_sentences(text))


def kill_words(text: str) -> list[str]:
    """The killing words in ``text`` (English whole words, Chinese substrings)."""
    words = lexicon()
    found = [w for w in _WORD.findall(text.lower()) if w in words.kill_words_en]
    if _HAN.search(text):
        found += [w for w in words.kill_words_zh if w in text]
    return found


def clock_times(text: str) -> set[str]:
    """Clock times in ``text``, normalised (``９：05`` and ``9:05`` are both ``9:05``)."""
    return {t.replace("：", ":").lstrip("0") or "0" for t in _CLOCK.findall(text)}


# -- names -------------------------------------------------------------------------------------
def name_parts(name: str) -> list[str]:
    """The ways a name is shortened in text: its words (not titles), and a three-character
    Chinese name without its surname, or as its surname and an honorific (钱先生)."""
    parts = [p for p in _NAME_SPLIT.split(name) if p and p != name]
    if len(name) == 3 and all(_HAN.match(c) for c in name):
        parts.append(name[1:])
        parts += [name[0] + title for title in lexicon().zh_honorifics]
    return [p for p in parts if p.lower() not in lexicon().titles
            and (len(p) >= 2 if _HAN.match(p) else len(p) >= 3)]


class NameForms:
    """Recognises the seats and victims a text mentions, by full name, alias or a name part
    that belongs to no other name (``Edmund`` but not a surname two people share)."""

    def __init__(self, names: dict[str, list[str]]):
        owners: dict[str, set[str]] = {}
        for name, full in names.items():
            for part in {p for form in full for p in name_parts(form)}:
                owners.setdefault(part.lower(), set()).add(name)
        self.forms: dict[str, list[str]] = {}
        self._patterns: dict[str, re.Pattern[str]] = {}
        for name, full in names.items():
            parts = [p for form in full for p in name_parts(form) if owners[p.lower()] == {name}]
            forms = sorted(dict.fromkeys([*full, *parts]), key=len, reverse=True)
            self.forms[name] = forms
            self._patterns[name] = re.compile("|".join(
                re.escape(f) if _HAN.match(f) else rf"(?<!\w){re.escape(f)}(?!\w)"
                for f in forms), re.IGNORECASE)
        self.keep_words = tuple(f for forms in self.forms.values() for f in forms)
        self.content_tokens = CachedTokenizer(stopwords=True, keep_words=self.keep_words)

    def mentioned(self, text: str, among: Iterable[str] | None = None) -> list[str]:
        return [n for n in (self.forms if among is None else among)
                if n in self._patterns and self._patterns[n].search(text)]

    def strip(self, text: str, names: Iterable[str]) -> str:
        """``text`` without any form of ``names`` (a query should not match on them)."""
        for name in names:
            text = self._patterns[name].sub(" ", text)
        return text


# -- what the seat knows -------------------------------------------------------------------
@dataclass
class Fact:
    """One sentence the seat knows from its own sheet, and where it sits (document, position)
    so that its neighbours can be found."""

    text: str
    source: str
    doc: int
    position: int


def sheet_facts(me: Character, lang: str, include_secrets: bool) -> list[Fact]:
    """The sentences of a character's own sheet: story, timeline, act 1 text, relationships
    (and secrets, for a civilian that tells all). Goals, mission and performance notes are
    instructions to the player, not facts, and are never said."""
    docs: list[tuple[str, list[str]]] = [("story", list(sentences(me.story)))]
    docs.append(("timeline", [render("extractive", "timeline", lang, time=t.time, text=t.text)
                              for t in me.timeline]))
    sheet = me.act_sheet(1)
    if sheet is not None:
        docs.append(("act", list(sentences(sheet.text))))
    docs.append(("relationship", [render("extractive", "relationship", lang, other=r.other,
                                         text=r.description)
                                  for r in me.relationships if r.description]))
    if include_secrets:
        docs.append(("secret", list(me.secrets)))
    return [Fact(text, source, doc, position) for doc, (source, texts) in enumerate(docs)
            for position, text in enumerate(texts) if text.strip()]


class Guard:
    """Which of a murderer's own sentences it must never say, with the reason for each.

    A sentence is withheld when (1) it shares ``secret_overlap`` content words, or a clock
    time, with one of the character's secrets; (2) it contains a killing word (data file);
    (3) it names a victim this character killed (all victims when the sheet does not say);
    (4) it mentions a clock time of a sentence that names a killed victim and a killing word
    (the time of the crime); (5) it contains a scene word: a content word found in at least
    two sentences withheld by rules 1-3 and in at least twice as many of them as of the other
    sentences (the basement, the drive weight); (6) it is within ``spread`` sentences of a
    sentence withheld by rules 1-3 in the same document (the rest of the scene).
    """

    def __init__(self, sheet: CharacterSheet, names: NameForms, config: ExtractiveConfig):
        me = sheet.me
        self.config = config
        self.names = names
        self.victims = [v for v in (me.killed or [v.name for v in sheet.victims])
                        if v in names.forms]
        self.own = {f.lower() for f in names.forms.get(me.name, [])}
        self.secrets = [(self.content(s), clock_times(s)) for s in me.secrets]

    def content(self, text: str) -> set[str]:
        """Words that carry content: no stop or function words, numbers or own names."""
        words = lexicon().function_words
        return {t for t in self.names.content_tokens.tokenize(text)
                if t not in words and t not in self.own and not t.isdigit()}

    def direct(self, text: str) -> str | None:
        """The rule (1-3) that withholds ``text`` by itself, or None."""
        words = self.content(text)
        times = clock_times(text)
        for secret_words, secret_times in self.secrets:
            needed = min(self.config.secret_overlap, len(secret_words)) or 1
            if len(words & secret_words) >= needed or times & secret_times:
                return "secret"
        if kill_words(text):
            return "kill word"
        if self.names.mentioned(text, self.victims):
            return "victim"
        return None

    def scene_words(self, facts: list[Fact], anchors: dict[int, str]) -> set[str]:
        """Words of the crime scene (the basement, the drive weight): in at least two withheld
        sentences, and in at least twice as many of them as of the others."""
        inside: Counter[str] = Counter()
        outside: Counter[str] = Counter()
        for i, fact in enumerate(facts):
            (inside if i in anchors else outside).update(self.content(fact.text))
        return {w for w, n in inside.items() if n >= 2 and n >= 2 * outside[w]}

    def withheld(self, facts: list[Fact]) -> dict[int, str]:
        """Index of every fact the murderer withholds → why (rules 1-6)."""
        anchors = {i: r for i, f in enumerate(facts) if (r := self.direct(f.text))}
        crime_times = {t for f in facts if kill_words(f.text)
                       and self.names.mentioned(f.text, self.victims)
                       for t in clock_times(f.text)}
        scene = self.scene_words(facts, anchors)
        spread = self.config.spread
        reasons = dict(anchors)
        for i, fact in enumerate(facts):
            if i in anchors:
                continue
            if clock_times(fact.text) & crime_times:
                reasons[i] = "crime time"
            elif self.content(fact.text) & scene:
                reasons[i] = "scene word"
            elif any(j in anchors and facts[j].doc == fact.doc
                     and abs(facts[j].position - fact.position) <= spread
                     for j in range(max(0, i - spread), min(len(facts), i + spread + 1))):
                reasons[i] = "next to a withheld sentence"
        return reasons


# -- speaking in the first person ------------------------------------------------------------
def first_person(text: str) -> str:
    """A second-person script sentence as the character says it ("You went out" → "I went
    out"; 你 → 我); quoted speech is left as it is."""
    pieces, last = [], 0
    for quoted in _QUOTED.finditer(text):
        pieces.append(_first_person(text[last:quoted.start()]))
        pieces.append(quoted.group())
        last = quoted.end()
    pieces.append(_first_person(text[last:]))
    return "".join(pieces)


def _first_person(text: str) -> str:
    text = text.replace("你们", "我们").replace("您", "我").replace("你", "我")
    return _YOU.sub(lambda m: _swap(m, text), text)


def _swap(match: re.Match[str], text: str) -> str:
    word, contraction, verb = match.group(1), match.group(2), match.group(3)
    lower = word.lower()
    if lower == "your":
        mine = "my"
    elif lower == "yours":
        mine = "mine"
    elif lower == "yourself":
        mine = "myself"
    elif contraction:
        return _CONTRACTIONS[contraction[1:].lower()]
    else:
        before = re.search(r"([^\W\d_]+)\W*$", text[:match.start()])
        if before and before.group(1).lower() in lexicon().object_you_after and not verb:
            mine = "me"
        else:
            mine = "I"
            if verb:
                return "I" + verb.replace("are", "am").replace("were", "was")
    if word[0].isupper() and mine != "I":
        mine = mine.capitalize()
    return mine + (verb or "")


# -- evidence ----------------------------------------------------------------------------------
@dataclass
class Evidence:
    """Texts that concern seats, each weighted per seat; a seat's evidence for a crime is the
    weighted sum of the BM25 scores of its texts for the crime's query. A clue found at a
    place counts as much as the place's most crime-related clue (the shawl drying in the
    kitchen where the rolling pin was scrubbed). ``said`` keeps who spoke a text (None for
    the own script and clues) and how, so a question can quote it."""

    tokenizer: TokenizerOptions
    index: BM25Index = field(init=False)
    texts: list[str] = field(default_factory=list)
    about: list[dict[str, float]] = field(default_factory=list)
    said: list[tuple[str, str] | None] = field(default_factory=list)
    places: list[str | None] = field(default_factory=list)
    _last: tuple[str, int, list[float]] | None = None

    def __post_init__(self) -> None:
        self.index = BM25Index(self.tokenizer)

    def add(self, text: str, about: dict[str, float],
            said: tuple[str, str] | None = None, place: str | None = None) -> None:
        """Keep ``text`` when it concerns a seat, or when it was found at a place (it then
        tells how much that place has to do with the crime)."""
        if (about or place) and text.strip():
            self.index.add([text])
            self.texts.append(text)
            self.about.append(about)
            self.said.append(said)
            self.places.append(place)

    def row_scores(self, query: str) -> list[float]:
        """Score of every text for ``query``: its BM25 score, or its place's best (kept
        until the next text arrives)."""
        if self._last is None or self._last[:2] != (query, len(self.texts)):
            scores = self.index.scores(query).tolist() if self.texts else []
            best: dict[str, float] = {}
            for score, place in zip(scores, self.places, strict=True):
                if place:
                    best[place] = max(best.get(place, 0.0), score)
            scores = [max(score, best.get(place, 0.0)) if place else score
                      for score, place in zip(scores, self.places, strict=True)]
            self._last = (query, len(self.texts), scores)
        return self._last[2]

    def totals(self, query: str) -> Counter[str]:
        totals: Counter[str] = Counter()
        for row, score in enumerate(self.row_scores(query)):
            if score > 0:
                for name, weight in self.about[row].items():
                    totals[name] += weight * score
        return totals

    def best_said(self, speaker: str, kinds: Iterable[str], query: str) -> str:
        """``speaker``'s text of one of ``kinds`` that best matches ``query`` ("" if none
        matches)."""
        scores = self.row_scores(query)
        rows = [i for i, said in enumerate(self.said) if said and said[0] == speaker
                and said[1] in kinds and scores[i] > 0]
        return self.texts[max(rows, key=lambda i: (scores[i], -i))] if rows else ""


class ExtractiveAgent(Agent):
    architecture = "extractive"
    uses_model = False

    def __init__(self, config: ExtractiveConfig | None = None):
        self.config = config or ExtractiveConfig()

    @classmethod
    def from_option(cls, option: str) -> ExtractiveAgent:
        return cls(ExtractiveConfig.parse(option))

    async def start(self, seat: SeatContext) -> None:
        await super().start(seat)
        sheet = seat.sheet
        self.victims = [v.name for v in sheet.victims]
        seats = {self.name: sheet.me.all_names, **{o.name: [o.name] for o in sheet.others}}
        victims = dict.fromkeys([*self.victims, *sheet.me.killed])
        self.names = NameForms({**{v: [v] for v in victims}, **seats})
        self.tokens = CachedTokenizer(keep_words=self.names.keep_words)
        self.guard = Guard(sheet, self.names, self.config) if sheet.is_murderer else None
        self.facts: list[Fact] = []
        self.sayable: list[int] = []
        self.blocked: set[int] = set()
        self.acts = {1} if sheet.me.act_sheet(1) else set()
        self.answers = BM25Index(self.tokens)
        self.evidence = Evidence(self.tokens)
        self.bonus: Counter[str] = Counter()
        self.asked: Counter[str] = Counter()
        self.said: set[int] = set()
        self.queries: dict[str | None, str] = {}
        self.extended: dict[tuple[str | None, int], str] = {}
        self.clues: list[str] = []
        self.scene = BM25Index(self.tokens)
        self.scene_texts: list[str] = []
        self.turns = 0
        self.background = sentences(sheet.background)
        self.learn(sheet_facts(sheet.me, self.lang, include_secrets=not sheet.is_murderer))

    def learn(self, facts: list[Fact]) -> None:
        """Remember new sentences of the own sheet. A murderer's guard judges them together
        with everything learned before (a new act can reveal new words of the scene), so a
        sentence once sayable may become blocked, and a withheld one never becomes sayable."""
        first = len(self.facts)
        self.facts.extend(facts)
        if self.guard is not None:
            self.blocked = set(self.guard.withheld(self.facts))
        for number in range(first, len(self.facts)):
            text = self.facts[number].text
            self.evidence.add(text, self.others_in(text, self.config.own_weight))
            if number not in self.blocked:
                self.sayable.append(number)
                self.answers.add([text])

    def others_in(self, text: str, weight: float) -> dict[str, float]:
        return {n: weight for n in self.names.mentioned(text, self.seat_names())
                if n != self.name}

    def seat_names(self) -> list[str]:
        return self.seat.sheet.seat_names

    # -- observing ---------------------------------------------------------------------------
    async def observe(self, event: Event) -> None:
        if isinstance(event, ActStarted):
            if event.sheet is not None:
                self.learn_act(event.sheet)
            elif event.public_text:
                self.add_scene(event.public_text)
                self.evidence.add(event.public_text,
                                  self.others_in(event.public_text, self.config.clue_weight))
        elif isinstance(event, ClueRevealed):
            self.add_scene(event.text)
            self.evidence.add(event.text, self.others_in(event.text, self.config.clue_weight),
                              place=event.location)
            if event.audience != "public":
                self.clues.append(event.text)
        elif isinstance(event, Spoke) and event.speaker != self.name:
            self.hear(event)
        elif isinstance(event, Accused) and event.accused and event.accuser != self.name:
            self.bonus[event.accused] += self.config.accused_weight

    def add_scene(self, text: str) -> None:
        """A clue or an act's public text: what the table knows of the crime scene."""
        self.scene.add([text])
        self.scene_texts.append(text)

    def learn_act(self, sheet: ActSheet) -> None:
        if sheet.act in self.acts:
            return
        self.acts.add(sheet.act)
        doc = max((f.doc for f in self.facts), default=-1) + 1
        facts = [Fact(text, "act", doc, i) for i, text in enumerate(sentences(sheet.text))]
        self.learn(facts)

    def hear(self, event: Spoke) -> None:
        about = self.others_in(event.text, self.config.heard_weight)
        about[event.speaker] = about.get(event.speaker, 0.0) + self.config.said_weight
        about.pop(self.name, None)
        self.evidence.add(event.text, about, (event.speaker, event.kind))
        self.bonus[event.speaker] += self.config.contradiction_weight * self.contradictions(
            event.speaker, event.text)

    def contradictions(self, speaker: str, text: str) -> int:
        """Clock times at which ``speaker``'s account shares no content word with what the
        own script says about ``speaker`` at that time."""
        count = 0
        words = set(self.names.content_tokens.tokenize(text))
        for time in clock_times(text):
            mine = [f.text for f in self.facts if time in clock_times(f.text)
                    and speaker in self.names.mentioned(f.text, [speaker])]
            own = {t for m in mine for t in self.names.content_tokens.tokenize(m)}
            forms = {f.lower() for f in self.names.forms[speaker]}
            if mine and not (words & own) - forms - {time}:
                count += 1
        return count

    # -- judging -------------------------------------------------------------------------------
    def death_query(self, victim: str | None) -> str:
        """Victim names, the killing words of the languages in play and the background's
        sentences about the victim (where and when it happened, as far as anyone knows)."""
        if victim not in self.queries:
            victims = [victim] if victim else self.victims
            about = [s for s in self.background if self.names.mentioned(s, victims)]
            sheet = self.seat.sheet
            text = sheet.background + sheet.me.story
            words = lexicon()
            english = sorted(words.kill_words_en) if (
                self.lang == "en" or _WORD.search(text)) else []
            chinese = list(words.kill_words_zh) if self.lang == "zh" or _HAN.search(text) else []
            self.queries[victim] = " ".join([*victims, *about, *english, *chinese])
        return self.queries[victim]

    def crime_query(self, victim: str | None) -> str:
        """The death query extended by the scene: the words most frequent in the clue and
        act texts that best match it (the flour on the collar, the scrubbed rolling pin), so
        that what points at the weapon and the place counts, not only what names the dead."""
        key = (victim, len(self.scene_texts))
        if key not in self.extended:
            death = self.death_query(victim)
            found = self.scene.search(death, self.config.scene_texts)
            words: Counter[str] = Counter()
            for row, _ in found:
                words.update(dict.fromkeys(self.scene_words(self.scene_texts[row]), 1))
            extra = [w for w, _ in words.most_common(self.config.scene_words)]
            self.extended[key] = " ".join([death, *extra])
        return self.extended[key]

    def scene_words(self, text: str) -> list[str]:
        """The content words of a scene text: no names, function words or numbers."""
        function = lexicon().function_words
        names = {form.lower() for forms in self.names.forms.values() for form in forms}
        return [t for t in self.names.content_tokens.tokenize(self.names.strip(
            text, self.names.forms)) if t not in function and t not in names
            and not t.isdigit() and not kill_words(t)]

    def suspicion(self, candidates: list[str], victim: str | None) -> list[tuple[str, float]]:
        """Candidates (never this seat) from most to least suspicious; ties go to the seat
        questioned less so far, then to the candidates' order. A seat's suspicion is its
        evidence as a share of the most any candidate has, plus ``evasion_weight`` times how
        far its answers fall short of the others' in speaking to the crime."""
        query = self.crime_query(victim)
        totals = self.evidence.totals(query)
        pool = [c for c in candidates if c != self.name] or list(candidates)
        raw = {name: totals[name] + self.bonus[name] for name in pool}
        top = max(raw.values(), default=0.0)
        evasion = self.evasion(query)
        score = {name: (raw[name] / top if top > 0 else 0.0)
                 + self.config.evasion_weight * evasion.get(name, 0.0) for name in pool}
        ranked = sorted(enumerate(pool), key=lambda item: (
            -score[item[1]], self.asked[item[1]], item[0]))
        return [(name, round(score[name], 3)) for _, name in ranked]

    def tied(self, victim: str | None, seats: list[str]) -> bool:
        """Whether a text it holds names ``victim`` and concerns one of ``seats``."""
        if victim is None:
            return True
        return any(self.names.mentioned(text, [victim]) and any(about.get(s) for s in seats)
                   for text, about in zip(self.evidence.texts, self.evidence.about,
                                          strict=True))

    def evasion(self, query: str) -> dict[str, float]:
        """How far each seat's answers fall short of the others' in speaking to the crime:
        1 - its mean score for the crime query over the mean of every answering seat (0 for
        a seat that says as much as the rest, or more)."""
        scores = self.evidence.row_scores(query)
        per_seat: dict[str, list[float]] = {}
        for row, said in enumerate(self.evidence.said):
            if said is not None and said[1] == "answer":
                per_seat.setdefault(said[0], []).append(scores[row])
        means = {seat: sum(v) / len(v) for seat, v in per_seat.items()}
        overall = sum(means.values()) / len(means) if means else 0.0
        if overall <= 0:
            return {}
        return {seat: max(0.0, 1 - mean / overall) for seat, mean in means.items()}

    def reason_about(self, suspect: str, victim: str | None) -> str:
        """The sayable own sentence naming ``suspect`` most related to the crime."""
        rows = [n for n in self.sayable if n not in self.blocked
                and self.names.mentioned(self.facts[n].text, [suspect])]
        if not rows:
            return ""
        scores = self.answers.scores(self.crime_query(victim)).tolist()
        position = {n: i for i, n in enumerate(self.sayable)}
        best = max(rows, key=lambda n: (scores[position[n]], -n))
        return self.voice(self.facts[best].text)

    # -- deciding ------------------------------------------------------------------------------
    async def on_speak(self, decision: Speak) -> Speech:
        return Speech(text=self.speak(decision))

    async def on_ask(self, decision: AskQuestions) -> Questions:
        return self.ask(decision.candidates, decision.count, decision.victim)

    async def on_vote(self, decision: CastVote) -> Vote:
        seats = [c for c in decision.candidates if c != NOBODY]
        suspect, score = self.suspicion(seats, decision.victim)[0]
        if NOBODY in decision.candidates and not self.tied(decision.victim, seats):
            suspect = NOBODY  # nothing it heard ties anyone present to this death
        return Vote(target=suspect, reason=render(
            "extractive", "vote_reason", self.lang, suspect=suspect, score=score))

    async def on_accuse(self, decision: Accuse) -> Accusation:
        suspect, _ = self.suspicion(decision.candidates, None)[0]
        return Accusation(target=suspect, reason=self.reason_about(suspect, None))

    async def on_rate(self, decision: RateStatement) -> Rating:
        return self.rate(decision.statement.speaker)

    async def on_turn(self, decision: TakeTurn) -> Questions | Investigate:
        return self.turn(decision)

    def speak(self, decision: Speak) -> str:
        if decision.kind == "answer" and decision.question is not None:
            return self.answer(decision.question.text)
        if decision.kind == "introduction":
            intro = [self.voice(self.facts[n].text) for n in self.sayable
                     if self.facts[n].doc == 0 and n not in self.blocked
                     ][:self.config.intro_sentences]
            return render("extractive", "introduce", self.lang, me=self.name,
                          description=self.seat.sheet.me.description, facts=intro)
        if decision.kind == "clue_share":
            clues = [c for c in self.clues if self.guard is None or not self.guard.direct(c)]
            return render("extractive", "clues", self.lang, clues=clues)
        suspect, _ = self.suspicion(self.seat.sheet.seat_names, None)[0]
        if decision.kind == "reasoning":
            return self.reasoning(suspect)
        facts = []
        if decision.kind == "statement" and self.config.statement_sentences:
            facts = self.retrieve(self.crime_query(None), self.config.statement_sentences)
        return render("extractive", "suspect", self.lang, suspect=suspect, facts=facts,
                      reason=self.reason_about(suspect, None), victims=self.victims)

    def reasoning(self, suspect: str) -> str:
        """The suspect, how (the sayable sentence most related to the crime) and why (the
        one most related to motives), as "Modus operandi: ... Motive: ..."."""
        method = self.retrieve(self.crime_query(None), 1)
        motive = self.retrieve(" ".join([*self.names.forms[suspect],
                                         *lexicon().motive_words]), 1)
        return render("extractive", "reasoning", self.lang, suspect=suspect,
                      victims=self.victims, method=" ".join(method), motive=" ".join(motive))

    def answer(self, question: str) -> str:
        query = self.names.strip(question, [self.name])
        return render("extractive", "answer", self.lang,
                      facts=self.retrieve(query, self.config.answer_sentences))

    def retrieve(self, query: str, count: int) -> list[str]:
        """The ``count`` sayable sentences that best match ``query``, preferring ones not
        said yet; in the first person."""
        scores = self.answers.scores(query).tolist() if self.sayable else []
        ranked = sorted((i for i, s in enumerate(scores)
                         if s > 0 and self.sayable[i] not in self.blocked),
                        key=lambda i: (self.sayable[i] in self.said, -scores[i], i))
        chosen = [self.sayable[i] for i in ranked[:count]]
        self.said.update(chosen)
        return [self.voice(self.facts[n].text) for n in chosen]

    def voice(self, text: str) -> str:
        return first_person(text) if self.config.voice == "first" else text

    def ask(self, candidates: list[str], count: int, victim: str | None) -> Questions:
        """Questions to the candidate this seat has asked least so far, the most suspicious
        among equals: it hears every seat on the crime before it votes."""
        ranked = [name for name, _ in self.suspicion(candidates, victim)]
        target = min(ranked, key=lambda name: (self.asked[name], ranked.index(name)))
        victim_name = victim or (self.victims[0] if self.victims else "")
        lines = render("extractive", "questions", self.lang, target=target, victim=victim_name,
                       quote=self.quote(target, victim)).splitlines()
        lines = [line.strip() for line in lines if line.strip()]
        start = self.asked.total() + self.seat.seed
        questions = [lines[(start + i) % len(lines)] for i in range(count)]
        self.asked[target] += 1
        return Questions(target=target, questions=questions)

    def quote(self, speaker: str, victim: str | None) -> str:
        """The start of ``speaker``'s most crime-related sentence in an answer or statement
        so far (empty if none)."""
        text = self.evidence.best_said(speaker, QUOTABLE, self.crime_query(victim))
        if not text:
            return ""
        parts = sentences(text)
        sentence = next((p for p in parts if kill_words(p) or self.names.mentioned(
            p, self.victims)), parts[0])
        words = sentence.rstrip(".!?。！？").split()
        return " ".join(words[:14]) if len(words) > 1 else sentence[:30]

    def rate(self, speaker: str) -> Rating:
        """Doubt 2 for the top suspect, 1 for a seat with any evidence, else 0; trust is the
        rest of 2."""
        ranking = self.suspicion(self.seat.sheet.seat_names, None)
        doubt = 2 if ranking and ranking[0][0] == speaker and ranking[0][1] > 0 else (
            1 if dict(ranking).get(speaker, 0) > 0 else 0)
        return Rating(trust=2 - doubt, doubt=doubt)

    def turn(self, decision: TakeTurn) -> Questions | Investigate:
        """Every other turn searches the next location (in the listed order); the rest ask
        the top suspect."""
        self.turns += 1
        if decision.locations and self.turns % 2 == 0:
            return Investigate(location=decision.locations[(self.turns // 2 - 1)
                                                           % len(decision.locations)])
        return self.ask(decision.candidates, 1, None)
