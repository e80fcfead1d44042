"""Counting votes and deciding who won, under rules that the procedure configures.

The papers differ: ThinkThrice eliminates the seat with the most votes (self-votes allowed);
PLAYER* eliminates any seat with at least 50% of the ballots and assumes a murderer never
votes for themself, and asks for one vote per victim when a script has several. Each of these
is a field of ``VotingRules`` so a procedure can state which game it plays.

A victim the truth says was killed offstage (by nobody at the table) is voted on like every
other victim the players know of: leaving it out would tell every seat that nobody present
killed it. Whether ballots offer ``NOBODY`` is a rule of the game, stated before it starts
(``VotingRules.declared``) and the same for every victim, so its presence says nothing
about which victim; it is right exactly for the offstage victims. Nothing that shapes a
ballot reads the truth during play: who may not vote for themself is decided by the
seats' own sheets (their ``side``), which each seat knows of itself.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from jubensha.engine.events import VictimOutcome
from jubensha.scripts.model import Script

Ballots = Mapping[str, str | None]
"""Voter name to the seat they voted for; ``None`` is an abstention."""

Winner = Literal["civilians", "murderers", "none"]

NOBODY = "nobody here"
"""The ballot answer "nobody at this table killed this victim" (a candidate like a seat)."""


class VotingRules(BaseModel):
    """How ballots become eliminations, and eliminations a winner."""

    model_config = ConfigDict(extra="forbid")

    method: Literal["plurality", "threshold"] = Field(
        "plurality",
        description="plurality: the most votes; threshold: at least `threshold` of all "
        "ballots, abstentions included (PLAYER*: 0.5).",
    )
    threshold: float = Field(0.5, gt=0, le=1)
    ties: Literal["none", "all", "random", "revote"] = Field(
        "none",
        description="A tie for the lead eliminates no one, all tied seats, one at random "
        "(seeded), or triggers one re-vote among the tied (still tied: no one).",
    )
    self_vote: Literal["allowed", "not_murderers", "nobody"] = Field(
        "allowed",
        description="Who may vote for themself: everyone, everyone but the murderers "
        "(PLAYER*'s assumption), or nobody.",
    )
    per_victim: Literal["auto", "always", "never"] = Field(
        "auto", description="One vote per victim: auto does so when there are several victims."
    )
    civilians_win: Literal["all_victims", "majority_of_victims", "all_murderers"] = Field(
        "all_victims",
        description="all_victims: every victim's vote eliminates one of its killers; "
        "majority_of_victims: more than half do; all_murderers: every murderer is "
        "eliminated by some vote.",
    )
    nobody: Literal["auto", "always", "never"] = Field(
        "auto",
        description=f"Offer {NOBODY!r} on every victim's ballot: auto is declared before "
        "the game (``declared``), always in scripts whose truth records an offstage death.",
    )

    def declared(self, script: Script) -> VotingRules:
        """The rules a game of ``script`` is played by, each one stated: ``nobody: auto``
        becomes ``always`` where the truth records an offstage death, else ``never``.
        Decided once, before the game, so the table never reads the truth to shape a
        ballot; the one thing ``auto`` tells the players (that some death may be nobody's
        at the table) a study that wants ballots to say nothing avoids with always/never."""
        if self.nobody != "auto":
            return self
        offstage = script.truth is not None and bool(script.truth.killed_offstage)
        return self.model_copy(update={"nobody": "always" if offstage else "never"})


@dataclass
class Count:
    """The result of counting one vote: who is out, or whom a re-vote is among."""

    tally: dict[str, int]
    eliminated: list[str] = field(default_factory=list)
    revote_among: list[str] = field(default_factory=list)


def tally(ballots: Ballots) -> dict[str, int]:
    """Votes per seat, most votes first, ties by name (abstentions are not counted)."""
    counts = Counter(target for target in ballots.values() if target is not None)
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def count_votes(ballots: Ballots, rules: VotingRules, rng: random.Random,
                *, revote_allowed: bool = True) -> Count:
    """Apply the method and the tie rule to one set of ballots."""
    counts = tally(ballots)
    qualified = counts
    if rules.method == "threshold":
        need = rules.threshold * len(ballots)
        qualified = {seat: n for seat, n in counts.items() if n >= need}
    if not qualified:
        return Count(counts)
    top = max(qualified.values())
    leaders = [seat for seat, n in qualified.items() if n == top]
    if len(leaders) == 1:
        return Count(counts, eliminated=leaders)
    if rules.ties == "all":
        return Count(counts, eliminated=leaders)
    if rules.ties == "random":
        return Count(counts, eliminated=[rng.choice(sorted(leaders))])
    if rules.ties == "revote" and revote_allowed:
        return Count(counts, revote_among=leaders)
    return Count(counts)


def candidates_for(voter: str, seats: Sequence[str], murderers: Sequence[str],
                   rules: VotingRules, among: Sequence[str] | None = None) -> list[str]:
    """The seats ``voter`` may vote for (``among`` narrows them for a re-vote)."""
    pool = list(among) if among is not None else list(seats)
    if rules.self_vote == "nobody" or (rules.self_vote == "not_murderers"
                                       and voter in murderers):
        pool = [seat for seat in pool if seat != voter]
    return pool


def offers_nobody(rules: VotingRules) -> bool:
    """Whether every victim's ballot offers ``NOBODY`` under ``rules``, which must be
    declared (``VotingRules.declared``): an undeclared ``auto`` is a bug of the caller."""
    if rules.nobody == "auto":
        raise ValueError("voting rules with nobody: auto must be declared for the script "
                         "(VotingRules.declared) before ballots are shaped")
    return rules.nobody == "always"


def victims_to_vote(script: Script, rules: VotingRules) -> list[str | None]:
    """One vote per victim the players know of, or a single vote (``None``) for "the
    murderer". Offstage victims are voted on too (see the module docstring); a ballot that
    offers ``NOBODY`` is always about one named victim."""
    names = [victim.name for victim in script.victims]
    several = rules.per_victim == "always" or (
        rules.per_victim == "auto" and (len(names) > 1 or offers_nobody(rules)))
    return list(names) if several and names else [None]


def ballot_candidates(voter: str, seats: Sequence[str], script: Script, rules: VotingRules,
                      victim: str | None, among: Sequence[str] | None = None) -> list[str]:
    """What ``voter`` may answer on ``victim``'s ballot: the seats it may vote for, and
    ``NOBODY`` where the declared rules offer it (in a re-vote only when it tied for the
    lead). A murderer is a seat whose own sheet says so, never the truth's list."""
    murderers = [c.name for c in script.characters if c.side == "murderer" and c.name in seats]
    pool = candidates_for(voter, seats, murderers, rules,
                          None if among is None else [c for c in among if c != NOBODY])
    nobody = victim is not None and offers_nobody(rules)
    if nobody and (among is None or NOBODY in among):
        pool.append(NOBODY)
    return pool


def killers_of(script: Script, victim: str | None) -> list[str]:
    """Who killed ``victim``: ``[NOBODY]`` when the truth says offstage, else the truth's
    kill, else characters' ``killed``, else all murderers."""
    if victim is None:
        return script.murderers
    if script.truth is not None:
        if victim in script.truth.killed_offstage:
            return [NOBODY]
        for kill in script.truth.kills:
            if kill.victim == victim:
                return list(kill.killers)
    by_character = [c.name for c in script.characters if victim in c.killed]
    return by_character or script.murderers


def outcome(script: Script, victim: str | None, ballots: Ballots,
            eliminated: Sequence[str]) -> VictimOutcome:
    """One victim's result: caught when an eliminated seat is one of its killers (for an
    offstage victim: when ``NOBODY`` won the vote)."""
    killers = killers_of(script, victim)
    return VictimOutcome(victim=victim, tally=tally(ballots), eliminated=list(eliminated),
                         murderers=killers, caught=bool(set(eliminated) & set(killers)))


def records_solution(script: Script) -> bool:
    """Whether the script says who did it (a murderer, or deaths nobody at the table
    caused); without that (an imported Conan story) no vote can be scored."""
    offstage = script.truth.killed_offstage if script.truth is not None else []
    return bool(script.murderers or offstage)


def winner(outcomes: Sequence[VictimOutcome], murderers: Sequence[str],
           rules: VotingRules) -> Winner:
    """Which side won; ``none`` when nobody voted or the script names no murderer."""
    if not outcomes or not murderers:
        return "none"
    caught = [o.caught for o in outcomes]
    if rules.civilians_win == "all_victims":
        civilians = all(caught)
    elif rules.civilians_win == "majority_of_victims":
        civilians = 2 * sum(caught) > len(caught)
    else:
        eliminated = {seat for o in outcomes for seat in o.eliminated}
        civilians = set(murderers) <= eliminated
    return "civilians" if civilians else "murderers"
