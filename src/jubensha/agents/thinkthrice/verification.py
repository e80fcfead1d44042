"""Internal.

Self-Verification (SV): score each answer's authenticity, regenerate until one passes.

Following section 4 and appendices G and H of the paper: an answer is decomposed into
third-person timeline claims (``sv.decompose``) and each claim is judged against the
seat's own timeline (``sv.verify``; a claim without a time counts as incorrect). An answer
passes when its accuracy, its number of correct claims and its length all reach the
threshold (``Threshold``: host questions 0.7 / 4 / 350, player questions 0.6 / 1 / 30).
Otherwise the answer is made again, up to N attempts, and the best-scoring one is kept:

    score = accuracy + correct claims + correct claims naming a time + length / 200

(appendix G's formula, read as a plain sum; "time-matched" claims are found with
``timeline.TIME_PATTERN``). A concealing seat (the murderer) is checked for consistency
instead of disclosure: its claims are judged against its timeline without the facts tied
to its secrets and against what it said before, and a claim that gives a secret away
counts as incorrect, so the attempt that keeps its secrets scores best.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from jubensha.agents.thinkthrice.calls import Claims, ThinkCaller, flags, flags_schema
from jubensha.agents.thinkthrice.config import Threshold
from jubensha.agents.thinkthrice.timeline import answer_length, has_time, tied_to_secret
from jubensha.llm import ModelError


class Claim(BaseModel):
    text: str
    correct: bool
    timed: bool = Field(description="Names a specific time (appendix G's time match).")
    leak: bool = Field(False, description="Gives away a secret of a concealing seat.")


class AttemptReport(BaseModel):
    """One answer as SV judged it."""

    answer: str
    claims: list[Claim]
    length: int
    threshold: Threshold
    length_per_point: float = 200

    @property
    def correct(self) -> int:
        return sum(claim.correct for claim in self.claims)

    @property
    def time_matched(self) -> int:
        return sum(claim.correct and claim.timed for claim in self.claims)

    @property
    def accuracy(self) -> float:
        return self.correct / len(self.claims) if self.claims else 0.0

    @property
    def score(self) -> float:
        return (self.accuracy + self.correct + self.time_matched
                + self.length / self.length_per_point)

    @property
    def passed(self) -> bool:
        return (self.accuracy >= self.threshold.accuracy and self.correct >= self.threshold.facts
                and self.length >= self.threshold.length)


class Verification(BaseModel):
    attempts: list[AttemptReport]

    @property
    def best(self) -> AttemptReport:
        """The first passing attempt, else the highest score (the earliest on a tie)."""
        passing = [a for a in self.attempts if a.passed]
        return passing[0] if passing else max(self.attempts, key=lambda a: a.score)


Recall = Callable[[str], Awaitable[list[str]]]


async def _nothing(_query: str) -> list[str]:
    return []


@dataclass
class Checker:
    """What SV checks answers against, for one seat and one question."""

    me: str
    players: list[str]
    victims: list[str]
    timeline: list[str]
    """Facts the claims are judged against."""
    threshold: Threshold
    consistency: bool = False
    """Judge consistency (a concealing seat), not agreement with the whole timeline."""
    said: Recall = _nothing
    """What the seat said before that bears on an answer (consistency checks only)."""
    secrets: list[str] = field(default_factory=list)
    """Claims tied to these count as incorrect."""
    names: list[str] = field(default_factory=list)
    conceal_overlap: int = 2
    length_unit: str = "words"
    length_per_point: float = 200
    max_claims: int = 20

    async def claims(self, caller: ThinkCaller, answer: str) -> list[str]:
        reply = await caller.structured("sv.decompose", caller.messages(
            "sv_decompose", me=self.me, players=self.players, victims=self.victims,
            statement=answer), Claims)
        return [c.strip() for c in reply.claims if c.strip()][:self.max_claims]

    async def judge(self, caller: ThinkCaller, claims: list[str], answer: str) -> list[bool]:
        if not claims:
            return []
        template = "sv_consistency" if self.consistency else "sv_verify"
        said = await self.said(answer) if self.consistency else []
        reply = await caller.structured("sv.verify", caller.messages(
            template, me=self.me, timeline=self.timeline, said=said, claims=claims),
            flags_schema("Verdicts", claims))
        return flags(reply, len(claims))

    async def check(self, caller: ThinkCaller, answer: str) -> AttemptReport:
        """Judge ``answer``; a failed judging step leaves it with no correct claims."""
        try:
            texts = await self.claims(caller, answer)
            verdicts = await self.judge(caller, texts, answer)
        except ModelError:
            texts, verdicts = [], []
        claims = []
        for text, verdict in zip(texts, verdicts, strict=True):
            leak = bool(self.secrets) and tied_to_secret(text, self.secrets, self.names,
                                                         self.conceal_overlap)
            claims.append(Claim(text=text, correct=verdict and not leak, timed=has_time(text),
                                leak=leak))
        return AttemptReport(answer=answer, claims=claims,
                             length=answer_length(answer, self.length_unit),
                             threshold=self.threshold, length_per_point=self.length_per_point)


async def self_verify(produce: Callable[[int], Awaitable[str]],
                      check: Callable[[str], Awaitable[AttemptReport]],
                      attempts: int) -> Verification:
    """Produce and check answers until one passes or ``attempts`` are made.

    ``produce(i)`` makes the i-th answer (0-based). An attempt whose answer fails (an
    error, an empty reply) is spent like any other; only when every attempt fails is the
    last error raised."""
    reports: list[AttemptReport] = []
    error: ModelError | None = None
    for number in range(attempts):
        try:
            answer = await produce(number)
        except ModelError as failure:
            error = failure
            continue
        report = await check(answer)
        reports.append(report)
        if report.passed:
            break
    if not reports:
        raise error or ModelError("self-verification made no attempt")
    return Verification(attempts=reports)
