"""The ending as a page shows it once the truth is revealed: per victim, everyone's ballot
(each marked right or wrong), who was eliminated and why, and who the murderer was; for a
person, their own vote and whether it was right.

Ballots stay in the run log only until the reveal (``VoteCast`` events have no audience),
so this is computed only from a game that has ended. Where the procedure weighed the vote
with suspicion (MIRAGE), the game's result holds each suspect's votes, suspicion and
combined score, and the page shows them as the reason for the elimination.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from jubensha.engine.events import Event, GameEnded, VoteCast
from jubensha.engine.narration import winner_key


class Ballot(BaseModel):
    voter: str
    target: str | None
    reason: str = ""
    right: bool | None = None
    """Whether the ballot named a murderer; None for an abstention or a murderer's own
    ballot, neither right nor wrong."""
    by_murderer: bool = False
    """Cast by a murderer: naming an innocent is their play, not a mistake."""


class Score(BaseModel):
    """A suspect's share of a weighed vote (MIRAGE): votes, doubt minus trust, the sum."""

    seat: str
    votes: int
    suspicion: float
    score: float


class Verdict(BaseModel):
    victim: str | None
    eliminated: list[str]
    murderers: list[str]
    caught: bool
    tally: dict[str, int]
    ballots: list[Ballot]
    mine: Ballot | None = None
    scores: list[Score] = []

    @property
    def tie(self) -> bool:
        """Several suspects shared the top and nobody was eliminated."""
        values = [s.score for s in self.scores] or list(self.tally.values())
        return not self.eliminated and len(values) > 1 and values.count(max(values)) > 1


class Ending(BaseModel):
    winner: str
    verdicts: list[Verdict]
    truth: str = ""

    @property
    def right(self) -> bool | None:
        """Whether every vote of the reader was right (None: they named nobody)."""
        mine = [verdict.mine for verdict in self.verdicts
                if verdict.mine is not None and verdict.mine.right is not None]
        return all(ballot.right for ballot in mine) if mine else None

    @property
    def winner_key(self) -> str:
        """Which sentence names the winner: one murderer wins alone ("murderer")."""
        return winner_key(self.winner, [m for v in self.verdicts for m in v.murderers])


def ending(events: Sequence[Event], me: str | None = None,
           extra: Mapping[str, Any] | None = None) -> Ending | None:
    """The ending of a game whose ``events`` include the reveal; None before it.
    ``extra`` is the game result's ``extra`` (a weighed vote's scores)."""
    ended = next((e for e in reversed(events) if isinstance(e, GameEnded)), None)
    if ended is None:
        return None
    ballots: dict[str | None, dict[str, VoteCast]] = {}
    for event in events:
        if isinstance(event, VoteCast):  # a re-vote's ballot replaces the first round's
            ballots.setdefault(event.victim, {})[event.voter] = event
    weighed = _weighed(extra or {})
    verdicts = []
    for outcome in ended.outcomes:
        cast = ballots.get(outcome.victim) or (ballots.get(None) if len(ended.outcomes) == 1
                                               else None) or {}
        marked = [_marked(vote, outcome.murderers) for vote in cast.values()]
        verdicts.append(Verdict(
            victim=outcome.victim, eliminated=outcome.eliminated, murderers=outcome.murderers,
            caught=outcome.caught, tally=outcome.tally, ballots=marked,
            mine=next((b for b in marked if b.voter == me), None),
            scores=weighed.get(outcome.victim, [])))
    return Ending(winner=ended.winner, verdicts=verdicts, truth=ended.truth)


def _marked(vote: VoteCast, murderers: Sequence[str]) -> Ballot:
    by_murderer = vote.voter in murderers
    judged = vote.target is not None and not by_murderer
    return Ballot(voter=vote.voter, target=vote.target, reason=vote.reason,
                  right=vote.target in murderers if judged else None, by_murderer=by_murderer)


def _weighed(extra: Mapping[str, Any]) -> dict[str | None, list[Score]]:
    """MIRAGE's verdicts (``extra['mirage']['verdicts']``) per victim, highest first."""
    found: dict[str | None, list[Score]] = {}
    mirage = extra.get("mirage")
    verdicts = mirage.get("verdicts") if isinstance(mirage, dict) else None
    for verdict in verdicts if isinstance(verdicts, list) else []:
        if not isinstance(verdict, dict) or not isinstance(verdict.get("scores"), dict):
            continue
        votes, suspicion = (_mapping(verdict.get(key)) for key in ("votes", "suspicion"))
        scores = [Score(seat=str(seat), votes=_int(votes.get(seat)),
                        suspicion=_number(suspicion.get(seat)), score=_number(score))
                  for seat, score in verdict["scores"].items()]
        found[verdict.get("victim")] = sorted(scores, key=lambda s: -s.score)
    return found


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value,
                                                                             bool) else 0.0
