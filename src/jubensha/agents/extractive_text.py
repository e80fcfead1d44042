"""Internal.

Reading and retelling text for the extractive agent: sentences, killing words, clock
times, the forms of a name (``NameForms``), and a second-person script sentence said in the
first person. The word lists are ``agents/data/extractive.yaml``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from importlib import resources

import yaml
from pydantic import BaseModel, PrivateAttr

from jubensha.llm.text import HAN as HAN_CLASS
from jubensha.memory.text import TokenizerOptions, split_sentences

HAN = re.compile(f"[{HAN_CLASS}]")
_CLOCK = re.compile(r"(?<![\d:])\d{1,2}[:：]\d{2}(?!\d|[:：]\d)")
WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_NAME_SPLIT = re.compile(r"[\s·•・()（）,，.。/]+")
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|「[^」]*」|『[^』]*』")
_YOU = re.compile(r"\b(you|your|yours|yourself)\b((?:'|’)(?:re|ve|ll|d)\b)?(\s+(?:are|were)\b)?",
                  re.IGNORECASE)
_CONTRACTIONS = {"re": "I'm", "ve": "I've", "ll": "I'll", "d": "I'd"}


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
    """The memory tokenizer with a cache of its own: the same sheets, crime queries and
    names come back all game, and jieba is the slow part of a Chinese game. Each seat's
    agent makes its own; a process-wide cache would hold every seat's private texts where
    any seat could read them (docs/isolation.md)."""

    _memo: dict[str, tuple[str, ...]] = PrivateAttr(default_factory=dict)

    def tokenize(self, text: str) -> list[str]:
        found = self._memo.get(text)
        if found is None:
            if len(self._memo) >= MEMO:
                self._memo.clear()
            found = self._memo[text] = tuple(super().tokenize(text))
        return list(found)


MEMO = 16_384
"""Texts a tokenizer remembers before it starts again."""


def sentences(text: str) -> tuple[str, ...]:
    return tuple(split_sentences(text))


def kill_words(text: str) -> list[str]:
    """The killing words in ``text`` (English whole words, Chinese substrings)."""
    words = lexicon()
    found = [w for w in WORD.findall(text.lower()) if w in words.kill_words_en]
    if HAN.search(text):
        found += [w for w in words.kill_words_zh if w in text]
    return found


def clock_times(text: str) -> set[str]:
    """Clock times in ``text``, normalised (``９：05`` and ``9:05`` are both ``9:05``)."""
    return {_normal_time(t) for t in _CLOCK.findall(text)}


def _normal_time(found: str) -> str:
    hours, _, minutes = found.replace("：", ":").partition(":")
    return f"{hours.lstrip('0') or '0'}:{minutes}"


# -- names -------------------------------------------------------------------------------------
def name_parts(name: str) -> list[str]:
    """The ways a name is shortened in text: its words (not titles), and a three-character
    Chinese name without its surname, or as its surname and an honorific (钱先生)."""
    parts = [p for p in _NAME_SPLIT.split(name) if p and p != name]
    if len(name) == 3 and all(HAN.match(c) for c in name):
        parts.append(name[1:])
        parts += [name[0] + title for title in lexicon().zh_honorifics]
    return [p for p in parts if p.lower() not in lexicon().titles
            and (len(p) >= 2 if HAN.match(p) else len(p) >= 3)]


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
                re.escape(f) if HAN.match(f) else rf"(?<!\w){re.escape(f)}(?!\w)"
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
