"""Internal.

What a detective seat knows of its own sheet and what it will say of it.

Its facts are the sentences of its sheet (story, timeline, act texts, relationships; a
civilian's secrets too, which it knows but does not volunteer). What it *says* is chosen
from them, never the whole sheet: a civilian keeps back the sentences that tell one of its
listed secrets; a murderer also keeps back everything about its kill (``extractive``'s
``Guard``: killing words, the victim, the crime's times and scene, and their neighbours).
The murderer's cover is what is left: the sayable entries of its day up to the crime,
told as if nothing happened after them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from jubensha.agents.extractive_knowledge import ExtractiveConfig, Fact, sheet_facts
from jubensha.agents.extractive_text import CachedTokenizer, NameForms, clock_times, sentences
from jubensha.agents.fallback import CoverGuard
from jubensha.agents.person import first_person
from jubensha.engine import CharacterSheet
from jubensha.memory.lexical import BM25Index
from jubensha.prompts import render
from jubensha.scripts.model import ActSheet


def name_forms(sheet: CharacterSheet) -> NameForms:
    """Every seat's and victim's names and the short forms that belong to one of them."""
    victims = [v.name for v in sheet.victims]
    seats = {sheet.me.name: sheet.me.all_names, **{o.name: [o.name] for o in sheet.others}}
    return NameForms({**{v: [v] for v in dict.fromkeys([*victims, *sheet.me.killed])},
                      **seats})


@dataclass
class Knowledge:
    """The seat's own facts, which of them it may say, and retrieval over those."""

    sheet: CharacterSheet
    names: NameForms
    facts: list[Fact] = field(default_factory=list)
    withheld: dict[int, str] = field(default_factory=dict)
    said: set[int] = field(default_factory=set)
    acts: set[int] = field(default_factory=set)
    crime: str = ""
    """What is known of the crime (the background's death sentences): the query that
    ranks what a civilian tells first."""

    def __post_init__(self) -> None:
        self.tokens = CachedTokenizer(keep_words=self.names.keep_words)
        self.guard = CoverGuard(self.sheet, self.names, ExtractiveConfig())
        self.index = BM25Index(self.tokens)
        self.learn(sheet_facts(self.sheet.me, self.sheet.language, include_secrets=True))
        if self.sheet.me.act_sheet(1) is not None:
            self.acts.add(1)

    @property
    def murderer(self) -> bool:
        return self.sheet.is_murderer

    def learn(self, facts: list[Fact]) -> None:
        """Add facts; what may be said is judged again over all of them (a new act can show
        that an old sentence was about the crime)."""
        self.facts.extend(facts)
        self.index.add([f.text for f in facts])
        if self.murderer:
            self.withheld = self.guard.withheld(self.facts)
        else:
            self.withheld = {i: "secret" for i, f in enumerate(self.facts)
                             if f.source == "secret" or self.guard.direct(f.text) == "secret"}

    def learn_act(self, sheet: ActSheet) -> None:
        if sheet.act in self.acts:
            return
        self.acts.add(sheet.act)
        doc = max((f.doc for f in self.facts), default=-1) + 1
        self.learn([Fact(text, "act", doc, i) for i, text in enumerate(sentences(sheet.text))])

    def sayable(self) -> list[int]:
        return [i for i in range(len(self.facts)) if i not in self.withheld]

    def voice(self, number: int) -> str:
        """A fact as the character says it: in the first person; an entry of its day
        marked with whose it is (a small model reads "At 20:30: Mixes the dough" as said
        of whoever was named last)."""
        fact = self.facts[number]
        day = self.sheet.me.timeline
        if fact.source == "timeline" and fact.position < len(day):
            entry = day[fact.position]
            if entry.time:
                return render("detective", "timeline", self.sheet.language, time=entry.time,
                              me=self.sheet.me.name,
                              text=first_person(entry.text.strip(), self.sheet.language))
        return first_person(fact.text, self.sheet.language)

    def best(self, query: str, count: int, among: Sequence[int] | None = None) -> list[int]:
        """The ``count`` sayable facts that best match ``query``, those not said yet first."""
        pool = set(self.sayable() if among is None else among) - set(self.withheld)
        scores = self.index.scores(query).tolist() if self.facts else []
        ranked = sorted((i for i in pool if scores[i] > 0),
                        key=lambda i: (i in self.said, -scores[i], i))
        return ranked[:count]

    def tell(self, numbers: Sequence[int]) -> list[str]:
        """The facts in the sheet's order, in the first person, marked as said."""
        self.said.update(numbers)
        return [self.voice(i) for i in sorted(numbers)]

    def introduction(self, victims: Sequence[str], count: int) -> list[int]:
        """Who the seat is to the victim and where it was: the sayable relationship to a
        victim, then the latest sayable entries of its day (for a murderer, its cover:
        where it says it was, up to the crime)."""
        chosen: list[int] = []
        about_victim = [i for i in self.sayable() if self.facts[i].source == "relationship"
                        and self.names.mentioned(self.facts[i].text, list(victims))]
        chosen += about_victim[:1]
        day = [i for i in self.sayable() if self.facts[i].source == "timeline"]
        if not day:
            day = [i for i in self.sayable() if self.facts[i].source in ("story", "act")]
        left = count - len(chosen)
        if not self.murderer and self.crime:
            chosen += self.observations(day, left)
        chosen += [i for i in self.cover(day, left) if i not in chosen]
        return chosen[:count]

    def observations(self, day: list[int], count: int) -> list[int]:
        """What a civilian saw of the others that best matches what is known of the crime:
        entries of its day that name another seat, by BM25 against the crime."""
        others = [n for n in self.sheet.seat_names if n != self.sheet.me.name]
        named = [i for i in day if self.names.mentioned(self.facts[i].text, others)]
        scores = self.index.scores(self.crime).tolist()
        ranked = sorted(named, key=lambda i: (-scores[i], i))
        return sorted(i for i in ranked[:count] if scores[i] > 0)

    def cover(self, day: list[int], count: int) -> list[int]:
        """The last ``count`` of ``day`` before the crime: a murderer's ends where its
        withheld sentences begin (what it says it was doing then); a civilian's are the
        entries nearest the crime it knows of, the latest of its day."""
        if count <= 0 or not day:
            return []
        if self.murderer:
            first_withheld = min((i for i, why in self.withheld.items() if why != "secret"
                                  and self.facts[i].source == self.facts[day[0]].source),
                                 default=None)
            if first_withheld is not None:
                before = [i for i in day if i < first_withheld]
                day = before or day
        timed = [i for i in day if clock_times(self.facts[i].text)]
        return (timed or day)[-count:]
