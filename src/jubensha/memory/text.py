"""Bilingual text tools: language detection, tokenisation, sentences, token counts, chunks.

Retrieval (BM25), budgets and the metrics (TF-IDF, n-grams, ROUGE-L) must all cut text the
same way, and Chinese has no spaces: a tokeniser that splits on whitespace or keeps only
ASCII words silently drops it. Everything here handles mixed Chinese and English text
(English scripts keep Chinese names; Chinese scripts contain times and numbers), needs no
network, and keeps chunks as exact slices of the input so that nothing is lost.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import cache
from typing import Literal

from bm25s.stopwords import STOPWORDS_CHINESE, STOPWORDS_EN
from pydantic import BaseModel, ConfigDict

from jubensha.llm.text import HAN
from jubensha.scripts.model import Language
from jubensha.segmenter import jieba_module

ZhMode = Literal["jieba", "chars"]

_HAN = HAN
_HAN_RE = re.compile(f"[{_HAN}]")
_HAN_RUN_RE = re.compile(f"([{_HAN}]+)")
# Full-width and CJK punctuation: each is usually a token of its own in BPE vocabularies.
_CJK_PUNCT_RE = re.compile("[\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]")
_LATIN_LETTER_RE = re.compile(f"[^\\W\\d_{_HAN}]")
# One retrieval token outside Han runs: a clock time, a number, or a word (with apostrophes).
_WORD_TOKEN_RE = re.compile(
    r"\d{1,2}:\d{2}(?::\d{2})?(?!\d)"
    r"|\d+(?:\.\d+)*"
    f"|[^\\W\\d_{_HAN}]+(?:'[^\\W\\d_{_HAN}]+)*"
)
_COUNT_WORD_RE = re.compile(f"[^\\W_{_HAN}]+")

WORD_TOKEN_WEIGHT = 1.3
"""Approximate BPE tokens per English word or number (the usual ~0.75 words per token)."""
HAN_TOKEN_WEIGHT = 1.0
"""Approximate tokens per Chinese character and per full-width punctuation mark."""

_CLOSERS = "\"'”’」』）)】》"
_SENTENCE_END_RE = re.compile(
    f"(?:[。！？；]|…+)+[{_CLOSERS}]*"           # Chinese terminators end a sentence outright
    f"|[.!?]+[{_CLOSERS}]*(?=\\s|$|[{_HAN}])"    # Latin ones only before a space or Han text
    r"|\n"
)
_CLAUSE_END_RE = re.compile(r"[，、：,:](?=\s)|[，、：]")
# Smallest cut pieces: each counts at most 1 token, so any limit of 1 or more can be met.
_ATOM_RE = re.compile(f"[{_HAN}]|[^\\W_{_HAN}]+|\\S")
_ABBREVIATIONS = frozenset({
    "mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "mt", "capt", "col", "gen", "lt",
    "sgt", "rev", "vs", "fig", "inc", "ltd",
})


def han_share(text: str) -> float:
    """Share of Chinese characters among all letters (Han plus other scripts' letters)."""
    han = len(_HAN_RE.findall(text))
    letters = han + len(_LATIN_LETTER_RE.findall(text))
    return han / letters if letters else 0.0


def detect_language(text: str, threshold: float = 0.2) -> Language:
    """``zh`` when Han characters make up at least ``threshold`` of the letters, else ``en``.

    Letters, not characters, are compared, so an English sentence naming 张三 stays ``en``
    while a Chinese one quoting an English word stays ``zh``.
    """
    return "zh" if han_share(text) >= threshold else "en"


@cache
def _stopwords() -> frozenset[str]:
    return frozenset(STOPWORDS_EN) | frozenset(STOPWORDS_CHINESE)


@cache
def _keep_pattern(words: tuple[str, ...]) -> re.Pattern[str] | None:
    han_words = sorted({w for w in words if w and _HAN_RUN_RE.fullmatch(w)}, key=len, reverse=True)
    return re.compile("(" + "|".join(map(re.escape, han_words)) + ")") if han_words else None


def _han_tokens(run: str, zh_mode: ZhMode, keep_words: tuple[str, ...]) -> list[str]:
    if zh_mode == "chars":
        return list(run)
    pattern = _keep_pattern(keep_words)
    if pattern is None:
        return jieba_module().lcut(run)
    tokens: list[str] = []
    for i, part in enumerate(pattern.split(run)):
        if i % 2:
            tokens.append(part)
        elif part:
            tokens.extend(jieba_module().lcut(part))
    return tokens


def tokenize(text: str, zh_mode: ZhMode = "jieba", stopwords: bool = False,
             keep_words: tuple[str, ...] = ()) -> list[str]:
    """Retrieval and metric tokens of mixed Chinese/English text.

    Text is NFKC-normalised (full-width digits and colons become ASCII) and lower-cased.
    Han runs become jieba words or single characters (``zh_mode``); elsewhere tokens are
    words, numbers and clock times, so ``21:10`` stays one token. Punctuation is dropped.
    ``stopwords`` removes bm25s's English and Chinese stop-word lists. ``keep_words``
    (character names) always stay one token in jieba mode, where jieba alone may glue a
    name to the next character (张三在).
    """
    normal = unicodedata.normalize("NFKC", text).lower().replace("’", "'")
    tokens: list[str] = []
    for i, part in enumerate(_HAN_RUN_RE.split(normal)):
        if i % 2:
            tokens.extend(_han_tokens(part, zh_mode, keep_words))
        else:
            tokens.extend(_strip_possessive(m.group()) for m in _WORD_TOKEN_RE.finditer(part))
    if stopwords:
        stop = _stopwords()
        tokens = [t for t in tokens if t not in stop]
    return tokens


def _strip_possessive(word: str) -> str:
    return word[:-2] if word.endswith("'s") and len(word) > 2 else word


class TokenizerOptions(BaseModel):
    """How a store or metric tokenises; ``tokenize`` also fits rouge-score's tokenizer slot."""

    model_config = ConfigDict(frozen=True)

    zh_mode: ZhMode = "jieba"
    stopwords: bool = False
    keep_words: tuple[str, ...] = ()

    def tokenize(self, text: str) -> list[str]:
        return tokenize(text, zh_mode=self.zh_mode, stopwords=self.stopwords,
                        keep_words=self.keep_words)


def count_tokens(text: str) -> int:
    """Approximate model tokens, for budgets only (no tokenizer tables, no network).

    Each Han character and full-width punctuation mark counts ``HAN_TOKEN_WEIGHT``, each
    other word or number ``WORD_TOKEN_WEIGHT``; ASCII punctuation is folded into the word
    weight. The sum is rounded half up, so a single word counts 1. Adding text never
    lowers the count, which is what greedy packing relies on.
    """
    han = len(_HAN_RE.findall(text)) + len(_CJK_PUNCT_RE.findall(text))
    words = len(_COUNT_WORD_RE.findall(_HAN_RE.sub(" ", text)))
    return int(han * HAN_TOKEN_WEIGHT + words * WORD_TOKEN_WEIGHT + 0.5)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence in ``text``, surrounding whitespace excluded."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END_RE.finditer(text):
        end = match.end()
        if match.group()[0] in ".!?" and not _latin_boundary(text, match.start(), end):
            continue
        spans.extend(_trimmed(text, start, end))
        start = end
    spans.extend(_trimmed(text, start, len(text)))
    return spans


def _latin_boundary(text: str, start: int, end: int) -> bool:
    """Whether ``.``/``!``/``?`` ends a sentence: not before a lower-case word, not after
    a title abbreviation (Mr.) or a single initial (J.)."""
    rest = text[end:].lstrip()
    if rest[:1].islower():
        return False
    if text[start:end].rstrip(_CLOSERS) != ".":
        return True
    word = re.search(r"([^\W\d_]+)$", text[:start])
    if word is None:
        return True
    previous = word.group(1)
    return not (previous.lower() in _ABBREVIATIONS or (len(previous) == 1 and previous.isupper()))


def _trimmed(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        yield start, end


def split_sentences(text: str) -> list[str]:
    """Sentences of English or Chinese text; see ``docs/memory.md`` for the rules."""
    return [text[s:e] for s, e in sentence_spans(text)]


def chunk(text: str, max_tokens: int) -> list[str]:
    """Consecutive slices of ``text`` of at most ``max_tokens`` (``count_tokens``) each.

    Whole sentences are packed greedily; a sentence over the limit is cut at clause marks
    (，、：, ,:) and then between words or Han characters. Joining the chunks gives back
    the text up to whitespace between them.
    """
    if max_tokens < 1:
        raise ValueError(f"chunk: max_tokens must be at least 1, got {max_tokens}")
    units: list[tuple[int, int]] = []
    for s, e in sentence_spans(text):
        units.extend(_fitting_units(text, s, e, max_tokens))
    return [text[s:e] for s, e in _pack(text, units, max_tokens)]


def _fitting_units(text: str, start: int, end: int, max_tokens: int) -> list[tuple[int, int]]:
    """The sentence itself when it fits, else its clauses, else its words/characters."""
    if count_tokens(text[start:end]) <= max_tokens:
        return [(start, end)]
    units: list[tuple[int, int]] = []
    clause_start = start
    cuts = [m.end() + start for m in _CLAUSE_END_RE.finditer(text[start:end])]
    for cut in [*cuts, end]:
        for s, e in _trimmed(text, clause_start, cut):
            if count_tokens(text[s:e]) <= max_tokens:
                units.append((s, e))
            else:
                atoms = [(m.start() + s, m.end() + s) for m in _ATOM_RE.finditer(text[s:e])]
                units.extend(_pack(text, atoms, max_tokens))
        clause_start = cut
    return units


def _pack(text: str, units: list[tuple[int, int]], max_tokens: int) -> list[tuple[int, int]]:
    """Merge consecutive spans greedily while the covering slice stays within the limit."""
    packed: list[tuple[int, int]] = []
    for s, e in units:
        if packed and count_tokens(text[packed[-1][0]:e]) <= max_tokens:
            packed[-1] = (packed[-1][0], e)
        else:
            packed.append((s, e))
    return packed
