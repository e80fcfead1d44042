"""Internal.

Vote-based metrics: murderer identification accuracy and the culprit's reciprocal rank.

Both work on plain ``(voter, target)`` pairs so that they serve games of ours (``VoteCast``
events), re-votes from memory, and votes imported from other systems alike.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel

Ties = Literal["optimistic", "pessimistic", "order"]


class Vote(BaseModel):
    voter: str
    target: str | None = None
    """``None`` is an abstention."""


class Identification(BaseModel):
    """Votes on a murderer over votes counted (ThinkThrice section 6.4)."""

    on_murderer: int
    counted: int

    @property
    def accuracy(self) -> float:
        return self.on_murderer / self.counted if self.counted else 0.0


def identification(votes: Iterable[Vote], murderers: Collection[str],
                   murderers_vote: bool = True, abstentions: bool = False) -> Identification:
    """Count the votes that name a murderer.

    ThinkThrice divides by "the total number of votes cast by all players": by default the
    murderers' own votes are counted and abstentions are not. ``murderers_vote=False``
    drops the murderers' ballots; ``abstentions=True`` counts abstentions as misses.
    """
    counted = on_murderer = 0
    for vote in votes:
        if not murderers_vote and vote.voter in murderers:
            continue
        if vote.target is None and not abstentions:
            continue
        counted += 1
        on_murderer += vote.target in murderers
    return Identification(on_murderer=on_murderer, counted=counted)


def votes_received(votes: Iterable[Vote]) -> dict[str, int]:
    """Votes received per target, abstentions left out."""
    return dict(Counter(v.target for v in votes if v.target is not None))


def culprit_rank(votes_received: Mapping[str, float], culprits: Collection[str],
                 candidates: Sequence[str] = (), ties: Ties = "optimistic") -> int | None:
    """Rank (1 = most votes) of the best-placed culprit among ``candidates``.

    Candidates default to those who received votes; a culprit with no vote among explicit
    candidates ranks with the others on zero. A tie shares the best rank ("optimistic",
    1-1-3 competition ranking) or the worst ("pessimistic"), or is broken by the order of
    the candidates ("order": a stable sort, as the MIRAGE release ranks). ``None``: no
    culprit is a candidate (nobody voted for one and no candidate list says they could
    have been).
    """
    pool = list(dict.fromkeys([*candidates, *votes_received]))
    placed = [c for c in pool if c in culprits]
    if not placed:
        return None
    if ties == "order":
        ranked = sorted(pool, key=lambda c: votes_received.get(c, 0), reverse=True)
        return next(i for i, c in enumerate(ranked, 1) if c in culprits)
    best = max(votes_received.get(c, 0) for c in placed)
    above = sum(votes_received.get(c, 0) > best for c in pool)
    level = sum(votes_received.get(c, 0) == best for c in pool)
    return above + 1 if ties == "optimistic" else above + level


def mean_reciprocal_rank(ranks: Iterable[int | None]) -> float:
    """Mean of ``1 / rank`` over games; a game whose culprit is unranked contributes 0."""
    values = [1.0 / r if r else 0.0 for r in ranks]
    if not values:
        raise ValueError("no games to average")
    return sum(values) / len(values)
