"""Internal.

What a guarded seat says when nothing it wrote may be said, even once rewritten: a fact
of the case from its own sheet that it may say, never the same line twice.

The facts are the sentences of its sheet (story, timeline, act 1 text, relationships) less
what it must keep: a civilian's listed secrets, a murderer's kill and everything near it
(``extractive``'s ``Guard``, as the ``detective`` agent withholds them) and its motive. The
one that best fits what was asked (shared words) and was not said yet comes first, told in
the first person in a line of ``prompts/guard/<lang>/fallback.j2``. Only when none is left
does a neutral line of ``safe.j2`` stand in, each variant once.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections import Counter
from collections.abc import Callable

from jubensha.agents.disclosure import states_motive, units
from jubensha.agents.extractive_knowledge import ExtractiveConfig, Fact, Guard, sheet_facts
from jubensha.agents.extractive_text import NameForms, clock_times
from jubensha.agents.person import first_person
from jubensha.engine import CharacterSheet
from jubensha.prompts import render

CRIME_WORDS = 2
"""Content words (no names, numbers or times) a sentence shares with a withheld one that
withhold it too; in Chinese, ``CRIME_BIGRAMS`` pairs of characters of them (jieba cuts
"把你叫进账房" and "被沈墨山叫进账房" apart differently)."""
CRIME_BIGRAMS = 3
COMMON_SHARE = 5
"""A word found in more than one sentence of the sheet in this many links nothing (a
generated day is "I spent 21:00 to 21:40 in the dining room" from end to end)."""
_FUNCTION_HAN = frozenset("的了在是我你他她它们把被和与就也都又还很这那个一不没有着过到")


class CoverGuard(Guard):
    """``extractive``'s guard without its rule that a murderer never names the victim: a
    murderer who cannot say "I carried Elias his tea" has no day to tell. Killing words,
    secrets, the crime's times and scene words, and their neighbours stay withheld, and so
    does a sentence that tells its motive or preparations (the speech guard's rule), and
    any sentence that shares ``CRIME_WORDS`` content words with a withheld one, again until
    none does: the timeline's "16:00: called into the counting house to bring the ledger
    and receipts" tells the motive the story's withheld lines tell around it."""

    def __init__(self, sheet: CharacterSheet, names: NameForms, config: ExtractiveConfig):
        super().__init__(sheet, names, config)
        self.language = sheet.language

    def direct(self, text: str) -> str | None:
        found = super().direct(text)
        if found == "victim":
            found = None
        if found is None and states_motive(first_person(text, self.language).casefold()):
            return "motive"
        return found

    def withheld(self, facts: list[Fact]) -> dict[int, str]:
        reasons = super().withheld(facts)
        words = [self.crime_words(f.text) for f in facts]
        common = Counter(w for found in words for w in found)
        most = max(2, len(facts) // COMMON_SHARE)
        words = [{w for w in found if common[w] <= most} for found in words]
        least = CRIME_BIGRAMS if self.language.startswith("zh") else CRIME_WORDS
        grown = True
        while grown:
            grown = False
            for i in range(len(facts)):
                if i not in reasons and any(len(words[i] & words[j]) >= least
                                            for j in list(reasons)):
                    reasons[i] = "crime words"
                    grown = True
        return reasons

    def crime_words(self, text: str) -> set[str]:
        """What two sentences about the same thing share: content words that are no name,
        number or time; in Chinese, the character pairs of the text without names."""
        if self.language.startswith("zh"):
            for form in sorted((f for forms in self.names.forms.values() for f in forms),
                               key=len, reverse=True):
                text = text.replace(form, " ")
            return {a + b for run in re.findall(r"[\u4e00-\u9fff]+", text)
                    for a, b in itertools.pairwise(run)
                    if not (a in _FUNCTION_HAN or b in _FUNCTION_HAN)}
        names = {part.casefold() for forms in self.names.forms.values() for form in forms
                 for part in (form, *self.names.content_tokens.tokenize(form))}
        return {w for w in self.content(text) if w not in names
                and not any(c.isdigit() for c in w)}


ASKING = ("ask", "turn")
"""Kinds that ask a question: "at that time…" wants a fact with a time."""
SILENT = ("investigate", "accuse")
"""Kinds whose text may be left out (a search's statement, an accusation's reason)."""
SAFE_VARIANTS = 12


def sayable_facts(sheet: CharacterSheet) -> list[str]:
    """The seat's own facts that it may say, in the first person, in the sheet's order."""
    said, _ = sort_facts(sheet)
    return said


def kept_facts(sheet: CharacterSheet) -> list[str]:
    """The sentences of the seat's sheet it must keep (as written, and in the first
    person): a civilian's secrets, a murderer's kill, what is near it, and its motive."""
    _, kept = sort_facts(sheet)
    return kept


def sort_facts(sheet: CharacterSheet) -> tuple[list[str], list[str]]:
    """(sayable, kept) sentences of the seat's sheet (see the module docstring)."""
    me, lang = sheet.me, sheet.language
    victims = [v.name for v in sheet.victims]
    names = NameForms({**{v: [v] for v in dict.fromkeys([*victims, *me.killed])},
                       me.name: me.all_names, **{o.name: [o.name] for o in sheet.others}})
    facts = sheet_facts(me, lang, include_secrets=False)
    guard = CoverGuard(sheet, names, ExtractiveConfig())
    if sheet.is_murderer:
        withheld = set(guard.withheld(facts))
    else:
        withheld = {i for i, f in enumerate(facts) if guard.direct(f.text) == "secret"}
    said: list[str] = []
    kept: list[str] = []
    for i, fact in enumerate(facts):
        text = first_person(fact.text, lang)
        if i in withheld or (sheet.is_murderer and states_motive(text.casefold())):
            kept += [fact.text, text]
        else:
            said.append(text)
    return said, kept


class Fallback:
    """One seat's last-resort lines (see the module docstring)."""

    def __init__(self, sheet: CharacterSheet) -> None:
        self.sheet = sheet
        self.lang = sheet.language
        self.used: set[str] = set()
        self.told: set[int] = set()
        """The facts said already (a fact comes again only when every other has)."""
        self._facts: list[str] | None = None
        digest = hashlib.sha256(sheet.me.name.encode()).hexdigest()
        self.start = int(digest, 16) % SAFE_VARIANTS

    @property
    def facts(self) -> list[str]:
        if self._facts is None:
            self._facts = sayable_facts(self.sheet)
        return self._facts

    def line(self, kind: str, about: str = "", passes: Callable[[str], bool] = bool) -> str:
        """A line for ``kind`` not said before that ``passes`` (the guard's own check):
        the fact nearest ``about`` (what was asked; a question asks about a fact with a
        time), else a neutral line; "" for a search's statement or an accusation's reason."""
        if kind in SILENT:
            return ""
        wanted = set(units(about))
        asking = kind in ASKING
        ranked = sorted(range(len(self.facts)), key=lambda i: (
            i in self.told, asking and not clock_times(self.facts[i]),
            -len(wanted & set(units(self.facts[i]))), i))
        me = self.sheet.me.name
        for number, index in enumerate(ranked):
            fact = self.facts[index]
            introduced = fact.casefold().startswith((f"i am {me}".casefold(), f"我是{me}"))
            line = render("guard", "fallback", self.lang, kind=kind, me=me, fact=fact,
                          introduced=introduced,
                          variant=self.start + len(self.used) + number)
            if line not in self.used and passes(line):
                self.told.add(index)
                return self._use(line)
        lines = [render("guard", "safe", self.lang, kind=kind, me=me, variant=self.start + i)
                 for i in range(SAFE_VARIANTS)]
        fresh = [line for line in lines if line and line not in self.used]
        return self._use(fresh[0] if fresh else lines[len(self.used) % len(lines)])

    def _use(self, line: str) -> str:
        self.used.add(line)
        return line
