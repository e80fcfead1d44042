"""Internal.

Two things the detective reads off a sentence by its wording, in English and Chinese:
whether it names a seat as an owner ("Agnes Pike's shawl", 钱守仁的账本), and which seats
it puts in the writer's company ("played cribbage with Dr. Reed", 和许松一起).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from jubensha.agents.extractive_text import HAN, NameForms, clock_times

WINDOW_MINUTES = 90
"""How far from the time of death a sentence of company still gives an alibi."""


@lru_cache(maxsize=4096)
def _pattern(forms: tuple[str, ...], template: str) -> re.Pattern[str]:
    names = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
    return re.compile(template.replace("NAME", f"(?:{names})"), re.IGNORECASE)


def owner(text: str, seat: str, names: NameForms) -> bool:
    """Whether ``text`` names ``seat`` as the owner of something (``X's``, ``X的``)."""
    forms = tuple(names.forms.get(seat, [seat]))
    return bool(_pattern(forms, r"NAME(?:'s|’s|s'|的)").search(text))


_COMPANY = (r"\bwith (?:(?:dr|mr|mrs|miss|ms)\.? )?NAME\b", r"\bNAME and I\b",
            r"(?:和|跟|与|同|陪着?)NAME(?:一起|一道|一同|在|聊|说|待|坐|下|玩|打|喝|吃)",
            r"NAME(?:和|跟|与)我")


def company(text: str, seats: Sequence[str], names: NameForms) -> list[str]:
    """The seats ``text`` puts in the writer's company."""
    found = []
    for seat in seats:
        forms = tuple(names.forms.get(seat, [seat]))
        if any(_pattern(forms, template).search(text) for template in _COMPANY):
            found.append(seat)
    return found


def place_owners(place: str, profiles: dict[str, str], names: NameForms) -> list[str]:
    """The seats a clue's place belongs to: those it names ("Manager Xiu's Room"), else the
    one seat whose public description holds the place's name (账房 and 账房先生)."""
    if not place.strip():
        return []
    named = names.mentioned(place, list(profiles))
    if named:
        return named
    name = re.escape(place.strip())
    words = re.compile(name if HAN.search(place) else rf"(?<!\w){name}(?!\w)",
                       re.IGNORECASE)
    holders = [seat for seat, text in profiles.items() if text and words.search(text)]
    return holders if len(holders) == 1 else []


def minutes(time: str) -> int:
    hours, _, mins = time.partition(":")
    return int(hours) * 60 + int(mins)


def near(text: str, death: int | None, window: int = WINDOW_MINUTES) -> bool:
    """Whether a clock time in ``text`` lies within ``window`` minutes of ``death`` (the
    minute of the day; a night that passes midnight wraps)."""
    if death is None:
        return False
    for time in clock_times(text):
        gap = abs(minutes(time) - death) % (24 * 60)
        if min(gap, 24 * 60 - gap) <= window:
            return True
    return False


def death_minute(texts: Sequence[str]) -> int | None:
    """The latest clock time the texts about the death give (when the body was found:
    the crime happened before), or None."""
    times = [minutes(t) for text in texts for t in clock_times(text)]
    return max(times) if times else None
