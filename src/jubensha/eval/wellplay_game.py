"""Internal.

WellPlay after a game, and its lower and upper references (PLAYER* section 3,
appendices B and C.6.3).

After the game every seat answers its own character's question set (``set="wellplay"``,
``asked_of``) with the ``dialogue`` answerer: its own script and the dialogue it observed,
each retrieved for the question, reply ``{"reason", "answer"}``. Each question is answered
``samples`` times (sample indices 0..n-1, default 3), and sample ``i`` of every question
makes pass ``i``: a pass scores awarded over total points (objective 10, reasoning 5,
relations 2) and per-category accuracy; a script's cell is the mean ± sample std over its
passes, and several scripts (or games) pool their passes weighted by question counts
(categories) and total points (overall): ``eval.wellplay``.

The references answer the same questions without the game: ``ssa`` (each seat's own script
only, the paper's PP, the lower reference) and ``fsa`` (every character's script within
the per-character budget, OP, the upper one), on a run (``--options``: answerer) or on a
script with no game at all (``score_reference``: ``jubensha eval wellplay-reference``).

The PLAYER* voting win rate is read from the game's ballots under the paper's rule: every
player votes, a seat with at least 50% of the ballots is out, murderers never vote for
themselves, and the civilians win when the culprit of every victim is out.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from jubensha.agents.answerers import (
    Access,
    AnswerContext,
    AnswererConfig,
    ChoiceAnswer,
    build_context,
)
from jubensha.eval.postgame import (
    PurposePrefix,
    answer_context,
    answering_model,
    choice_answer,
    gather_limited,
)
from jubensha.eval.registry import MetricContext, metric
from jubensha.eval.report import MetricResult, ResultTable, number
from jubensha.eval.revote import game_ballots, player_rules, vote_winner
from jubensha.eval.stats import MeanStd
from jubensha.eval.wellplay import (
    CATEGORIES,
    GradedAnswer,
    Rule,
    ScriptScore,
    aggregate,
    grade,
    score_pass,
    score_script,
)
from jubensha.llm.base import Model
from jubensha.runlog.folder import RunLog
from jubensha.scripts.model import ChoiceQuestion, Script

PREFIX = "wellplay."


class WellPlayOptions(BaseModel):
    """``--options`` of the ``wellplay`` metric (see docs/evaluation.md)."""

    model_config = ConfigDict(extra="forbid")

    answerer: Access = Field("dialogue", description="dialogue: the seats after the game; "
                                                     "ssa / fsa: the references.")
    grading: Rule = Field("authors", description="Correctness rule (eval.wellplay).")
    set: str = Field("wellplay", description="The question set asked.")
    max_questions: int | None = Field(None, ge=1, description="Ask only each seat's first "
                                                              "N questions (smoke runs).")
    concurrency: int = Field(4, ge=1)
    answering: AnswererConfig = Field(default_factory=AnswererConfig)


class Answered(BaseModel):
    """One answer to one question in one pass, graded."""

    question: str
    tester: str
    sample: int
    answer: str
    correct: bool
    points: int
    error: str | None = None


class SeatScore(BaseModel):
    questions: int = 0
    """Answers counted (questions x passes)."""
    correct: int = 0
    awarded: int = 0
    total: int = 0

    @property
    def score(self) -> float:
        return self.awarded / self.total if self.total else 0.0


class WellPlayResult(MetricResult):
    metric: str = "wellplay"
    script: str
    answerer: Access
    grading: Rule
    samples: int
    score: ScriptScore | None
    """Passes and their mean ± sample std; None when the script asks no question."""
    seats: dict[str, SeatScore] = Field(default_factory=dict)
    failures: int = 0
    """Answers with no valid reply (empty: the authors' rule counts them right on single
    choice, as their code did)."""
    civilians_won: bool | None = None
    """The game's vote under PLAYER*'s rule; None when nobody voted (or no game)."""
    answers: list[Answered] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    def tables(self) -> list[ResultTable]:
        cells = self._cells()
        win = "–" if self.civilians_won is None else ("1" if self.civilians_won else "0")
        summary = ResultTable(
            title=f"WellPlay after the game ({self.answerer} answerer, {self.grading} grading, "
                  f"{self.samples} passes)",
            columns=["script", *CATEGORIES, "overall", "#QA", "failures", "win (PLAYER*)"],
            rows=[[self.script, *cells, str(self.questions), str(self.failures), win]],
            notes=[("mean±std over passes (sample std); win: the game's vote under PLAYER*'s "
                   "rule (1 civilians, 0 murderers)"), *self.notes])
        seats = ResultTable(
            title="WellPlay per seat (all passes)",
            columns=["seat", "answers", "correct", "points", "score"],
            rows=[[name, str(s.questions), str(s.correct), f"{s.awarded}/{s.total}",
                   number(s.score)] for name, s in self.seats.items()])
        return [summary, seats]

    def _cells(self) -> list[str]:
        if self.score is None:
            return ["–"] * (len(CATEGORIES) + 1)
        found: dict[str, MeanStd] = {**self.score.categories, "overall": self.score.overall}
        return [found[c].render() if c in found else "–" for c in (*CATEGORIES, "overall")]

    @property
    def questions(self) -> int:
        return self.score.passes[0].questions if self.score else 0

    @classmethod
    def across(cls, results: Sequence[MetricResult]) -> list[ResultTable]:
        summary = across([r for r in results if isinstance(r, WellPlayResult)])
        return [across_table(summary)] if summary else []


def questions_by_seat(script: Script, set_name: str, limit: int | None = None
                      ) -> dict[str, list[ChoiceQuestion]]:
    """Each character's questions of ``set_name`` (``asked_of`` resolved to main names)."""
    found: dict[str, list[ChoiceQuestion]] = defaultdict(list)
    for question in script.questions.choice:
        if question.set != set_name or question.asked_of is None:
            continue
        try:
            seat = script.character(question.asked_of).name
        except KeyError:
            continue
        if limit is None or len(found[seat]) < limit:
            found[seat].append(question)
    return {name: found[name] for name in script.names if found.get(name)}


async def answer_all(asked: dict[str, list[ChoiceQuestion]], contexts: dict[str, AnswerContext],
                     models: dict[str, Model], samples: int, rule: Rule, concurrency: int
                     ) -> list[Answered]:
    """Every seat's questions, ``samples`` times each, answered and graded."""
    async def one(seat: str, question: ChoiceQuestion, sample: int) -> Answered:
        reply: ChoiceAnswer = await choice_answer(question, contexts[seat], models[seat], sample)
        graded: GradedAnswer = grade(question, {"answer": reply.answer}, rule,
                                     sample=sample, tester=seat)
        # A rule's leniency (the authors' empty answer, right on single choice) applies
        # only to an answer that was given: one that failed is wrong under every rule.
        return Answered(question=question.id, tester=seat, sample=sample,
                        answer=reply.answer, correct=graded.correct and reply.error is None,
                        points=graded.points, error=reply.error)

    tasks = [one(seat, q, s) for s in range(samples) for seat, qs in asked.items() for q in qs]
    return await gather_limited(tasks, concurrency)


def summarise(script: Script, asked: dict[str, list[ChoiceQuestion]], answers: list[Answered],
              samples: int) -> tuple[ScriptScore | None, dict[str, SeatScore]]:
    """Pass scores (sample ``i`` of every question is pass ``i``) and per-seat totals."""
    if not answers:
        return None, {}
    by_id = {(seat, q.id): q for seat, qs in asked.items() for q in qs}
    passes = []
    for sample in range(samples):
        passes.append(score_pass(
            GradedAnswer(question=a.question, points=a.points, correct=a.correct,
                         category=by_id[(a.tester, a.question)].category, tester=a.tester,
                         sample=a.sample)
            for a in answers if a.sample == sample))
    seats = {name: SeatScore() for name in asked}
    for a in answers:
        seat = seats[a.tester]
        seat.questions += 1
        seat.correct += a.correct
        seat.total += a.points
        seat.awarded += a.points if a.correct else 0
    return score_script(script.id, passes), seats


def player_star_win(script: Script, run: RunLog, seed: int = 0) -> bool | None:
    """Whether the game's final ballots make the civilians win under PLAYER*'s rule."""
    ballots = game_ballots(run)
    if not ballots:
        return None
    return vote_winner(script, ballots, player_rules(), random.Random(seed)) == "civilians"


async def wellplay(context: MetricContext, options: WellPlayOptions) -> WellPlayResult:
    """The ``wellplay`` metric on one run."""
    script = context.script
    asked = questions_by_seat(script, options.set, options.max_questions)
    config = options.answering
    if options.answerer == "fsa":
        shared = answer_context(context, None, "fsa", config)
        contexts = {seat: shared for seat in asked}
    else:
        contexts = {seat: answer_context(context, seat, options.answerer, config)
                    for seat in asked}
    models = {seat: answering_model(context, seat, PREFIX) for seat in asked}
    answers = await answer_all(asked, contexts, models, context.samples, options.grading,
                               options.concurrency)
    score, seats = summarise(script, asked, answers, context.samples)
    notes = [] if asked else [f"the script has no {options.set!r} questions"]
    return WellPlayResult(
        run=str(context.run.path), script=script.id, answerer=options.answerer,
        grading=options.grading, samples=context.samples, score=score, seats=seats,
        failures=sum(a.error is not None for a in answers),
        civilians_won=player_star_win(script, context.run), answers=answers, notes=notes)


async def score_reference(script: Script, access: Access, model: Model, *, samples: int = 3,
                          options: WellPlayOptions | None = None) -> WellPlayResult:
    """The ``ssa`` or ``fsa`` reference on a script, with no game: each seat's questions,
    answered from its own script (``ssa``) or every script (``fsa``) by ``model``."""
    if access == "dialogue":
        raise ValueError("a reference with no game answers with ssa or fsa, not dialogue")
    options = options or WellPlayOptions()
    asked = questions_by_seat(script, options.set, options.max_questions)
    config = options.answering
    shared = build_context("fsa", script, config=config) if access == "fsa" else None
    contexts = {seat: shared or build_context("ssa", script, seat, config=config,
                                              whole_script=True)
                for seat in asked}
    tagged = PurposePrefix(model, PREFIX)
    answers = await answer_all(asked, contexts, dict.fromkeys(asked, tagged), samples,
                               options.grading, options.concurrency)
    score, seats = summarise(script, asked, answers, samples)
    notes = [] if asked else [f"the script has no {options.set!r} questions"]
    return WellPlayResult(script=script.id, answerer=access, grading=options.grading,
                          samples=samples, score=score, seats=seats,
                          failures=sum(a.error is not None for a in answers), answers=answers,
                          notes=notes)


class WellPlayAcross(BaseModel):
    """Several scripts (or games): weighted mean ± weighted std of pooled passes."""

    results: int
    categories: dict[str, MeanStd]
    win_rate: float | None


def across(results: Sequence[WellPlayResult]) -> WellPlayAcross | None:
    """Question counts weight the categories and total points the overall score
    (``eval.wellplay.aggregate``); the win rate is the share of games the civilians won."""
    scored = [r.score for r in results if r.score is not None]
    if not scored:
        return None
    wins = [r.civilians_won for r in results if r.civilians_won is not None]
    return WellPlayAcross(results=len(scored), categories=aggregate(scored),
                          win_rate=sum(wins) / len(wins) if wins else None)


def across_table(summary: WellPlayAcross) -> ResultTable:
    cells = [summary.categories[c].render() if c in summary.categories else "–"
             for c in (*CATEGORIES, "overall")]
    return ResultTable(
        title=f"WellPlay across {summary.results} scripts or games: weighted mean ± weighted "
              "std (pooled passes)",
        columns=[*CATEGORIES, "overall", "win rate (PLAYER*)"],
        rows=[[*cells, number(summary.win_rate)]],
        notes=["Weights: question counts (categories), total points (overall)."])


def wellplay_applies(script: Script, run: RunLog) -> str | None:
    return None if questions_by_seat(script, "wellplay") else "the script has no WellPlay questions"


@metric("wellplay", "Each seat answers its WellPlay questions after the game (or the ssa/fsa "
        "references); objective 10, reasoning 5, relations 2 points; the PLAYER* vote win",
        "PLAYER*, section 3, appendices B and C.6.3", applies=wellplay_applies,
        options=WellPlayOptions)
async def wellplay_metric(context: MetricContext) -> WellPlayResult:
    options = WellPlayOptions.model_validate(context.options.get("wellplay", {}))
    return await wellplay(context, options)
