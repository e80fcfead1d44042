"""Internal.

Inferential questions: can an agent reason from what it gathered to why (ThinkThrice
section 6.5, figure 4; the rubric of table 10; the prompts of appendix H, table 19).

Every seat answers every multiple-choice question of the ``inferential`` set after the game
with the ``dialogue`` answerer (its own script and the dialogue it observed, retrieved for
the question; memoryless seats read their script only), as an observer, giving its
reasoning and its choice. ``answerer: fsa`` puts the omniscient reader in their place
(the paper's FSA row; ``ssa`` the script alone).

- **Overall accuracy**: answers whose option letters are right (``exact`` rule by default:
  ThinkThrice requires the one correct option) over all answers.
- **Informed accuracy**: answers that are right *and* whose reasoning a judge rates at
  least ``threshold`` (4, "Good") on the 1–5 rubric of table 10 against the question's
  reference rationale, over the answers to questions that have one. Only right answers
  are rated (a wrong one cannot count). A rating that fails leaves its answer out of
  this denominator and is reported. Without a judge, informed accuracy is not computed.

The paper asked for the rationale in a second call once the answer was given; here one
structured call returns ``{"reason", "answer"}`` with the reasoning first (the PLAYER*
evaluation format), which costs half the calls and keeps the reasoning the answer's own.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from jubensha.agents.answerers import Access, AnswerContext, AnswererConfig
from jubensha.eval.judge import ask, judge_of, judge_request
from jubensha.eval.postgame import (
    MEMORYLESS,
    answer_context,
    answering_model,
    choice_answer,
    gather_limited,
    seat_access,
)
from jubensha.eval.registry import MetricContext, metric
from jubensha.eval.report import MetricResult, ResultTable, number
from jubensha.eval.wellplay import Rule, is_correct
from jubensha.llm.base import Model
from jubensha.llm.calls import declare
from jubensha.runlog.folder import RunLog
from jubensha.scripts.model import ChoiceQuestion, Script

PREFIX = "inferential."
FSA_SEAT = "FSA"
"""How the omniscient reader is named in results."""


RATIONALE = declare("inferential.rationale", "truth")  # the reference rationale


class InferentialOptions(BaseModel):
    """``--options`` of the ``inferential`` metric (see docs/evaluation.md)."""

    model_config = ConfigDict(extra="forbid")

    answerer: Access = Field("dialogue", description="dialogue: every seat after the game; "
                                                     "fsa / ssa: the references.")
    set: str = "inferential"
    grading: Rule = Field("exact", description="ThinkThrice: the one correct option.")
    threshold: int = Field(4, ge=1, le=5, description="Informed: rationale rated at least "
                                                      "this (table 10: 4 is Good).")
    samples: int = Field(1, ge=1, description="Answers per question (the paper: one).")
    memoryless: list[str] = Field(default_factory=lambda: list(MEMORYLESS))
    concurrency: int = Field(4, ge=1)
    attempts: int = Field(3, ge=1)
    answering: AnswererConfig = Field(default_factory=lambda: AnswererConfig(role_play=False))


class RationaleScore(BaseModel):
    score: int = Field(ge=1, le=5, description="1 very poor ... 5 excellent (table 10).")


class InferentialAnswer(BaseModel):
    seat: str
    question: str
    sample: int
    answer: str
    reason: str
    correct: bool
    score: int | None = None
    """The judge's 1-5 rating of the reasoning (right answers with a reference only)."""
    informed: bool = False
    error: str | None = None
    """Why no valid answer came (the answer is then empty, and wrong)."""
    rating_error: str | None = None
    """Why the judge gave no rating (the answer is then left out of informed accuracy)."""


class SeatInference(BaseModel):
    answers: int = 0
    correct: int = 0
    informed: int = 0


class InferentialResult(MetricResult):
    metric: str = "inferential"
    answerer: Access
    grading: Rule
    judge: str | None
    threshold: int
    questions: int
    overall: float | None
    """Right answers over answers."""
    informed: float | None
    """Right and well-reasoned answers over the answers that could be rated."""
    rated_pool: int = 0
    """Answers in the informed accuracy's denominator."""
    seats: dict[str, SeatInference] = Field(default_factory=dict)
    answer_failures: int = 0
    judge_failures: int = 0
    answers: list[InferentialAnswer] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    def tables(self) -> list[ResultTable]:
        summary = ResultTable(
            title="Inferential questions after the game (ThinkThrice figure 4)",
            columns=["overall accuracy", "informed accuracy", "questions", "answers",
                     "failures", "answerer", "judge"],
            rows=[[number(self.overall), number(self.informed), str(self.questions),
                   str(len(self.answers)), str(self.answer_failures + self.judge_failures),
                   self.answerer, self.judge or "–"]],
            notes=[(f"informed: right answer and reasoning rated >= {self.threshold} of 5 "
                   "against the reference rationale"), *self.notes])
        seats = ResultTable(
            title="Inferential questions per seat",
            columns=["seat", "answers", "right", "informed"],
            rows=[[n, str(s.answers), str(s.correct), str(s.informed)]
                  for n, s in self.seats.items()])
        return [summary, seats]


def inferential_questions(script: Script, set_name: str) -> list[ChoiceQuestion]:
    return [q for q in script.questions.choice if q.set == set_name]


async def rate(judge: Model, question: ChoiceQuestion, reason: str, seat: str, lang: str,
               attempts: int) -> tuple[int | None, str | None]:
    """The judge's 1-5 rating of ``reason`` against the reference rationale."""
    right = ", ".join(f"{letter.upper()}. {question.options.get(letter, '')}"
                      for letter in question.answer)
    request = judge_request("inferential_judge", lang, purpose=RATIONALE,
                            seat=seat, max_tokens=20, question=question.question,
                            options=[f"{k.upper()}. {v}" for k, v in question.options.items()],
                            answer=right, reference=question.rationale, reply=reason)
    judged = await ask(judge, request, RationaleScore, item=question.id, attempts=attempts,
                       lang=lang)
    if judged.value is None:
        return None, judged.failure.error if judged.failure else "no rating"
    return judged.value.score, None


async def answer_one(seat: str, reads: AnswerContext, model: Model, judge: Model | None,
                     question: ChoiceQuestion, sample: int, options: InferentialOptions
                     ) -> InferentialAnswer:
    reply = await choice_answer(question, reads, model, sample)
    correct = reply.error is None and is_correct(reply.answer, question.answer,
                                                 question.multiple, options.grading,
                                                 letters=question.options.keys())
    found = InferentialAnswer(seat=seat, question=question.id, sample=sample,
                              answer=reply.answer, reason=reply.reason, correct=correct,
                              error=reply.error)
    if correct and judge is not None and question.rationale.strip():
        score, problem = await rate(judge, question, reply.reason, seat, reads.language,
                                    options.attempts)
        found.score, found.rating_error = score, problem
        found.informed = score is not None and score >= options.threshold
    return found


def readers(context: MetricContext, options: InferentialOptions
            ) -> dict[str, tuple[AnswerContext, Model]]:
    """Who answers, with what it reads and the model it answers with."""
    config = options.answering
    if options.answerer == "fsa":
        first = context.script.names[0]
        return {FSA_SEAT: (answer_context(context, None, "fsa", config),
                           answering_model(context, first, PREFIX))}
    found = {}
    for seat in context.script.names:
        access = ("ssa" if options.answerer == "ssa" else
                  seat_access(context, seat, options.memoryless))
        found[seat] = (answer_context(context, seat, access, config),
                       answering_model(context, seat, PREFIX))
    return found


async def inferential(context: MetricContext, options: InferentialOptions) -> InferentialResult:
    questions = inferential_questions(context.script, options.set)
    judge = judge_of(context, "inferential") if context.judge is not None else None
    jobs = [answer_one(seat, reads, model, judge, question, sample, options)
            for seat, (reads, model) in readers(context, options).items()
            for question in questions for sample in range(options.samples)]
    answers = await gather_limited(jobs, options.concurrency)
    seats: dict[str, SeatInference] = {}
    for a in answers:
        seat = seats.setdefault(a.seat, SeatInference())
        seat.answers += 1
        seat.correct += a.correct
        seat.informed += a.informed
    with_reference = {q.id for q in questions if q.rationale.strip()}
    pool = [a for a in answers if a.question in with_reference
            and a.rating_error is None] if judge is not None else []
    notes = [] if questions else [f"the script has no {options.set!r} questions"]
    if judge is None and questions:
        notes.append("informed accuracy needs a judge (--judge MODEL)")
    return InferentialResult(
        run=str(context.run.path), answerer=options.answerer, grading=options.grading,
        judge=judge.name if judge else None, threshold=options.threshold,
        questions=len(questions),
        overall=sum(a.correct for a in answers) / len(answers) if answers else None,
        informed=sum(a.informed for a in pool) / len(pool) if pool else None,
        rated_pool=len(pool), seats=seats,
        answer_failures=sum(a.error is not None for a in answers),
        judge_failures=sum(a.rating_error is not None for a in answers), answers=answers,
        notes=notes)


def inferential_applies(script: Script, run: RunLog) -> str | None:
    return None if inferential_questions(script, "inferential") else \
        "the script has no inferential questions"


@metric("inferential", "Every seat answers the inferential multiple-choice questions after "
        "the game with its reasoning; overall accuracy, and informed accuracy (right and "
        "reasoning rated >= 4 of 5 by a judge)", "ThinkThrice, section 6.5 (figure 4), "
        "table 10, appendix H", optional=("judge",), applies=inferential_applies,
        options=InferentialOptions,
        paper="paper:thinkthrice",
        paper_judge="ThinkThrice appendix B: GPT-4 judged the inferential answers")
async def inferential_metric(context: MetricContext) -> InferentialResult:
    options = InferentialOptions.model_validate(context.options.get("inferential", {}))
    return await inferential(context, options)
