"""Internal.

Is a sentence read out of a prompt template? The words of every template of the game's
language (``prompts/<area>/<lang>/*.j2``) with each ``{{ value }}`` a gap that any one to
three words fill: "Speak as {{ me }} in at most 3 sentences" holds "speak as Tom Hale in
at most 3 sentences" whoever is named. Only the templates' own words count, never what
filled their gaps: a detective seat's prompt carries the facts and the reason it is to say
("你怀疑{{ suspect }}，因为：{{ reason }}"), and saying them is no echo. A window needs
``n - 1`` of the template's own words (one gap at most), so two gaps side by side ("你怀疑
窦燕如，因为她…") match nothing. Lines that are speech themselves (the guard's safe and
fallback lines, a timeline entry as a seat tells it) are not instructions and are left out,
and so are windows of a few short words ("让你对…有").
"""

from __future__ import annotations

import re
from collections.abc import Container, Sequence
from functools import lru_cache

from jubensha.agents.disclosure import units
from jubensha.prompts import PROMPTS_DIR

GAP = "\x00"
MIN_CHARS = {"en": 12, "zh": 6}
"""Characters a window's own words need: four short words around a gap ("让你对…有") are
anyone's speech, not a template's."""
GAP_WORDS = 3
"""At most this many words fill one gap."""
SPOKEN = frozenset({"guard/safe", "guard/fallback", "detective/timeline", "extractive/timeline",
                    "extractive/relationship"})
"""Templates whose text is speech, not instructions (``area/name``)."""
_VALUE = re.compile(r"\{\{.*?\}\}", re.DOTALL)
_BREAK = re.compile(r"\{%.*?%\}|\{#.*?#\}|\n", re.DOTALL)


def _streams(source: str) -> list[list[str]]:
    """Runs of units of a template's own words, a ``GAP`` where a value goes; a tag or a
    line break ends a run."""
    found = []
    for piece in _BREAK.split(source):
        stream: list[str] = []
        for number, text in enumerate(_VALUE.split(piece)):
            if number:
                stream.append(GAP)
            stream += units(text)
        if len(stream) > 1:
            found.append(stream)
    return found


@lru_cache(maxsize=8)
def template_windows(lang: str, n: int) -> frozenset[tuple[str, ...]]:
    """Windows of ``n`` units of every template of ``lang`` holding one gap at most."""
    found: set[tuple[str, ...]] = set()
    for path in sorted(PROMPTS_DIR.glob(f"*/{lang}/*.j2")):
        if f"{path.parent.parent.name}/{path.stem}" in SPOKEN:
            continue
        for stream in _streams(path.read_text(encoding="utf-8")):
            for start in range(len(stream) - n + 1):
                window = tuple(stream[start:start + n])
                own = sum(len(unit) for unit in window if unit != GAP)
                if (window.count(GAP) <= 1 and window[0] != GAP and window[-1] != GAP
                        and own >= MIN_CHARS[lang]):
                    found.add(window)
    return frozenset(found)


class TemplateEcho:
    """The template windows of one language; ``find`` a passage of a sentence they hold
    that the seat may not say anyway (``allowed``: windows of its sheet, the public text,
    what it heard)."""

    def __init__(self, lang: str, n: int = 5) -> None:
        self.n = n
        self.lang = "zh" if lang.startswith("zh") else "en"
        self.windows = template_windows(self.lang, n)

    def find(self, words: Sequence[str], allowed: Container[tuple[str, ...]] = ()
             ) -> tuple[str, ...] | None:
        """The units of ``words`` that read a template out, or None."""
        n = self.n
        for start in range(len(words) - n + 1):
            exact = tuple(words[start:start + n])
            if exact in self.windows and exact not in allowed:
                return exact
            for gap in range(1, n - 1):
                for filled in range(1, GAP_WORDS + 1):
                    end = start + n - 1 + filled
                    if end > len(words):
                        break
                    probe = (*words[start:start + gap], GAP, *words[start + gap + filled:end])
                    if probe in self.windows and not self._allowed(words[start:end], allowed):
                        return tuple(words[start:end])
        return None

    def _allowed(self, passage: Sequence[str], allowed: Container[tuple[str, ...]]) -> bool:
        spans = [tuple(passage[i:i + self.n]) for i in range(len(passage) - self.n + 1)]
        return bool(spans) and all(w in allowed for w in spans)
