"""Internal.

Which English and Chinese WellPlay script are the same script, and what the PLAYER*
paper calls it.

The paper's tables name scripts in English (table A3 too, though it reports the Chinese
games); the authors' Chinese log folders carry Chinese titles, and one English title of
the release is longer than the paper's (``Oriental Star Cruise Incident``). The pairs
held in ``data/player_star_tables.yaml`` come from the authors' folder numbers;
``derive_pairs`` finds them again from a WellPlay copy that holds both languages: a
script and its translation put the same questions (by kind, answer letters and option
count) to the same characters (by position in ``script_info.json``).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from jubensha.scripts.importers.wellplay import discover_wellplay, import_wellplay
from jubensha.scripts.model import Script

MATCH = 0.9
"""Share of identical questions above which a script and its best match are a pair."""
_NUMBER = re.compile(r"^(\d+)-")


class WellPlayTitle(BaseModel):
    """One WellPlay script in both languages, and its name in the paper's tables."""

    model_config = ConfigDict(extra="forbid")

    number: str = Field(pattern=r"^\d+$", description="The authors' folder number (053).")
    paper: str
    en: str
    zh: str

    def names(self) -> set[str]:
        return {self.paper.casefold(), self.en.casefold(), self.zh.casefold()}


def folder_number(folder: str) -> str | None:
    """``131-罪恶（4人封闭）`` -> ``131``; None for an unnumbered folder."""
    found = _NUMBER.match(folder)
    return found.group(1) if found else None


def find_title(scripts: list[WellPlayTitle], title: str,
               folder: str = "") -> WellPlayTitle | None:
    """The script a log folder holds: by the authors' number, else by any of its titles."""
    number = folder_number(folder)
    by_number = next((s for s in scripts if number is not None and s.number == number), None)
    return by_number or next((s for s in scripts if title.casefold() in s.names()), None)


Fingerprint = Counter[tuple[int, str, bool, tuple[str, ...], int]]


def fingerprint(script: Script) -> Fingerprint:
    """The per-character questions, language-free: (character position, category,
    multiple, answer letters, option count). The full-script-access set is left out
    (its order and content differ between the languages of one script)."""
    names = [character.name for character in script.characters]
    return Counter((names.index(q.asked_of), q.category or "", q.multiple, tuple(q.answer),
                    len(q.options))
                   for q in script.questions.choice if q.asked_of in names)


def similarity(a: Fingerprint, b: Fingerprint) -> float:
    return sum((a & b).values()) / max(sum(a.values()), sum(b.values()), 1)


def derive_pairs(wellplay_root: Path) -> list[tuple[str, str]]:
    """(English title, Chinese title) of every script the folder holds in both languages:
    each one's best match, when the match is mutual and above ``MATCH``."""
    scripts = [import_wellplay(folder) for folder in discover_wellplay(wellplay_root)]
    prints: dict[tuple[str, str], Fingerprint] = {(s.language, s.title): fingerprint(s)
                                                  for s in scripts}
    english = [key for key in prints if key[0] == "en"]
    chinese = [key for key in prints if key[0] == "zh"]

    def best(key: tuple[str, str], pool: list[tuple[str, str]]) -> tuple[str, str] | None:
        scored = [(similarity(prints[key], prints[other]), other) for other in pool]
        top = max(scored, default=None)
        return top[1] if top and top[0] >= MATCH else None

    pairs = []
    for en in english:
        zh = best(en, chinese)
        if zh is not None and best(zh, english) == en:
            pairs.append((en[1], zh[1]))
    return sorted(pairs)
