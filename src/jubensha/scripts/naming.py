"""Which character a person means by what they typed: the whole name in any case, or a first
or last name alone ("agnes", "Pike"), or for a Chinese name its start or end ("顾", "青禾").

The terminal's choices and ``play --seat`` read names the same way: a part that fits one
name picks it, a part that fits several is refused with those names, so a person is never
guessed for.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from jubensha.llm.text import HAN
from jubensha.scripts.model import name_key

_CJK = re.compile(f"[{HAN}]")
_WORD_EDGE = ".,'\"()"


_ENDS = " .,;:!?。，；：！？、\"'“”‘’"


def _plain(text: str) -> str:
    return " ".join(text.casefold().split()).strip(_ENDS)


def _parts(name: str) -> set[str]:
    """What may stand for ``name`` alone: each of its words ("Dr." also as "dr"), and for a
    Chinese name every start and end of it shorter than the whole."""
    plain = _plain(name)
    words = plain.replace("-", " ").split()
    parts = set(words) | {word.strip(_WORD_EDGE) for word in words}
    if _CJK.search(plain) and " " not in plain:
        parts |= {plain[:n] for n in range(1, len(plain))}
        parts |= {plain[n:] for n in range(1, len(plain))}
    return {part for part in parts if part and (len(part) > 1 or _CJK.match(part))}


def names_meant(text: str, names: Sequence[str]) -> list[str]:
    """The names ``text`` may mean, in ``names``' order: the one it spells whole (compared
    as ``name_key`` compares: case, spaces and invisible characters aside), else every name
    it spells a part of. None, one, or several (then the person must say more)."""
    typed = _plain(text)
    if not typed:
        return []
    keys = {name_key(text), name_key(typed)}  # "Agnes Pike." as "Agnes Pike"
    whole = [name for name in names if name_key(name) in keys]
    if whole:
        return whole[:1]
    return [name for name in names if typed in _parts(name)]


def names_near(text: str, names: Sequence[str]) -> list[str]:
    """The names ``text`` looks like a misspelling of ("agnus" → Agnes Pike, "Samual Read"
    → Samuel Reed), closest first: the whole name or one of its parts, compared by
    ``difflib``'s similarity. For a hint ("Did you mean ...?"), never to choose for the
    person."""
    typed = _plain(text)
    if not typed:
        return []
    spelled = {_plain(name): name for name in names}
    for name in names:
        for part in _parts(name):
            spelled.setdefault(part, name)
    close = difflib.get_close_matches(typed, list(spelled), n=len(spelled), cutoff=0.6)
    return list(dict.fromkeys(spelled[match] for match in close))
