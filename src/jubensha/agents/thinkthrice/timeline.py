"""Internal.

The agent's own timeline facts, times in text, answer length, and what a seat conceals.

Self-Refinement adds missing timeline facts to answers and Self-Verification checks
answers against them, so both need the facts as short "time, what I did" sentences: the
sheet's timeline when the script has one, else sentences extracted from the story once
(``sr.timeline``). A seat that conceals (by default the murderer) never has SR volunteer a
fact tied to one of its secrets: a fact is tied when it shares a clock time or at least
``overlap`` content words with a secret (names of people do not count, they are in every
sentence).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from jubensha.llm.text import HAN
from jubensha.memory.text import tokenize
from jubensha.prompts import render
from jubensha.scripts.model import Language, TimelineEntry

_HOURS_EN = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
_NUM_ZH = "零〇一二两三四五六七八九十"
_PERIOD_ZH = "早上|上午|中午|下午|傍晚|晚上|夜里|深夜|凌晨|半夜|清晨"
TIME_PATTERN = re.compile(
    "|".join((
        r"\d{1,2}\s*[:：]\s*\d{2}",                                    # 21:10, 9：05
        r"\b\d{1,2}(?:[.:]\d{2})?\s*(?:a\.?m\.?|p\.?m\.?)(?![a-z])",   # 9 pm, 9.30 a.m.
        rf"\b(?:\d{{1,2}}|{_HOURS_EN})\s*o'clock\b",
        r"\b(?:noon|midnight)\b",
        r"\b(?:half|quarter)\s+(?:past|to)\s+\w+",
        r"\d{1,2}\s*[点點时時]",                                        # 10点
        rf"(?:{_PERIOD_ZH})\s*[{_NUM_ZH}]{{1,3}}\s*[点點时時]",           # 晚上十点
        rf"[{_NUM_ZH}]{{1,3}}[点點时時](?:[{_NUM_ZH}\d]{{1,3}}分|半|[一三]刻|整|钟)",  # 十点半
        r"[子丑寅卯辰巳午未申酉戌亥]时",                                   # 子时
        r"午夜|正午",
    )),
    re.IGNORECASE,
)
"""Specific times of day in English and Chinese (appendix G's "time-matched" facts)."""
_CLOCK = re.compile(r"(\d{1,2})\s*[:：]\s*(\d{2})")
_HAN = re.compile(f"[{HAN}]")
_WORD = re.compile(r"\d{1,2}[:：]\d{2}|[^\W_]+(?:['’][^\W_]+)*")


def has_time(text: str) -> bool:
    """Whether ``text`` names a specific time of day."""
    return TIME_PATTERN.search(text) is not None


def clock_times(text: str) -> set[str]:
    """The ``hh:mm`` times in ``text``, zero-padded (``9:05`` and ``09:05`` are one time)."""
    return {f"{int(h):02d}:{m}" for h, m in _CLOCK.findall(text)}


def answer_length(text: str, unit: str) -> int:
    """Appendix G's "length of response": words, or for ``chars`` Chinese characters plus
    the words written in other scripts (names, numbers, English) in between."""
    if unit == "words":
        return len(_WORD.findall(text))
    han = len(_HAN.findall(text))
    return han + len(_WORD.findall(_HAN.sub(" ", text)))


def length_unit(unit: str, language: Language) -> str:
    """``auto`` → characters for Chinese games, words otherwise."""
    if unit != "auto":
        return unit
    return "chars" if language == "zh" else "words"


def entry_facts(entries: Iterable[TimelineEntry], lang: str) -> list[str]:
    """The sheet's timeline as "time, what happened" sentences."""
    return [render("thinkthrice", "fact", lang, time=entry.time or "", text=entry.text)
            for entry in entries if entry.text.strip()]


def _content(text: str, names: Sequence[str]) -> set[str]:
    """Content words of ``text``: no stop words, no names, no single letters or characters."""
    skip = {token for name in names for token in tokenize(name, keep_words=tuple(names))}
    return {token for token in tokenize(text, stopwords=True, keep_words=tuple(names))
            if len(token) > 1 and token not in skip and not _CLOCK.fullmatch(token)}


def tied_to_secret(fact: str, secrets: Sequence[str], names: Sequence[str],
                   overlap: int) -> bool:
    """Whether ``fact`` shares a clock time or ``overlap`` content words with a secret."""
    times = clock_times(fact)
    words = _content(fact, names)
    return any(times & clock_times(secret) or len(words & _content(secret, names)) >= overlap
               for secret in secrets)


def conceal(facts: Sequence[str], secrets: Sequence[str], names: Sequence[str],
            overlap: int) -> tuple[list[str], list[str]]:
    """Split ``facts`` into those the seat may volunteer and those tied to its secrets."""
    shown: list[str] = []
    hidden: list[str] = []
    for fact in facts:
        (hidden if tied_to_secret(fact, secrets, names, overlap) else shown).append(fact)
    return shown, hidden
