"""Internal.

The MPIRD-LLMA / MIRAGE metrics: LLM-Score, ROUGE-L script reconstruction, the
probabilities of doubt and belief, and the public release's indices TII, CIC, ICI, SCI
and Victory.

Sources: the MPIRD-LLMA paper, section 2.3, figure 3 and prompt tables 20-21; its public
release (lime728/MIRAGE, ``ScriptEnvs/BaseEnv.py``): a judge call per seat and ability
(``llms_eval``), a reconstruction per seat and script part compared by ROUGE-L with that
part (``rouge_eval``), per character doubt and belief probabilities
``sum(score) / (2 * ratings)`` (``end_stage``), and its summary (``save_result``):
ICI = mean over seats of (reasoning + communication + observation + thinking) / 80,
SCI = mean over seats of (role-play / 20 + ROUGE-L) / 2, the trust index per character
from the two probabilities, CIC from the clues investigated, and the accused ranked by
votes x seats + doubt - trust for Victory. ``docs/evaluation.md`` lists every choice;
option ``reading: release`` gives the numbers of the release's code where it departs from
these (the last stage's ratings, ties in script order, its ROUGE-L over its six part texts).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

from jubensha.engine.events import ActStarted, Event, Failure, Investigated, Rated
from jubensha.eval.failure import note
from jubensha.eval.mirage_judged import LLMScore, Reconstruction, llm_scores, reconstructions
from jubensha.eval.mirage_reading import (
    MAX_ABILITY,
    MirageOptions,
    Reading,
    failure_notes,
    guilty_of,
    has_speech,
    mean,
    options_of,
    reading_notes,
    seats_of,
)
from jubensha.eval.registry import MetricContext, metric
from jubensha.eval.report import MetricResult, ResultTable, number
from jubensha.eval.vote_metrics import has_solution, noted_ballots, victim_label
from jubensha.eval.votes import Vote, culprit_rank, votes_received
from jubensha.runlog.folder import RunLog
from jubensha.scripts.model import Script

MIRAGE_JUDGE = "MPIRD-LLMA section 3: all evaluations were scored by GPT-4-turbo"


# -- doubt and belief ------------------------------------------------------------------------
class TrustCount(BaseModel):
    """Ratings of one seat's statements (received) or by one rater (given)."""

    ratings: int = 0
    trust: int = 0
    doubt: int = 0

    def add(self, rating: Rated) -> None:
        self.ratings += 1
        self.trust += rating.trust
        self.doubt += rating.doubt

    @property
    def p_doubt(self) -> float | None:
        """``sum(doubt) / (2 * ratings)``: the public release's doubt probability."""
        return self.doubt / (2 * self.ratings) if self.ratings else None

    @property
    def p_belief(self) -> float | None:
        return self.trust / (2 * self.ratings) if self.ratings else None

    @property
    def tii(self) -> float | None:
        """``P_belief / (P_belief + P_doubt)``; None without ratings or when both are 0."""
        if not self.ratings or self.trust + self.doubt == 0:
            return None
        return self.trust / (self.trust + self.doubt)

    @property
    def fii(self) -> float | None:
        """The release's per-candidate index, ``P_doubt / (P_doubt + P_belief)``; None
        where the release divides by zero."""
        if not self.ratings or self.trust + self.doubt == 0:
            return None
        return self.doubt / (self.trust + self.doubt)


class DoubtBelief(MetricResult):
    metric: str = "mirage-trust"
    received: dict[str, TrustCount]
    """Per seat, the ratings of its statements."""
    given: dict[str, TrustCount]
    """Per rater, the ratings it gave (which model trusts: arena tables)."""
    sides: dict[str, TrustCount]
    """``culprits`` and ``civilians``: the ratings their statements received, pooled."""
    murderers: list[str]
    reading: Reading = "ours"

    @property
    def tii(self) -> float | None:
        """Ours: the mean over the rated seats of their TII (the paper's trust index)."""
        return mean(count.tii for count in self.received.values())

    @property
    def fii(self) -> float | None:
        """The release's own value (``reading: release`` only): ``fii`` of ``save_result``,
        the mean over every candidate of ``P_doubt / (P_doubt + P_belief)``; None where a
        candidate was never rated (or only 0 and 0), on which the release's code stops
        dividing by zero."""
        if self.reading != "release":
            return None
        values = [count.fii for count in self.received.values()]
        return None if not values or None in values else mean(values)

    def tii_rows(self) -> list[list[str]]:
        """The game's index rows: ours; under the release reading also the release's."""
        rows = [["TII (ours: mean of the rated seats' trust)", "", "", "", number(self.tii)]]
        if self.reading == "release":
            rows.append(["fii (the release's value: mean of every candidate's doubt share)",
                         "", "", "", number(self.fii) if self.fii is not None else
                         "– (the release divides by zero: a candidate never rated)"])
        return rows

    def tables(self) -> list[ResultTable]:
        def row(name: str, count: TrustCount) -> list[str]:
            return [name, str(count.ratings), number(count.p_doubt), number(count.p_belief),
                    number(count.tii)]

        columns = ["", "ratings", "P(doubt)", "P(belief)", "TII"]
        return [
            ResultTable(title="Probabilities of doubt and belief (MPIRD-LLMA figure 3)",
                        columns=["side", *columns[1:]],
                        rows=[row(side, count) for side, count in self.sides.items()],
                        notes=[(f"culprits: {', '.join(self.murderers)}; P = sum of the "
                               "0-2 scores / (2 x ratings)"), *reading_notes(self.reading)]),
            ResultTable(title="Trust and doubt received per seat",
                        columns=["seat", *columns[1:]],
                        rows=[*(row(seat, c) for seat, c in self.received.items()),
                              *self.tii_rows()]),
            ResultTable(title="Trust and doubt given per rater", columns=["rater", *columns[1:]],
                        rows=[row(seat, c) for seat, c in self.given.items()]),
        ]


def doubt_belief(run: RunLog, script: Script, seats: Sequence[str],
                 options: MirageOptions | None = None) -> DoubtBelief:
    received = {seat: TrustCount() for seat in seats}
    given = {seat: TrustCount() for seat in seats}
    sides = {"culprits": TrustCount(), "civilians": TrustCount()}
    options = options or MirageOptions()
    murderers = guilty_of(script, None, options)
    note_ratings(run.events, options.reading)
    for event in counted_ratings(run.events, options.reading):
        received.setdefault(event.speaker, TrustCount()).add(event)
        given.setdefault(event.rater, TrustCount()).add(event)
        sides["culprits" if event.speaker in murderers else "civilians"].add(event)
    return DoubtBelief(run=str(run.path), received=received, given=given, sides=sides,
                       murderers=sorted(murderers), reading=options.reading)


def counted_ratings(events: Iterable[Event], reading: Reading) -> list[Rated]:
    """The ratings that the trust indices and the Victory ranking count: every one of the
    game (ours), or those of its last stage (release: each stage's ``init_stage`` zeroes
    the candidates' counts, so the earlier stages' ratings are lost)."""
    kept: list[Rated] = []
    act = 1
    for event in events:
        if isinstance(event, Rated):
            kept.append(event)
        elif reading == "release" and isinstance(event, ActStarted) and event.act > act:
            kept, act = [], event.act
    return kept


def note_ratings(events: Sequence[Event], reading: Reading) -> None:
    """Note the ratings the reading counts for the metric's tally (``eval.failure``): each
    rating given, and each that failed (the game leaves a failed rating out)."""
    counted = counted_ratings(events, reading)
    start = 0
    if reading == "release":  # not the failures of the stages whose ratings it drops
        start = max([e.index for e in events if isinstance(e, ActStarted)], default=0)
    failed = sum(isinstance(e, Failure) and e.purpose == "rate" and e.index >= start
                 for e in events)
    note("rating", failed=True, count=failed)
    note("rating", failed=False, count=len(counted))


def has_ratings(script: Script, run: RunLog) -> str | None:
    """Ratings to read, and culprits to tell from civilians."""
    if (unsolved := has_solution(script, run)) is not None:
        return unsolved
    if any(isinstance(e, Rated) for e in run.events):
        return None
    return "no trust/doubt ratings in the run (MIRAGE procedure only)"


@metric("mirage-trust", "Probabilities of doubt and belief for culprits and civilians, and "
        "the Trust Inclination Index, from the trust/doubt ratings",
        "MPIRD-LLMA section 2.3 and figure 3; MIRAGE public release (TII)",
        applies=has_ratings, options=MirageOptions, options_key="mirage")
async def doubt_belief_metric(context: MetricContext) -> DoubtBelief:
    return doubt_belief(context.run, context.script, seats_of(context), options_of(context))


# -- clue investigation ----------------------------------------------------------------------
class ClueInvestigation(MetricResult):
    metric: str = "mirage-cic"
    clues: int
    """Clues the Investigate action could find (those with a location)."""
    found: dict[str, list[str]]
    """Per seat, the ids of the clues its searches revealed."""
    searches: dict[str, int]
    """Per seat, its Investigate actions (the public release counts these)."""
    reading: Reading = "ours"

    @property
    def cic(self) -> float | None:
        found = {clue for ids in self.found.values() for clue in ids}
        return len(found) / self.clues if self.clues else None

    @property
    def clue_count(self) -> int | None:
        """The release's own CIC value (``reading: release`` only): ``clue_count`` of
        ``save_result``, the game's Investigate actions, a count where its README
        describes a ratio."""
        return sum(self.searches.values()) if self.reading == "release" else None

    def tables(self) -> list[ResultTable]:
        rows = [[seat, str(self.searches.get(seat, 0)), str(len(ids)),
                 number(len(ids) / self.clues if self.clues else None)]
                for seat, ids in self.found.items()]
        rows.append(["all", str(sum(self.searches.values())),
                     str(len({c for ids in self.found.values() for c in ids})),
                     number(self.cic)])
        release = ([(f"the release's value (clue_count): {self.clue_count}, the game's "
                    "Investigate actions, a count")] if self.clue_count is not None else [])
        return [ResultTable(title="Clue Investigation Capability (CIC)",
                            columns=["seat", "searches", "clues found", "CIC"], rows=rows,
                            notes=[(f"CIC (ours) = distinct clues found by searching / "
                                    f"{self.clues} clues with a location"), *release])]


def clue_investigation(run: RunLog, script: Script, seats: Sequence[str],
                       reading: Reading = "ours") -> ClueInvestigation:
    located = {clue.id for clue in script.clues if clue.location}
    found: dict[str, list[str]] = {seat: [] for seat in seats}
    searches: dict[str, int] = defaultdict(int)
    for event in run.events:
        if isinstance(event, Investigated):
            searches[event.seat] += 1
            found.setdefault(event.seat, []).extend(
                c for c in event.clue_ids if c in located and c not in found[event.seat])
    return ClueInvestigation(run=str(run.path), clues=len(located), found=found,
                             searches=dict(searches), reading=reading)


def has_places(script: Script, run: RunLog) -> str | None:
    return None if script.locations else "the script has no clue to investigate (no location)"


@metric("mirage-cic", "Clue Investigation Capability: clues found by investigating / all "
        "clues that can be investigated", "MIRAGE public release (CIC)", applies=has_places,
        options=MirageOptions, options_key="mirage")
async def clue_investigation_metric(context: MetricContext) -> ClueInvestigation:
    return clue_investigation(context.run, context.script, seats_of(context),
                              options_of(context).reading)


# -- the judged metrics ------------------------------------------------------------------------
@metric("mirage-llm-score", "A judge rates each seat's role-play, reasoning, communication "
        "and cooperation, observation and thinking (0-20 each; LLM-Score = their sum)",
        "MPIRD-LLMA section 2.3, table 20; MIRAGE public release (llms_eval)",
        needs=("judge",), applies=has_speech, options=MirageOptions, options_key="mirage",
        paper="paper:mirage", paper_judge=MIRAGE_JUDGE)
async def llm_score_metric(context: MetricContext) -> LLMScore:
    return await llm_scores(context)


@metric("mirage-rouge", "ROUGE-L F between each character's script and its reconstruction "
        "by a judge from the history and the seat's actions (extractive without a judge)",
        "MPIRD-LLMA section 2.3, table 21; MIRAGE public release (rouge_eval)",
        optional=("judge",), applies=has_speech, options=MirageOptions, options_key="mirage",
        paper="paper:mirage", paper_judge=MIRAGE_JUDGE)
async def reconstruction_metric(context: MetricContext) -> Reconstruction:
    return await reconstructions(context)


# -- the indices -----------------------------------------------------------------------------
class Victory(BaseModel):
    """Per victim, the combined score of every seat and the culprit's rank in it, read
    three ways (docs/evaluation.md): the paper's Victory (the culprit ranked first, beside
    the chance of a random guess), the release README's MRR, and the code's bare rank."""

    scores: dict[str, dict[str, float]]
    ranks: dict[str, int | None]
    chance: dict[str, float] = Field(default_factory=dict)
    """Per victim, the probability that a uniform random pick of the pool is a culprit."""

    @property
    def mrr(self) -> float | None:
        return mean(1 / r if r else 0.0 for r in self.ranks.values()) if self.ranks else None

    @property
    def rate(self) -> float | None:
        """The paper's Victory: the share of victims whose culprit ranks first."""
        return mean(1.0 if r == 1 else 0.0 for r in self.ranks.values()) if self.ranks else None

    @property
    def chance_rate(self) -> float | None:
        """The paper's random-guess baseline beside it (table 2, right of Victory)."""
        return mean(self.chance.values()) if self.chance else None


def victory(run: RunLog, script: Script, seats: Sequence[str], options: MirageOptions
            ) -> Victory:
    """Rank of the true culprit when every seat is scored ``votes x weight + doubt - trust``
    (the reference's final ranking over all characters) from each victim's final ballots."""
    weight = options.vote_weight if options.vote_weight is not None else float(len(seats))
    suspicion: dict[str, float] = defaultdict(float)
    for event in counted_ratings(run.events, options.reading):
        suspicion[event.speaker] += event.doubt - event.trust
    release = options.reading == "release"
    if release:  # the release ranks its candidates in script order
        seats = [*(n for n in script.names if n in seats), *(s for s in seats
                                                             if s not in script.names)]
    scores: dict[str, dict[str, float]] = {}
    ranks: dict[str, int | None] = {}
    chance: dict[str, float] = {}
    for victim, ballots in noted_ballots(run).items():
        votes = votes_received(Vote(voter=b.voter, target=b.target) for b in ballots)
        guilty = guilty_of(script, victim, options)  # {"nobody here"}: an offstage death
        pool = [*seats, *sorted(guilty - set(seats))]
        combined = {seat: weight * votes.get(seat, 0) + suspicion[seat] for seat in pool}
        key = victim_label(script, victim)
        scores[key] = combined
        ranks[key] = culprit_rank(combined, guilty, pool, "order" if release else options.ties)
        chance[key] = len(guilty & set(pool)) / len(pool) if pool else 0.0
    return Victory(scores=scores, ranks=ranks, chance=chance)


class MirageIndices(MetricResult):
    metric: str = "mirage"
    victory: Victory
    trust: DoubtBelief
    clues: ClueInvestigation
    scores: LLMScore | None = None
    reconstruction: Reconstruction | None = None
    notes: list[str] = Field(default_factory=list)
    reading: Reading = "ours"

    @property
    def ici(self) -> float | None:
        return mean(s.ici for s in self.scores.seats.values()) if self.scores else None

    @property
    def sci(self) -> float | None:
        """Mean over seats of (role-play / 20 + ROUGE-L) / 2 (seats with both)."""
        if self.scores is None or self.reconstruction is None:
            return None
        values = []
        for seat, scores in self.scores.seats.items():
            play = scores.scores.get("role_play")
            rebuilt = self.reconstruction.seats.get(seat)
            rouge = rebuilt.rouge if rebuilt else None
            if play is not None and rouge is not None:
                values.append((play / MAX_ABILITY + rouge) / 2)
        return mean(values)

    def tables(self) -> list[ResultTable]:
        def pct(value: float | None) -> str:
            return number(None if value is None else 100 * value, 2)

        won = self.victory
        release = self.reading == "release"
        return [ResultTable(
            title="MIRAGE indices (x100)",
            columns=["Victory (paper)", "random guess", "Victory (MRR)",
                     *(["TII (ours)", "fii (release)", "CIC (ours)", "clue count (release)"]
                       if release else ["TII", "CIC"]), "ICI", "SCI"],
            rows=[[pct(won.rate), pct(won.chance_rate), pct(won.mrr), pct(self.trust.tii),
                   *([pct(self.trust.fii)] if release else []), pct(self.clues.cic),
                   *([str(self.clues.clue_count)] if release else []),
                   pct(self.ici), pct(self.sci)]],
            notes=[*self.notes, ("Victory (paper): culprit ranked first; random guess: the "
                   "chance of picking a culprit at random; MRR: the release README's reading"),
                   *reading_notes(self.reading)])]


@metric("mirage", "The MIRAGE indices: Victory (MRR of the culprit), TII, CIC, ICI and SCI "
        "(ICI and SCI with a judge)", "MIRAGE public release (save_result, end_stage)",
        optional=("judge",), options=MirageOptions, options_key="mirage",
        paper="paper:mirage", paper_judge=MIRAGE_JUDGE)
async def mirage_metric(context: MetricContext) -> MirageIndices:
    options = options_of(context)
    seats = seats_of(context)
    notes = []
    scores = rebuilt = None
    if context.judge is not None:
        scores = await llm_scores(context, seats)
        rebuilt = await reconstructions(context, seats)
        notes += failure_notes(scores.failures + rebuilt.failures)
    else:
        notes.append("ICI and SCI need a judge (--judge MODEL)")
    trust = doubt_belief(context.run, context.script, seats, options)
    if trust.tii is None:
        notes.append("TII: no trust/doubt ratings in the run")
    clues = clue_investigation(context.run, context.script, seats, options.reading)
    if clues.cic is None:
        notes.append("CIC: the script has no clue to investigate")
    won = victory(context.run, context.script, seats, options)
    if (unsolved := has_solution(context.script, context.run)) is not None:
        won = won.model_copy(update={"ranks": {}})
        notes.append(f"Victory: {unsolved}")
    elif not won.ranks:
        notes.append("Victory: no vote in the run")
    return MirageIndices(run=str(context.run.path), victory=won, trust=trust, clues=clues,
                         scores=scores, reconstruction=rebuilt, notes=notes,
                         reading=options.reading)
