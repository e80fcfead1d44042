"""Internal.

What the extractive agent knows and weighs: its settings, the sentences of its own sheet
(``Fact``), which of them a murderer never says (``Guard``), and the texts that make each
seat suspicious (``Evidence``). ``docs/agents/baselines.md`` gives the withholding rules and
the evidence score.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from jubensha.agents.extractive_text import NameForms, clock_times, kill_words, lexicon, sentences
from jubensha.agents.options import parse_options
from jubensha.engine import CharacterSheet, OwnCharacter
from jubensha.memory.lexical import BM25Index
from jubensha.memory.text import TokenizerOptions
from jubensha.prompts import render


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


# -- what the seat knows -------------------------------------------------------------------
@dataclass
class Fact:
    """One sentence the seat knows from its own sheet, and where it sits (document, position)
    so that its neighbours can be found."""

    text: str
    source: str
    doc: int
    position: int


def sheet_facts(me: OwnCharacter, lang: str, include_secrets: bool) -> list[Fact]:
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

    def totals(self, query: str) -> dict[str, float]:
        totals: dict[str, float] = {}
        for row, score in enumerate(self.row_scores(query)):
            if score > 0:
                for name, weight in self.about[row].items():
                    totals[name] = totals.get(name, 0) + weight * score
        return totals

    def best_said(self, speaker: str, kinds: Iterable[str], query: str) -> str:
        """``speaker``'s text of one of ``kinds`` that best matches ``query`` ("" if none
        matches)."""
        scores = self.row_scores(query)
        rows = [i for i, said in enumerate(self.said) if said and said[0] == speaker
                and said[1] in kinds and scores[i] > 0]
        return self.texts[max(rows, key=lambda i: (scores[i], -i))] if rows else ""
