"""The truth of an imported script — its murderers and its victims — derived by weighing
every sentence of its texts that names the dead or the culprit.

An importer hands over the texts it has (``Passage``: the truth prose, clue texts,
character texts, each with its source) and its multiple-choice questions with their
answers (``Asked``). ``truth_evidence`` finds what each sentence says about whom; the
candidates are persons only (``persons``): for murderers the characters, for victims the
other names the texts treat as persons. Here the evidence is weighed: a person's weights
add up, repeats of one pattern in one source count less and less (1, 1/2, 1/3...), and two
names of one person count as one.

The best candidate is chosen, with any other that comes close (several murderers or
victims are possible); the confidence of the choice is its share of exp(score /
``TEMPERATURE``) among every candidate and "nobody" (``NOBODY``). Below ``MARGIN`` nothing
is derived and the candidates are named. docs/script-format.md has the rules and their
measured accuracy.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from jubensha.scripts.importers.persons import Corpus, untitled
from jubensha.scripts.importers.truth_evidence import (
    Asked,
    Fact,
    Found,
    Kind,
    Passage,
    People,
    answers,
    find_aliases,
    murderer_evidence,
    sentences,
    victim_evidence,
)
from jubensha.scripts.model import Candidate, Character, Derivation, Evidence

MARGIN = 0.5
"""The confidence below which nothing is derived."""
SHARE = {"murderers": 0.5, "victims": 0.6}
"""A name's score must be at least this share of the best to be derived beside it (and
beat "nobody" by one temperature step on its own). A murderer's evidence grows with the
victims it killed, so a second murderer may have half the first's; the victims of one
case are told of about as often."""
TEMPERATURE = 1.5
"""Score points per e-fold of odds: a name's confidence is its share of
exp(score / TEMPERATURE) among the candidates and "nobody"."""
NOBODY = 3.0
"""The score of "the texts name nobody": one plain statement (weight 4) alone beats it,
a passing mention (1) does not."""
_SHOWN = 5

__all__ = ["MARGIN", "Asked", "Finding", "Passage", "decide", "derive_truth", "pool"]


@dataclass
class Finding:
    """What the weighing decided for one fact."""

    fact: Fact
    names: list[str]
    confidence: float
    candidates: list[Candidate] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)
    """Every name weighed, with its score (the candidates are the best few)."""
    evidence: dict[str, list[Evidence]] = field(default_factory=dict)
    aliases: dict[str, list[str]] = field(default_factory=dict)
    told: dict[str, set[Kind]] = field(default_factory=dict)
    """The kinds of text that name each one (the truth prose, a character's...)."""

    @property
    def undecided(self) -> bool:
        """Evidence named someone, but not clearly enough to derive anyone."""
        return not self.names and bool(self.candidates)

    def derivation(self, source: str) -> Derivation:
        best = next((c for c in self.candidates if c.derived), None)
        quote = best.evidence[0] if best and best.evidence else None
        return Derivation(
            fact=self.fact, value=self.names, source=quote.source if quote else source,
            origin="text", confidence=round(self.confidence, 2),
            evidence=quote.text if quote else "",
            method=(quote.rule if quote else "") + (" (weighed with the other evidence)"
                                                    if quote else ""),
            candidates=self.candidates)

    def note(self) -> str:
        """The import note: what was derived, or why nothing was."""
        what = "murderer" if self.fact == "murderers" else "victim"
        if self.names:
            return (f"{what} {', '.join(self.names)} derived from the texts "
                    f"(confidence {self.confidence:.2f})")
        if not self.candidates:
            return f"the texts name no {what}: none derived"
        named = ", ".join(f"{c.name} ({c.score:g})" for c in self.candidates[:_SHOWN])
        return (f"the texts do not make the {what} clear (confidence {self.confidence:.2f} "
                f"< {MARGIN}): none derived; candidates by score: {named}; a truth.yaml "
                "beside the script (or --truth) can say who")


# --- weighing --------------------------------------------------------------------------

def _weigh(fact: Fact, found: Iterable[Found], margin: float,
           aliases: Iterable[tuple[str, str]] = ()) -> Finding:
    """Score every name (two names of one person as one), then decide."""
    found = list(found)
    one = _one_person(found, aliases)
    seen: set[tuple[str, str, str]] = set()
    groups: dict[str, dict[tuple[str, str], list[Found]]] = defaultdict(
        lambda: defaultdict(list))
    for item in found:
        person = one.get(item.name, item.name)
        key = (person, item.rule, item.sentence)
        if key in seen:
            continue
        seen.add(key)
        groups[person][(item.rule, item.source)].append(item)
    also: dict[str, list[str]] = defaultdict(list)
    for name, person in sorted(one.items()):
        if name != person:
            also[person].append(name)
    told = {n: {f.kind for fs in g.values() for f in fs} for n, g in groups.items()}
    return decide(fact, {n: _score(g) for n, g in groups.items()},
                  {n: _strongest(g) for n, g in groups.items()}, dict(also), told, margin)


def decide(fact: Fact, scores: dict[str, float], evidence: dict[str, list[Evidence]],
           aliases: dict[str, list[str]], told: dict[str, set[Kind]],
           margin: float = MARGIN) -> Finding:
    """The names the scores single out. The best is chosen, and beside it any name with
    at least ``SHARE`` of its score that beats "nobody" by a temperature step and, for a
    victim, is told of outside the truth prose (which tells the backstory's deaths too);
    their confidence is their share of exp(score / TEMPERATURE) among every name and
    "nobody" (``NOBODY``). Below ``margin``, no name is derived."""
    ranked = sorted((n for n in scores if scores[n] > 0), key=lambda n: (-scores[n], n))
    if not ranked:
        return Finding(fact, [], 0.0, scores=scores, evidence=evidence, aliases=aliases,
                       told=told)
    chosen = ranked[:1] + [n for n in ranked[1:] if scores[n] >= SHARE[fact] * scores[ranked[0]]
                           and scores[n] >= NOBODY + TEMPERATURE
                           and (fact == "murderers" or told.get(n, set()) - {"truth"})]
    odds = {n: math.exp(min(scores[n], 300.0) / TEMPERATURE) for n in ranked}
    total = math.exp(NOBODY / TEMPERATURE) + sum(odds.values())
    sure = sum(odds[n] for n in chosen) / total
    names = chosen if sure >= margin else []
    candidates = [Candidate(name=n, score=round(scores[n], 2), derived=n in names,
                            confidence=round(odds[n] / total, 2),
                            aliases=aliases.get(n, []), evidence=evidence.get(n, [])[:3])
                  for n in ranked[:_SHOWN]]
    return Finding(fact, names, sure, candidates, scores, evidence, aliases, told)


def pool(here: Finding, there: Finding, same: dict[str, str], where: str) -> Finding:
    """One finding from the evidence of two versions of a script (its English and Chinese
    texts): ``same`` maps a name of ``there`` to the same person's name here; the scores
    of one person add up, and the other version's sentences join the evidence."""
    scores = dict(here.scores)
    evidence = {n: list(e) for n, e in here.evidence.items()}
    told = {n: set(k) for n, k in here.told.items()}
    person = {a: n for n, names in here.aliases.items() for a in names}
    for name, score in there.scores.items():
        spellings = [name, *there.aliases.get(name, [])]
        mine = next((same[s] for s in spellings if s in same), None)
        if mine is None:
            continue
        mine = person.get(mine, mine)
        scores[mine] = scores.get(mine, 0.0) + score
        told.setdefault(mine, set()).update(there.told.get(name, set()))
        evidence.setdefault(mine, []).extend(
            e.model_copy(update={"source": f"{where}: {e.source}"})
            for e in there.evidence.get(name, []))
    for items in evidence.values():
        items.sort(key=lambda e: -e.weight)
    return decide(here.fact, scores, evidence, here.aliases, told)


def _one_person(found: list[Found], aliases: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Each name to the name its person goes by: names linked as aliases, or one that is
    the other with a title before it (``Mr Zhao Wanlei``), are one person, called by a
    name without a title, then the one its plainest sentence uses (``Xu Boqing:
    Deceased`` over ``killed Yao Mengren``), then the one used most."""
    uses: dict[str, int] = defaultdict(int)
    plainest: dict[str, float] = defaultdict(float)
    for item in found:
        uses[item.name] += 1
        plainest[item.name] = max(plainest[item.name], item.weight)
    parent = {name: name for name in uses}

    def root(name: str) -> str:
        while parent[name] != name:
            name = parent[name]
        return name

    def rank(name: str) -> tuple[bool, float, int, str]:
        return untitled(name) is not None, -plainest[name], -uses[name], name

    titled = [(name, untitled(name)) for name in uses]
    for a, b in [*aliases, *((n, u) for n, u in titled if u)]:
        if a in parent and b in parent and root(a) != root(b):
            first, second = sorted((root(a), root(b)), key=rank)
            parent[second] = first
    return {name: root(name) for name in uses}


def _score(by_rule: dict[tuple[str, str], list[Found]]) -> float:
    """Each pattern in each source: 1, 1/2, 1/3... of its sentences' weights, the
    strongest first; a denial (negative weight) counts whole."""
    total = 0.0
    for items in by_rule.values():
        weights = sorted((f.weight for f in items), reverse=True)
        total += sum(w if w < 0 else w / (i + 1) for i, w in enumerate(weights))
    return total


def _strongest(by_rule: dict[tuple[str, str], list[Found]]) -> list[Evidence]:
    items = sorted((f for fs in by_rule.values() for f in fs), key=lambda f: -f.weight)
    out, rules = [], set()
    for item in items:
        if item.rule in rules or item.weight <= 0:
            continue
        rules.add(item.rule)
        out.append(Evidence(rule=item.rule, source=item.source, weight=round(item.weight, 2),
                            text=item.sentence if len(item.sentence) <= 400
                            else item.sentence[:399] + "…"))
    return out


def derive_truth(passages: list[Passage], questions: list[Asked],
                 characters: list[Character], language: str, *, persons: Iterable[str] = (),
                 margin: float = MARGIN) -> tuple[Finding, Finding]:
    """The murderers and the victims the texts support, each a ``Finding`` with its
    confidence and candidates; ``persons`` are names the source lists as people (a
    relationship list's). Victims are weighed first: a kill whose object is the victim
    says more about its subject than any other kill."""
    people = People(characters)
    corpus = Corpus([p.text for p in passages]
                    + [f"{q.question} {' '.join(q.answers)}" for q in questions],
                    known=[*persons, *people.by_spelling])
    asked = [Passage(f"{q.question} {' '.join(q.answers)}", q.source, "question",
                     weight=q.weight) for q in questions]
    read = list(sentences([*passages, *asked]))
    aliases = find_aliases(read, corpus, language)
    for a, b in aliases:
        for name, other in ((a, b), (b, a)):
            if (owner := people.character(name)) and not people.character(other):
                people.add(other, owner)
    victims = _weigh("victims", [
        *victim_evidence(read, corpus, people, language),
        *answers(questions, "victims", language, corpus, people)], margin, aliases)
    dead = [*victims.names, *(a for c in victims.candidates if c.derived for a in c.aliases)]
    murderers = _weigh("murderers", [
        *murderer_evidence(read, people, dead, language),
        *answers(questions, "murderers", language, corpus, people)], margin)
    return murderers, victims
