"""Which words of a script's texts are persons: the candidates the truth derivation weighs.

A murder story names many things that are not people — places ('Falan Manor', 巨人馆),
organisations (“动物之家”负责人), roles (the captain, 管家), counts (三名卫兵, two men) and
pronouns — and the derivation must never make one of them a victim. Names are found
without a list of names. An English name is a run of capitalised words that is not a
place or a role alone, and not a single word the texts also write in lower case. A Chinese
name is the unit a slot starts (or ends) with that the texts repeat as a whole (夏以月, not
夏以 nor 卡门解), else the word jieba finds there; it is a person when jieba does not know
it as a common word, tags it as a name, or the texts put a title after it (马尔普女士), or
quote or bracket it (候选人“节制”: WhodunitBench's tarot names are common words).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cached_property, lru_cache
from importlib import resources
from typing import Any

import yaml

from jubensha.llm.text import HAN
from jubensha.scripts.importers.common import CJK
from jubensha.segmenter import jieba_module

EN_NAME = r"[A-Z][a-z]+(?:['’][A-Z][a-z]+)?(?:[ -](?:[A-Z][a-z]+(?:['’][A-Z][a-z]+)?|[A-Z]{2,})){0,3}"
"""One to four capitalised words (``Old Black``, ``Yu Zu Chengmu``, ``O'Neil``); a
possessive ``'s`` is not part of the name."""



@lru_cache(maxsize=1)
def _english_words() -> dict[str, frozenset[str]]:
    """The word lists of ``data/person_words.yaml``: function, roles, numbers, places,
    and the Chinese surnames."""
    source = resources.files("jubensha.scripts.importers").joinpath("data/person_words.yaml")
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    return {key: frozenset(value.split()) for key, value in data.items()}


CJK_RUN = re.compile(f"[{HAN}·•]+")
_ZH_NOT_PERSON = re.compile(
    r"^(?:[一二两三四五六七八九十百几数多每某各整半全][个名位人具条口只批群伙]?.*"
    r"|[他她它你我您咱]们?.*|自己|大家|众人|有人|别人|他人|对方|此人|其人|本人|某人|谁"
    r"|死者|凶手|真凶|被害人|被害者|受害者|受害人|遇害者|尸体|遗体|嫌疑人|犯人|罪犯|凶犯"
    r"|所有人|其他人|其余人|家人|客人|主人|男人|女人|老人|孩子|小孩|人们|对象|目标)$")
_ZH_PLACE_END = re.compile(r"[馆楼村镇城山湖岛室房院厅店司团社所堂寺庙宫殿街路港站场园府厂局部校号舱河江海省市县区国界屋墙]$")
_ZH_ORG_AFTER = re.compile(r"^[”」』\"]?的?(?:负责人|老板|店长|院长|馆长|社长|会长|成员|员工|公司|集团|组织|协会"
                           r"|门口|里面|内部|之中)")
_ZH_TITLE_AFTER = re.compile(r"(?:先生|女士|小姐|太太|夫人|博士|教授|医生|导演|老师|警官|大人|少爷|老爷|同学"
                             r"|学长|学姐|学妹|学弟|大哥|大姐|阿姨|叔叔|伯伯|爷爷|奶奶)")
_ZH_COMMON_TAGS = ("n", "v", "a", "d", "r", "m", "q", "t", "s", "f", "p", "c", "u")
_ZH_NAME_TAGS = ("nr", "nz")
_ZH_DEATH = re.compile(r"[死杀害尸凶毒亡的了着他她它你我您]")
_NAMED_BY = r"(?:候选人|名叫|叫做|叫|代号|化名|外号|绰号|人称|名为)"
_STOP = re.compile(r"[的了着是在被将把和与及或而就也都又还才已曾从向对给让使地得之一]")


@lru_cache(maxsize=1)
def _tagger() -> tuple[Any, dict[str, str]]:
    """jieba's part-of-speech tagger and its dictionary (word → tag), loaded once."""
    posseg = jieba_module("jieba.posseg")
    posseg.dt.tokenizer.check_initialized()
    return posseg, posseg.dt.word_tag_tab


def words(text: str) -> list[tuple[str, str]]:
    """jieba's words of ``text`` with their part-of-speech tags."""
    posseg, _ = _tagger()
    return [(w.word, w.flag) for w in posseg.cut(text)]


class Corpus:
    """Every text of one script, to tell names from words by how the texts use them."""

    def __init__(self, texts: list[str], known: Iterable[str] = ()):
        self.text = "\n".join(texts)
        self._given = list(known)
        self._counts: dict[str, int] = {}

    @cached_property
    def lower_words(self) -> frozenset[str]:
        """Latin words the texts write in lower case somewhere (so not only names)."""
        return frozenset(re.findall(r"(?<![\w'’])[a-z][a-z'’-]*", self.text))

    def count(self, text: str) -> int:
        if text not in self._counts:
            self._counts[text] = self.text.count(text)
        return self._counts[text]

    # --- English ---------------------------------------------------------------------

    def english(self, phrase: str) -> str | None:
        """The person a capitalised phrase names, or None: leading function words are
        dropped (``After Sam`` → ``Sam``); a place or organisation (last word ``Manor``,
        ``Shipyard``...), roles and numbers alone (``Captain``, ``Second Mate``), or a
        single word the texts also write in lower case is no person."""
        known = _english_words()
        names = phrase.split()
        while names and names[0].lower() in known["function"]:
            names = names[1:]
        if not names or names[-1].lower() in known["places"]:
            return None
        lowered = [w.lower() for w in names]
        plain = known["function"] | known["roles"] | known["numbers"]
        if all(w in plain for w in lowered):
            return None
        if len(names) == 1 and lowered[0] in self.lower_words:
            return None
        return " ".join(names)

    # --- Chinese ---------------------------------------------------------------------

    @cached_property
    def known(self) -> list[str]:
        """Chinese names the texts mark as names — 【bracketed】 (MIRAGE's Chinese scripts
        bracket every person) or quoted right after a word for a person's name
        (候选人“节制”) — and those given to ``Corpus(known=...)``, longest first."""
        marked = re.findall(r"【([^【】\s]{2,8})】", self.text)
        marked += re.findall(_NAMED_BY + r"[“「『\"]([^”」』\"\s]{2,8})[”」』\"]", self.text)
        found = {m for m in [*marked, *self._given] if CJK.match(m)}
        return sorted(found, key=len, reverse=True)

    def unit_after(self, text: str, start: int) -> str | None:
        """The name that starts at ``start``: a known name, else the longest run of 2-5
        characters the texts repeat nearly as often as its first two (夏以月, not 卡门解),
        else jieba's word there if it is tagged a name."""
        run = CJK_RUN.match(text, start)
        if not run:
            return None
        known = next((k for k in self.known if run.group().startswith(k)), None)
        return known or self._unit(run.group()[:6], forward=True)

    def unit_before(self, text: str, end: int) -> str | None:
        """The name that ends at ``end`` (陆洲同 in 发现了陆洲同的尸体)."""
        runs = [m for m in CJK_RUN.finditer(text, max(0, end - 10), end) if m.end() == end]
        if not runs:
            return None
        known = next((k for k in self.known if runs[-1].group().endswith(k)), None)
        return known or self._unit(runs[-1].group()[-6:], forward=False)

    def _unit(self, run: str, *, forward: bool) -> str | None:
        if len(run) < 2:
            return None

        def take(n: int) -> str:
            return run[:n] if forward else run[-n:]

        base = self.count(take(2))
        best = None
        if base >= 2:
            for n in range(2, min(5, len(run)) + 1):
                if self.count(take(n)) >= max(2, 0.6 * base):
                    best = take(n)
        if best and not (_STOP.fullmatch(best[0]) or _STOP.fullmatch(best[-1])):
            return best
        found = words(run)
        word, tag = found[0] if forward else found[-1]
        return word if len(word) >= 2 and tag.startswith(("nr", "nz", "ns")) else None

    def units_in(self, text: str, start: int, limit: int = 24) -> list[tuple[str, int]]:
        """The names a phrase from ``start`` holds (死者为剧组女编剧及导演费雪 → 费雪), each
        with its position: units starting at jieba's word starts, up to a stop mark."""
        phrase = re.split(r"[，。；、,;！？!?\n（(]", text[start:start + limit], maxsplit=1)[0]
        found: list[tuple[str, int]] = []
        at = start
        for word, _ in words(phrase):
            if not found or at >= found[-1][1] + len(found[-1][0]):
                unit = self.unit_after(text, at) if CJK.match(word) else None
                if unit:
                    found.append((unit, at))
            at += len(word)
        return found

    def chinese(self, name: str, *, strong: bool, before: str = "", after: str = "") -> float:
        """How surely ``name`` (with the text ``before`` and ``after`` it) is a person:
        0 for a pronoun, a count (三名), a role word (死者), a place (…馆), an organisation
        (“…”负责人), a word of killing or death, or a phrase (…的…, …她); 1 for a known
        name, a word jieba tags as a name or, where only a person fits (``strong``), a
        place-like foreign name (卡门); 0 for another word of jieba's dictionary or one
        ending in such a word (女编剧); for a word jieba does not know, 1 when it starts
        with a surname or the texts put a title after it (马尔普女士), else 0.6."""
        if (not 2 <= len(name) <= 8 or not CJK.match(name) or _ZH_NOT_PERSON.match(name)
                or _ZH_DEATH.search(name) or _ZH_PLACE_END.search(name)
                or _ZH_ORG_AFTER.match(after)):
            return 0.0
        if name in self.known:
            return 1.0
        _, tags = _tagger()
        tag = tags.get(name)
        if tag is not None:
            return 1.0 if tag.startswith(_ZH_NAME_TAGS) or (
                strong and tag.startswith("ns")) else 0.0
        last = words(name)[-1][0]
        last_tag = tags.get(last, "")
        if len(last) >= 2 and last_tag.startswith(_ZH_COMMON_TAGS) \
                and not last_tag.startswith(_ZH_NAME_TAGS):
            return 0.0
        return 1.0 if _surname(name) or self._titled(name) else 0.6

    def _titled(self, name: str) -> bool:
        return bool(re.search(re.escape(name) + _ZH_TITLE_AFTER.pattern, self.text))


def untitled(name: str) -> str | None:
    """An English name without the titles before it (``Mr Zhao Wanlei`` → ``Zhao
    Wanlei``), when it had any and something of two words or more is left."""
    names = name.split()
    roles = _english_words()["roles"]
    rest = names
    while rest and rest[0].lower().rstrip(".") in roles:
        rest = rest[1:]
    return " ".join(rest) if rest != names and len(rest) >= 2 else None


def _surname(name: str) -> bool:
    """Whether a Chinese name starts with a surname (夏以月), or is a familiar form of
    one (小王, 老李, 阿明)."""
    surnames = _english_words()["surnames_zh"]
    if name[:1] in "小老阿" and len(name) >= 2:
        return True
    return name[:1] in surnames or name[:2] in surnames
