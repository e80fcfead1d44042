"""Internal.

The WhodunitBench metrics: role-play naturalness (RP), key-point coverage of the
discussion (SPC), the final motive and method against the truth (CMD), and
multiple-choice accuracy split by the number of reasoning steps.

Source: the WhodunitBench supplementary material, section 4 (table 1: RP, SPC, CMD) and
figure 10 (their judge prompts: RP out of 10 on a dialogue, CMD out of 100 against the
correct answer, SPC as the numbers of the real key points a discussion conveys), figure 9
(the reasoning stage's "Modus operandi: ... Motive: ..." statement) and figures 5-6 (the
multi-step questions; ``ChoiceQuestion.steps``). RP needs a judge; SPC and CMD have a
lexical fallback; the multiple-choice questions are answered by the seats' own models
through ``agents/answerers.py``. ``docs/evaluation.md`` lists every choice.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from jubensha.agents.answerers import Access, build_context, seat_context
from jubensha.engine.events import Spoke
from jubensha.eval.failure import note
from jubensha.eval.judge import JudgeFailure, ask, clip, judge_of, judge_request
from jubensha.eval.mirage_reading import (
    failure_notes,
    has_speech,
    history_lines,
    mean,
    render_lines,
    seats_of,
    truth_text,
)
from jubensha.eval.postgame import answering_model, choice_answer, whole_scripts
from jubensha.eval.registry import MetricContext, metric
from jubensha.eval.report import MetricResult, ResultTable, number
from jubensha.eval.text import rouge_l
from jubensha.eval.wellplay import DEFAULT_LETTERS, Rule, is_correct
from jubensha.llm.base import GenerateConfig, Message, ModelError, Request
from jubensha.llm.calls import declare
from jubensha.prompts import render
from jubensha.runlog.folder import RunLog
from jubensha.scripts.model import ChoiceQuestion, Clue, Script

Method = Literal["auto", "judge", "lexical"]
PREFIX = "whodunit."
"""Purposes of the seats' post-game calls (``whodunit.answer.dialogue``...)."""


JUDGE_RP = declare("judge.whodunit.rp", "truth")
JUDGE_SPC = declare("judge.whodunit.spc", "truth")
JUDGE_CMD = declare("judge.whodunit.cmd", "truth")
REASONING = declare("answer.reasoning", "seat")  # the seat states method and motive
WHODUNIT_JUDGE = ("WhodunitBench supplementary, figure 10: an evaluator model scores RP, SPC "
                  "and CMD")


class WhodunitOptions(BaseModel):
    """``options["whodunit"]``: choices shared by the WhodunitBench metrics."""

    model_config = ConfigDict(extra="forbid")

    spc: Method = Field("auto", description="judge (figure 10), lexical, or auto: judge "
                                            "when one is given.")
    cmd: Method = "auto"
    threshold: float = Field(0.5, gt=0, le=1, description="Lexical SPC: a key point is "
                             "covered when one statement holds this share of its tokens "
                             "in order (ROUGE-L recall).")
    history_tokens: int = Field(6000, ge=200)
    ask_missing: bool = Field(True, description="CMD: ask a seat that made no reasoning "
                                                "statement for one after the game.")
    answer_tokens: int = Field(3000, ge=0, description="Own script and dialogue retrieved "
                                                       "for a post-game answer (each).")
    rule: Rule = Field("exact", description="Multiple-choice correctness (eval/wellplay).")
    stepped_only: bool = Field(True, description="Only questions with a number of "
                               "reasoning steps (all questions when none has one).")
    answerer: Access = "dialogue"
    attempts: int = Field(3, ge=1)


def options_of(context: MetricContext) -> WhodunitOptions:
    return WhodunitOptions.model_validate(context.options.get("whodunit", {}))


def chosen(method: Method, context: MetricContext) -> Literal["judge", "lexical"]:
    if method == "auto":
        return "judge" if context.judge is not None else "lexical"
    return method


def statements(run: RunLog, seat: str | None = None) -> list[Spoke]:
    """Public statements, of one seat or of all."""
    return [e for e in run.events if isinstance(e, Spoke) and e.audience == "public"
            and (seat is None or e.speaker == seat)]


class Scored(BaseModel):
    score: float
    reason: str = ""


# -- RP --------------------------------------------------------------------------------------
class ScoreOutOf10(BaseModel):
    reason: str
    score: int = Field(ge=0, le=10)


class RolePlay(MetricResult):
    metric: str = "whodunit-rp"
    seats: dict[str, Scored]
    failures: list[JudgeFailure] = Field(default_factory=list)

    @property
    def rp(self) -> float | None:
        return mean(s.score for s in self.seats.values())

    def tables(self) -> list[ResultTable]:
        rows = [[seat, number(s.score, 0)] for seat, s in self.seats.items()]
        rows.append(["mean", number(self.rp, 2)])
        return [ResultTable(title="Role-play naturalness RP (judge, 0-10)",
                            columns=["seat", "RP"], rows=rows,
                            notes=failure_notes(self.failures))]


@metric("whodunit-rp", "A judge rates how naturally each seat played its role (0-10)",
        "WhodunitBench supplementary, section 4, figure 10 (RP)", needs=("judge",),
        applies=has_speech, options=WhodunitOptions, options_key="whodunit",
        paper="paper:whodunit", paper_judge=WHODUNIT_JUDGE)
async def role_play_metric(context: MetricContext) -> RolePlay:
    options = options_of(context)
    judge = judge_of(context, "whodunit-rp")
    lang = context.script.language
    lines = history_lines(context.run.events)
    history = clip(render_lines(lines, lang), options.history_tokens)
    result = RolePlay(run=str(context.run.path), seats={})
    for seat in seats_of(context):
        own = [line for line in lines if line.actor == seat]
        if not own:
            continue
        request = judge_request("whodunit_rp", lang, purpose=JUDGE_RP, seat=seat,
                                player=seat, history=history, own=render_lines(own, lang))
        judged = await ask(judge, request, ScoreOutOf10, item="rp", attempts=options.attempts,
                           lang=lang)
        if judged.value is None:
            assert judged.failure is not None
            result.failures.append(judged.failure)
            continue
        result.seats[seat] = Scored(score=judged.value.score, reason=judged.value.reason)
    return result


# -- SPC -------------------------------------------------------------------------------------
def key_points(script: Script, seat: str | None) -> list[Clue]:
    """A seat's key points: the key clues it holds (WhodunitBench's per-role clue pool),
    else every clue it holds. ``None``: the table's, every key clue (else every clue)."""
    clues = [c for c in script.clues if (c.text or c.caption)
             and (seat is None or c.holder == seat)]
    return [c for c in clues if c.key] or clues


class Coverage(BaseModel):
    points: int
    covered: list[int]
    """1-based numbers of the key points the discussion conveyed."""
    explanation: str = ""

    @property
    def share(self) -> float:
        return len(self.covered) / self.points if self.points else 0.0


class KeyPoints(MetricResult):
    metric: str = "whodunit-spc"
    method: Literal["judge", "lexical"]
    seats: dict[str, Coverage]
    table: Coverage | None = None
    """Every key point of the script against the whole discussion."""
    failures: list[JudgeFailure] = Field(default_factory=list)

    @property
    def spc(self) -> float | None:
        return mean(c.share for c in self.seats.values())

    def tables(self) -> list[ResultTable]:
        rows = [[seat, str(c.points), str(len(c.covered)), number(c.share)]
                for seat, c in self.seats.items()]
        rows.append(["mean of seats", "", "", number(self.spc)])
        if self.table is not None:
            rows.append(["whole discussion, all key points", str(self.table.points),
                         str(len(self.table.covered)), number(self.table.share)])
        how = ("a judge matched the key points with the statements" if self.method == "judge"
               else "lexical: a point is covered when one statement holds enough of it in "
                    "order (ROUGE-L recall)")
        return [ResultTable(title="Key-point coverage of the discussion (SPC)",
                            columns=["seat", "key points", "covered", "SPC"], rows=rows,
                            notes=[how, *failure_notes(self.failures)])]


@lru_cache(maxsize=64)
def coverage_schema(points: int) -> type[BaseModel]:
    numbers: list[int] = Field(default_factory=list, json_schema_extra={"uniqueItems": True},
                    description="Numbers of the key points the discussion conveys.")
    number_type = Annotated[int, Field(ge=1, le=points)]
    return create_model("Coverage", explanation=(str, ...),
                        covered=(list[number_type], numbers))


def lexical_coverage(points: Sequence[str], texts: Sequence[str], threshold: float
                     ) -> Coverage:
    covered = [i for i, point in enumerate(points, 1)
               if any(rouge_l(text, point).recall >= threshold for text in texts)]
    return Coverage(points=len(points), covered=covered)


async def judged_coverage(context: MetricContext, points: Sequence[str], texts: Sequence[str],
                          seat: str | None, failures: list[JudgeFailure]) -> Coverage | None:
    options = options_of(context)
    lang = context.script.language
    request = judge_request("whodunit_spc", lang, purpose=JUDGE_SPC, seat=seat,
                            points=list(points), discussion=clip("\n".join(texts),
                                                                 options.history_tokens))
    judged = await ask(judge_of(context, "whodunit-spc"), request,
                       coverage_schema(len(points)), item="spc", attempts=options.attempts,
                       lang=lang)
    if judged.value is None:
        assert judged.failure is not None
        failures.append(judged.failure)
        return None
    value: Any = judged.value
    return Coverage(points=len(points), covered=sorted(set(value.covered)),
                    explanation=value.explanation)


async def coverage(context: MetricContext, method: Literal["judge", "lexical"],
                   seat: str | None, failures: list[JudgeFailure]) -> Coverage | None:
    points = [c.caption or c.text for c in key_points(context.script, seat)]
    texts = [s.text for s in statements(context.run, seat) if s.text.strip()]
    if not points:
        return None
    if method == "lexical" or not texts:
        return lexical_coverage(points, texts, options_of(context).threshold)
    return await judged_coverage(context, points, texts, seat, failures)


def has_key_points(script: Script, run: RunLog) -> str | None:
    return None if key_points(script, None) else "the script has no clue to cover"


@metric("whodunit-spc", "Share of each seat's key points (its key clues) that its statements "
        "conveyed; also every key point against the whole discussion (judge or lexical)",
        "WhodunitBench supplementary, section 4, figure 10 (SPC)", optional=("judge",),
        applies=has_key_points, options=WhodunitOptions, options_key="whodunit",
        paper="paper:whodunit", paper_judge=WHODUNIT_JUDGE)
async def key_points_metric(context: MetricContext) -> KeyPoints:
    method = chosen(options_of(context).spc, context)
    result = KeyPoints(run=str(context.run.path), method=method, seats={})
    for seat in seats_of(context):
        found = await coverage(context, method, seat, result.failures)
        if found is not None:
            result.seats[seat] = found
    result.table = await coverage(context, method, None, result.failures)
    return result


# -- CMD -------------------------------------------------------------------------------------
class ScoreOutOf100(BaseModel):
    reason: str
    score: int = Field(ge=0, le=100)


class SeatAnswer(BaseModel):
    answer: str
    source: Literal["reasoning", "asked"]
    """The seat's reasoning-stage statement, or its answer to the question after the game."""
    score: float | None = None
    reason: str = ""


class MotiveMethod(MetricResult):
    metric: str = "whodunit-cmd"
    method: Literal["judge", "lexical"]
    truth: str
    seats: dict[str, SeatAnswer]
    failures: list[JudgeFailure] = Field(default_factory=list)

    @property
    def cmd(self) -> float | None:
        return mean(a.score for a in self.seats.values())

    def tables(self) -> list[ResultTable]:
        rows = [[seat, a.source, number(a.score, 0)] for seat, a in self.seats.items()]
        rows.append(["mean", "", number(self.cmd, 1)])
        how = ("a judge scored each answer against the truth" if self.method == "judge" else
               "lexical: ROUGE-L F of the answer against the truth, x100")
        return [ResultTable(title="Motive and method against the truth (CMD, 0-100)",
                            columns=["seat", "answer from", "CMD"], rows=rows,
                            notes=[how, *failure_notes(self.failures)])]


async def ask_reasoning(context: MetricContext, seat: str) -> str:
    """After the game, the seat states the method and motive from its own script and what
    it observed (``agents/answerers``: its sheet and its audience's events only)."""
    options = options_of(context)
    script = context.script
    answer = seat_context(script, seat, context.run.events,
                          whole_script=whole_scripts(context.run))
    assert answer.memory is not None
    query = render("eval", "whodunit_reasoning_query", script.language)
    messages = [Message(role="user", content=render(
        "eval", "whodunit_reasoning", script.language,
        script=await answer.memory.script(query, options.answer_tokens),
        dialogue=await answer.memory.dialogue(query, options.answer_tokens)))]
    if answer.system:
        messages.insert(0, Message(role="system", content=answer.system))
    request = Request(messages=messages, purpose=REASONING, seat=seat,
                      config=GenerateConfig(max_tokens=600))
    return (await answering_model(context, seat, PREFIX).generate(request)).text.strip()


async def seat_answer(context: MetricContext, seat: str, failures: list[JudgeFailure]
                      ) -> SeatAnswer | None:
    said = [s for s in statements(context.run, seat) if s.kind == "reasoning"]
    if said:
        return SeatAnswer(answer=said[-1].text, source="reasoning")
    if not options_of(context).ask_missing:
        return None
    try:
        text = await ask_reasoning(context, seat)
    except ModelError as error:
        note("seat", failed=True)
        failures.append(JudgeFailure(purpose=f"{PREFIX}answer.reasoning", seat=seat,
                                     item="reasoning", error=str(error)))
        return None
    note("seat", failed=not text)
    return SeatAnswer(answer=text, source="asked") if text else None


def has_truth(script: Script, run: RunLog) -> str | None:
    return None if truth_text(script) else "the script has no truth to compare with"


@metric("whodunit-cmd", "Each seat's final method and motive scored against the truth "
        "(0-100; judge, or ROUGE-L without one)",
        "WhodunitBench supplementary, section 4, figures 9-10 (CMD)", optional=("judge",),
        applies=has_truth, options=WhodunitOptions, options_key="whodunit",
        paper="paper:whodunit", paper_judge=WHODUNIT_JUDGE)
async def motive_method_metric(context: MetricContext) -> MotiveMethod:
    options = options_of(context)
    method = chosen(options.cmd, context)
    lang = context.script.language
    truth = truth_text(context.script)
    result = MotiveMethod(run=str(context.run.path), method=method, truth=truth, seats={})
    for seat in seats_of(context):
        answer = await seat_answer(context, seat, result.failures)
        if answer is None:
            continue
        result.seats[seat] = answer
        if method == "lexical":
            answer.score = 100 * rouge_l(answer.answer, truth).fmeasure
            continue
        request = judge_request("whodunit_cmd", lang, purpose=JUDGE_CMD, seat=seat,
                                truth=truth, answer=answer.answer)
        judged = await ask(judge_of(context, "whodunit-cmd"), request, ScoreOutOf100,
                           item="cmd", attempts=options.attempts, lang=lang)
        if judged.value is None:
            assert judged.failure is not None
            result.failures.append(judged.failure)
            continue
        answer.score, answer.reason = judged.value.score, judged.value.reason
    return result


# -- multiple choice by reasoning steps ------------------------------------------------------
class Tally(BaseModel):
    correct: int = 0
    answered: int = 0
    """Answers counted (an answer that never parsed counts, as a wrong one)."""
    unparsed: int = 0

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.answered if self.answered else None


class StepAccuracy(MetricResult):
    metric: str = "whodunit-mcq"
    answerer: Access
    rule: Rule
    samples: int
    by_steps: dict[str, Tally]
    """``"1"``, ``"2"``...; ``"-"`` for questions without a number of steps."""
    by_seat: dict[str, Tally]

    @property
    def accuracy(self) -> float | None:
        total = Tally()
        for tally in self.by_steps.values():
            total.correct += tally.correct
            total.answered += tally.answered
        return total.accuracy

    def tables(self) -> list[ResultTable]:
        def row(name: str, tally: Tally) -> list[str]:
            return [name, str(tally.answered), str(tally.correct), number(tally.accuracy)]

        notes = [(f"answerer {self.answerer}, {self.samples} sample(s) per question, "
                 f"{self.rule} correctness")]
        unparsed = sum(t.unparsed for t in self.by_seat.values())
        if unparsed:
            notes.append(f"{unparsed} answer(s) never parsed and count as wrong")
        return [
            ResultTable(title="Multiple-choice accuracy by reasoning steps",
                        columns=["steps", "answers", "correct", "accuracy"],
                        rows=[*(row(steps, t) for steps, t in self.by_steps.items()),
                              ["all", str(sum(t.answered for t in self.by_steps.values())),
                               str(sum(t.correct for t in self.by_steps.values())),
                               number(self.accuracy)]], notes=notes),
            ResultTable(title="Multiple-choice accuracy per seat",
                        columns=["seat", "answers", "correct", "accuracy"],
                        rows=[row(seat, t) for seat, t in self.by_seat.items()]),
        ]


def choice_questions(script: Script, stepped_only: bool = True) -> list[ChoiceQuestion]:
    """The questions to answer: those with a number of reasoning steps (all when the
    script marks none, or when ``stepped_only`` is off)."""
    questions = [q for q in script.questions.choice if q.answer]
    stepped = [q for q in questions if q.steps is not None]
    return stepped if stepped_only and stepped else questions


def has_questions(script: Script, run: RunLog) -> str | None:
    return None if choice_questions(script) else "the script has no multiple-choice question"


def step_key(question: ChoiceQuestion) -> str:
    return str(question.steps) if question.steps is not None else "-"


@metric("whodunit-mcq", "Each seat answers the script's multiple-choice questions after the "
        "game; accuracy split by the number of reasoning steps",
        "WhodunitBench supplementary, figures 5-6 (multi-step questions)",
        applies=has_questions, options=WhodunitOptions, options_key="whodunit")
async def step_accuracy_metric(context: MetricContext) -> StepAccuracy:
    options = options_of(context)
    script = context.script
    questions = choice_questions(script, options.stepped_only)
    by_steps: dict[str, Tally] = defaultdict(Tally)
    by_seat: dict[str, Tally] = {}
    for seat in seats_of(context):
        answer_context = build_context(options.answerer, script, seat, context.run.events,
                                       embedder=context.embedder,
                                       whole_script=whole_scripts(context.run))
        model = answering_model(context, seat, PREFIX)
        tally = by_seat.setdefault(seat, Tally())
        for question in questions:
            if question.asked_of not in (None, seat):
                continue
            for sample in range(context.samples):
                answer = await choice_answer(question, answer_context, model, sample)
                right = bool(answer.letters) and is_correct(
                    answer.answer, question.answer, question.multiple, options.rule,
                    letters=question.options.keys() or DEFAULT_LETTERS)
                for counter in (tally, by_steps[step_key(question)]):
                    counter.answered += 1
                    counter.correct += right
                    counter.unparsed += answer.error is not None
    ordered = dict(sorted(by_steps.items(), key=lambda kv: (kv[0] == "-", kv[0].zfill(3))))
    return StepAccuracy(run=str(context.run.path), answerer=options.answerer,
                        rule=options.rule, samples=context.samples, by_steps=ordered,
                        by_seat=by_seat)
