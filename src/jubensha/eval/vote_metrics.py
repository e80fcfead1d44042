"""Internal.

Vote metrics of one game: murderer identification accuracy and the culprit's rank.

The ballots counted are each victim's last voting round (a re-vote replaces the first
round). A ballot for a victim is on target when it names one of that victim's killers
(``truth.kills``), else one of the script's murderers; on a victim killed offstage it is on
target when it answers "nobody here".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from jubensha.engine.events import Failure, VoteCast
from jubensha.engine.table import VoteRecord
from jubensha.engine.voting import (
    VotingRules,
    ballot_candidates,
    killers_of,
    records_solution,
)
from jubensha.eval.failure import note
from jubensha.eval.registry import MetricContext, metric
from jubensha.eval.report import MetricResult, ResultTable, number
from jubensha.eval.votes import Vote, culprit_rank, identification, votes_received
from jubensha.runlog.folder import RunLog
from jubensha.scripts.model import Script


def final_ballots(run: RunLog) -> dict[str | None, list[VoteCast]]:
    """Per victim (``None``: a single vote on the murderer), the ballots of its last round."""
    rounds: dict[str | None, dict[int, list[VoteCast]]] = defaultdict(lambda: defaultdict(list))
    for event in run.events:
        if isinstance(event, VoteCast):
            rounds[event.victim][event.round or 1].append(event)
    return {victim: by_round[max(by_round)] for victim, by_round in rounds.items()}


def fallback_voters(run: RunLog, ballots: Sequence[VoteCast]) -> set[str]:
    """The voters of one round whose ballot is the table's fallback: their vote failed
    (a ``Failure`` of purpose ``vote`` after the previous round's ballots, before these)."""
    if not ballots:
        return set()
    first = min(b.index for b in ballots)
    start = max((e.index for e in run.events if isinstance(e, VoteCast) and e.index < first),
                default=-1)
    return {e.seat for e in run.events if isinstance(e, Failure) and e.purpose == "vote"
            and start < e.index < first}


def noted_ballots(run: RunLog) -> dict[str | None, list[VoteCast]]:
    """``final_ballots``, each ballot noted for the metric's tally (``eval.failure``): a
    ballot that fell back was no answer."""
    found = final_ballots(run)
    for ballots in found.values():
        failed = len(fallback_voters(run, ballots) & {b.voter for b in ballots})
        note("ballot", failed=True, count=failed)
        note("ballot", failed=False, count=len(ballots) - failed)
    return found


def victim_label(script: Script, victim: str | None) -> str:
    """Whom a round of ballots was about: its victim, or for a single vote on the murderer
    the script's victims (``-`` when it names none)."""
    return victim or ", ".join(v.name for v in script.victims) or "-"


def culprits(script: Script, victim: str | None) -> set[str]:
    """Who killed ``victim`` by the truth (``NOBODY`` for an offstage death, so a "nobody
    here" ballot on it is on target); all murderers when the truth does not say."""
    return set(killers_of(script, victim))


class VictimVotes(MetricResult):
    metric: str = "identification"
    victims: dict[str, tuple[int, int]]
    """Victim (``victim_label``) -> (ballots on a culprit, ballots counted)."""

    @property
    def accuracy(self) -> float:
        counted = sum(c for _, c in self.victims.values())
        return sum(k for k, _ in self.victims.values()) / counted if counted else 0.0

    def tables(self) -> list[ResultTable]:
        rows = [[v, str(k), str(c), number(k / c if c else 0.0)]
                for v, (k, c) in self.victims.items()]
        rows.append(["all", str(sum(k for k, _ in self.victims.values())),
                     str(sum(c for _, c in self.victims.values())), number(self.accuracy)])
        return [ResultTable(title="Murderer identification (share of votes on the culprit)",
                            columns=["victim", "on culprit", "votes", "accuracy"], rows=rows)]


def has_solution(script: Script, run: RunLog) -> str | None:
    """A script that records no solution (an imported Conan story) has no culprit to score
    a vote, a suspicion or a win against."""
    return None if records_solution(script) else (
        "the script records no solution (no murderer): nothing to score against")


def has_votes(script: Script, run: RunLog) -> str | None:
    """A run with no ballot (stopped before its vote) has no identification to score: 0
    would read as 'everyone voted wrong'; nor has a script with no solution."""
    if (unsolved := has_solution(script, run)) is not None:
        return unsolved
    if any(isinstance(e, VoteCast) for e in run.events):
        return None
    return ("no vote was cast in this run" + ("" if run.finished else
                                               " (it stopped before the vote)"))


@metric("identification", "Share of the final ballots that name the culprit",
        "ThinkThrice, section 6.4", applies=has_votes)
async def identification_metric(context: MetricContext) -> VictimVotes:
    victims = {}
    for victim, ballots in noted_ballots(context.run).items():
        found = identification([Vote(voter=b.voter, target=b.target) for b in ballots],
                               culprits(context.script, victim))
        victims[victim_label(context.script, victim)] = (found.on_murderer, found.counted)
    return VictimVotes(run=str(context.run.path), victims=victims)


class CulpritRanks(MetricResult):
    metric: str = "culprit-rank"
    ranks: dict[str, int | None]
    """Victim (``victim_label``) -> rank of the best-placed culprit in the final tally
    (None: no vote on one)."""

    @property
    def reciprocal_rank(self) -> float:
        values = [1 / r if r else 0.0 for r in self.ranks.values()]
        return sum(values) / len(values) if values else 0.0

    def tables(self) -> list[ResultTable]:
        rows = [[v, "–" if r is None else str(r)] for v, r in self.ranks.items()]
        rows.append(["mean reciprocal rank", number(self.reciprocal_rank)])
        return [ResultTable(title="Rank of the true culprit in the vote", columns=["victim", "rank"],
                            rows=rows, notes=["ties share the best rank"])]


@metric("culprit-rank", "Rank of the true culprit in the final tally; its reciprocal is "
        "averaged over victims (and over games by the caller)",
        "MIRAGE public release, Victory index", applies=has_votes)
async def culprit_rank_metric(context: MetricContext) -> CulpritRanks:
    candidates = context.script.names
    ranks = {}
    for victim, ballots in noted_ballots(context.run).items():
        votes = votes_received([Vote(voter=b.voter, target=b.target) for b in ballots])
        guilty = culprits(context.script, victim)
        pool = [*candidates, *sorted(guilty - set(candidates))]
        ranks[victim_label(context.script, victim)] = culprit_rank(votes, guilty, pool)
    return CulpritRanks(run=str(context.run.path), ranks=ranks)


def against_chance(script: Script, rules: VotingRules, seats: Sequence[str],
                   votes: Sequence[VoteRecord]) -> tuple[int, int, float]:
    """The final ballots of a game on a culprit, the ballots, and how many of them a voter
    choosing uniformly among its first-round candidates would put on a culprit (its
    expectation): identification next to random voting on the same ballots."""
    final = {record.victim: record for record in votes}
    hits = cast = 0
    chance = 0.0
    for victim, record in final.items():
        guilty = culprits(script, victim)
        for voter, target in record.ballots.items():
            offered = ballot_candidates(voter, seats, script, rules.declared(script), victim)
            cast += 1
            hits += target in guilty
            chance += len(guilty & set(offered)) / len(offered) if offered else 0.0
    return hits, cast, chance
