"""Internal.

Factual questions: how much each agent learned about every character (ThinkThrice
section 5, 6.2, table 6; prompts of appendix H, table 17 and 18).

**Questions.** Each character's script yields questions whose answer is a fact it states,
with that answer and the source sentence (``FactualQuestion``). Bundled scripts carry
them; for a character with none, a model (the judge) writes ``per_part`` questions from its
story and ``per_part`` from its timeline (ThinkThrice: 20 each). A generated question is
kept only when its source sentence is grounded in the text it was made from (at least
``grounding`` of the source's tokens occur there), so invented facts never become
questions. Generated sets are cached in ``RUN_DIR/eval/factual_questions.yaml`` and reused;
``jubensha eval factual-questions SCRIPT`` writes them into a copy of the script instead.

**Answers.** After the game every seat answers every question, its own and the others',
in batches, from its own script and the events it observed, each retrieved for the batch
(an observer's prompt, as the paper's: the seat is not asked to stay in role, so a
murderer is not told to lie). Seats that played without memory answer from their script.

**Judging.** A judge model says ``Correct`` or ``Incorrect`` for each answer against the
reference answer (an empty answer is incorrect without a call); with no judge, the
lexical judge: the answer is correct when it contains at least ``threshold`` of the
reference answer's key tokens (its content tokens that the question does not already
contain). A judge failure leaves the answer out of the averages and is reported.

**Report.** Own Q: questions from the answering seat's own script. Other's Q: from other
characters' scripts, split into CQ (a civilian's script) and MQ (a murderer's). Each is
the share of answers judged correct, pooled over seats, questions and samples.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, cast

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from jubensha.agents.answerers import AnswerContext, AnswererConfig
from jubensha.agents.toolkit import first_tokens
from jubensha.eval.failure import note
from jubensha.eval.judge import EVAL_DIR, EvalError, ask, judge_of, judge_request
from jubensha.eval.postgame import (
    MEMORYLESS,
    answer_context,
    gather_limited,
    seat_access,
    seat_answerer,
)
from jubensha.eval.registry import MetricContext, metric
from jubensha.eval.report import MetricResult, ResultTable, number
from jubensha.llm.base import GenerateConfig, Message, Model, Request
from jubensha.llm.calls import declare
from jubensha.llm.structured import choice_schema
from jubensha.memory.text import chunk, count_tokens, tokenize
from jubensha.prompts import render
from jubensha.scripts.model import Character, FactualQuestion, Script

Kind = Literal["own", "cq", "mq"]
QUESTIONS_FILE = "factual_questions.yaml"
VERDICTS = ("Correct", "Incorrect")


GENERATE = declare("factual.generate", "scripts")  # questions from one character's script
ANSWER = declare("factual.answer", "seat")  # the seat answers after the game
JUDGE = declare("factual.judge", "truth")  # the reference answer


class FactualOptions(BaseModel):
    """``--options`` of the ``factual`` metric (see docs/evaluation.md)."""

    model_config = ConfigDict(extra="forbid")

    per_part: int = Field(20, ge=1, description="Questions generated from a character's "
                                                "story, and again from its timeline.")
    part_tokens: int = Field(3000, ge=100, description="Longer texts are generated from in "
                                                       "pieces of this size.")
    grounding: float = Field(0.7, ge=0, le=1)
    judge: Literal["model", "lexical"] | None = Field(
        None, description="None: the judge model when one is given, else lexical.")
    threshold: float = Field(0.6, gt=0, le=1, description="Lexical judge: share of the "
                                                          "reference's key tokens.")
    batch: int = Field(10, ge=1, description="Questions per answering call.")
    samples: int = Field(1, ge=1, description="Answers per question (the paper: one).")
    script_tokens: int = Field(2500, ge=0)
    memory_tokens: int = Field(2500, ge=0)
    memoryless: list[str] = Field(default_factory=lambda: list(MEMORYLESS))
    temperature: float | None = None
    concurrency: int = Field(4, ge=1)
    attempts: int = Field(3, ge=1)


class GeneratedQuestion(BaseModel):
    question: str
    answer: str
    source: str = Field(description="The sentence of the script the answer comes from.")


class FactualSet(BaseModel):
    """A cached generated question set."""

    script: str
    model: str
    questions: list[FactualQuestion]


# --- questions -----------------------------------------------------------------------------

def story_text(character: Character) -> str:
    return "\n".join(p for p in [character.story, *(a.text for a in character.acts
                                                      if a.text != character.story)] if p)


def timeline_text(character: Character) -> str:
    return "\n".join(f"{t.time} {t.text}".strip() for t in character.timeline)


def _tokens(text: str) -> set[str]:
    return set(tokenize(text, zh_mode="chars", stopwords=True))


def grounded(source: str, text: str, share: float) -> bool:
    """Whether at least ``share`` of ``source``'s content tokens occur in ``text``."""
    wanted = _tokens(source)
    return bool(wanted) and len(wanted & _tokens(text)) / len(wanted) >= share


def by_character(script: Script, questions: Sequence[FactualQuestion]
                 ) -> dict[str, list[FactualQuestion]]:
    """Questions per character (main names); questions naming no known character dropped."""
    found: dict[str, list[FactualQuestion]] = {}
    for question in questions:
        try:
            name = script.character(question.character or "").name
        except KeyError:
            continue
        found.setdefault(name, []).append(question)
    return found


async def generate_for(character: Character, script: Script, model: Model,
                       options: FactualOptions, index: int) -> list[FactualQuestion]:
    """``per_part`` questions from the character's story and as many from its timeline."""
    made: list[FactualQuestion] = []
    for part, text in (("story", story_text(character)), ("timeline", timeline_text(character))):
        total = count_tokens(text)
        for number_, piece in enumerate(chunk(text, options.part_tokens) if text else []):
            count = max(1, math.ceil(options.per_part * count_tokens(piece) / total))
            schema = create_model("FactualQuestions", questions=(
                list[GeneratedQuestion], Field(min_length=1, max_length=count)))
            request = judge_request("factual_generate", script.language,
                                    purpose=GENERATE, seat=character.name,
                                    character=character.name, part=part, text=piece,
                                    count=count)
            request = request.model_copy(update={"config": GenerateConfig(temperature=None)})
            judged = await ask(model, request, schema, item=f"{part}#{number_}",
                               attempts=options.attempts, lang=script.language)
            for item in getattr(judged.value, "questions", []):
                if item.question.strip() and item.answer.strip() and grounded(
                        item.source, piece, options.grounding):
                    made.append(FactualQuestion(
                        id=f"gen-{index + 1}-{part}-{len(made) + 1:02d}",
                        question=item.question.strip(), answer=item.answer.strip(),
                        source=item.source.strip(), character=character.name))
    return made


async def generate_missing(script: Script, have: dict[str, list[FactualQuestion]],
                           model: Model, options: FactualOptions) -> list[FactualQuestion]:
    """Questions for every character that has none yet."""
    made: list[FactualQuestion] = []
    for index, character in enumerate(script.characters):
        if character.name not in have:
            made += await generate_for(character, script, model, options, index)
    return made


async def with_generated(script: Script, model: Model, options: FactualOptions | None = None
                         ) -> Script:
    """A copy of ``script`` whose characters without factual questions get generated ones
    (``jubensha eval factual-questions``)."""
    options = options or FactualOptions()
    have = by_character(script, script.questions.factual)
    made = await generate_missing(script, have, model, options)
    questions = script.questions.model_copy(update={"factual": [*script.questions.factual,
                                                                *made]})
    return script.model_copy(update={"questions": questions})


def read_cached(path: Path, script: Script) -> list[FactualQuestion]:
    """A cached generated set for ``script``; nothing when absent or for another script."""
    if not path.is_file():
        return []
    try:
        cached = FactualSet.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    except (yaml.YAMLError, ValidationError) as exc:
        raise EvalError(f"{path}: not a factual question set: "
                        f"{str(exc).splitlines()[0]}") from None
    return cached.questions if cached.script == script.id else []


async def question_set(context: MetricContext, options: FactualOptions
                       ) -> tuple[list[FactualQuestion], int, list[str]]:
    """The questions asked: the script's own, then cached or newly generated ones for the
    characters that have none. Returns them, how many were generated, and notes."""
    script = context.script
    questions = list(script.questions.factual)
    have = by_character(script, questions)
    if len(have) == len(script.characters):
        return questions, 0, []
    cache = context.run.path / EVAL_DIR / QUESTIONS_FILE
    cached = read_cached(cache, script)
    if cached:
        return questions + cached, len(cached), [f"generated questions from {cache}"]
    missing = [c.name for c in script.characters if c.name not in have]
    if context.judge is None:
        return questions, 0, [(f"no factual questions for {', '.join(missing)} "
                              "(pass --judge MODEL to generate them)")]
    made = await generate_missing(script, have, judge_of(context, "factual"), options)
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(yaml.safe_dump(FactualSet(script=script.id, model=context.judge.name,
                                               questions=made).model_dump(mode="json"),
                                    allow_unicode=True, sort_keys=False), encoding="utf-8")
    return questions + made, len(made), [(f"{len(made)} questions generated for "
                                         f"{', '.join(missing)}")]


# --- answers and judgements ----------------------------------------------------------------

class FactualAnswer(BaseModel):
    seat: str
    question: str
    """The question's id."""
    owner: str
    """Whose script the question comes from."""
    kind: Kind
    sample: int
    reply: str
    correct: bool | None
    """None: the judge failed (left out of the averages)."""
    error: str | None = None


class Tally(BaseModel):
    judged: int = 0
    correct: int = 0

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.judged if self.judged else None

    def add(self, correct: bool | None) -> None:
        if correct is not None:
            self.judged += 1
            self.correct += correct


def question_kind(script: Script, seat: str, owner: str) -> Kind:
    if owner == seat:
        return "own"
    return "mq" if owner in script.murderers else "cq"


def answers_schema(count: int) -> type[BaseModel]:
    """``{"a1": ..., "a2": ...}``: one answer per numbered question."""
    fields: dict = {f"a{i}": (str, ...) for i in range(1, count + 1)}
    return create_model(f"FactualAnswers{count}", **fields)


async def answer_batch(reads: AnswerContext, model: Model, questions: list[FactualQuestion],
                       sample: int, options: FactualOptions) -> tuple[list[str], str | None]:
    """One call answering ``questions``; empty answers and the error when it fails."""
    assert reads.memory is not None
    query = " ".join(q.question for q in questions)
    prompt = render("eval", "factual_answer", reads.language, me=reads.seat,
                    background=first_tokens(reads.script.background, 400),
                    script=await reads.memory.script(query, options.script_tokens),
                    memory=await reads.memory.dialogue(query, options.memory_tokens),
                    questions=[q.question for q in questions])
    request = Request(messages=[Message(role="user", content=prompt)], purpose=ANSWER,
                      seat=reads.seat, sample=sample,
                      config=GenerateConfig(temperature=options.temperature,
                                            max_tokens=80 * len(questions) + 100))
    judged = await ask(model, request, answers_schema(len(questions)),
                       item=",".join(q.id for q in questions), attempts=options.attempts,
                       lang=reads.language, kind=None)  # each answer is noted by its caller
    if judged.value is None:
        return [""] * len(questions), judged.failure.error if judged.failure else "no reply"
    return [str(getattr(judged.value, f"a{i}")) for i in range(1, len(questions) + 1)], None


def lexical_verdict(question: str, reference: str, reply: str, threshold: float = 0.6) -> bool:
    """Whether ``reply`` holds at least ``threshold`` of the reference answer's key tokens:
    its content tokens (stop words dropped, Chinese per character) not already in the
    question; all of its content tokens when the question holds every one."""
    key = (_tokens(reference) - _tokens(question)) or _tokens(reference)
    return bool(key) and len(key & _tokens(reply)) / len(key) >= threshold


async def model_verdict(judge: Model, question: FactualQuestion, reply: str, seat: str,
                        lang: str, attempts: int) -> tuple[bool | None, str | None]:
    request = judge_request("factual_judge", lang, purpose=JUDGE, seat=seat,
                            max_tokens=30, question=question.question,
                            answer=question.answer, reply=reply)
    schema = choice_schema(VERDICTS, field_name="verdict", reason=False, name="FactualVerdict")
    judged = await ask(judge, request, schema, item=question.id, attempts=attempts, lang=lang)
    if judged.value is None:
        return None, judged.failure.error if judged.failure else "no verdict"
    return cast(Any, judged.value).verdict == "Correct", None  # a schema made at run time


class FactualResult(MetricResult):
    metric: str = "factual"
    judge: str
    questions: int
    generated: int = 0
    own: Tally
    cq: Tally
    mq: Tally
    other: Tally
    seats: dict[str, dict[Kind | Literal["other"], Tally]] = Field(default_factory=dict)
    answer_failures: int = 0
    judge_failures: int = 0
    answers: list[FactualAnswer] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    def tables(self) -> list[ResultTable]:
        summary = ResultTable(
            title="Factual questions after the game (ThinkThrice table 6)",
            columns=["Own Q", "CQ", "MQ", "Other's Q", "questions", "answers", "failures",
                     "judge"],
            rows=[[number(self.own.accuracy), number(self.cq.accuracy), number(self.mq.accuracy),
                   number(self.other.accuracy), str(self.questions), str(len(self.answers)),
                   str(self.answer_failures + self.judge_failures), self.judge]],
            notes=[("Own Q: from the seat's own script; Other's Q: from other characters' "
                   "scripts, CQ a civilian's, MQ a murderer's. Accuracy pooled over seats."),
                   *self.notes])
        seats = ResultTable(
            title="Factual questions per seat", columns=["seat", "Own Q", "CQ", "MQ",
                                                         "Other's Q"],
            rows=[[name, *(number(t[k].accuracy) for k in ("own", "cq", "mq", "other"))]
                  for name, t in self.seats.items()])
        return [summary, seats]


def accuracies(script: Script, answers: list[FactualAnswer]) -> dict[str, Any]:
    """Pooled and per-seat accuracies of judged answers."""
    pooled = {k: Tally() for k in ("own", "cq", "mq", "other")}
    seats: dict[str, dict[str, Tally]] = {
        n: {k: Tally() for k in ("own", "cq", "mq", "other")} for n in script.names}
    for a in answers:
        for bucket in (pooled, seats[a.seat]):
            bucket[a.kind].add(a.correct)
            if a.kind != "own":
                bucket["other"].add(a.correct)
    return {**pooled, "seats": seats}


async def factual(context: MetricContext, options: FactualOptions) -> FactualResult:
    script = context.script
    questions, generated, notes = await question_set(context, options)
    if not questions:
        raise EvalError(f"{script.id}: no factual questions, and no judge to generate them "
                        "(pass --judge MODEL)")
    owned = [(q, owner) for owner, qs in by_character(script, questions).items() for q in qs]
    use_model = options.judge == "model" or (options.judge is None and context.judge is not None)
    judge = judge_of(context, "factual") if use_model else None
    config = AnswererConfig(role_play=False)
    jobs = []
    for seat in script.names:
        reads = answer_context(context, seat, seat_access(context, seat, options.memoryless),
                               config)
        model = seat_answerer(context, seat)
        for start in range(0, len(owned), options.batch):
            batch = owned[start:start + options.batch]
            jobs += [judged_batch(script, reads, model, judge, batch, sample, options)
                     for sample in range(options.samples)]
    answers = [a for batch in await gather_limited(jobs, options.concurrency) for a in batch]
    counts = Counter("answer" if a.error and not a.reply else "judge" if a.error else ""
                     for a in answers)
    return FactualResult(
        run=str(context.run.path), judge=judge.name if judge else "lexical",
        questions=len(owned), generated=generated, **accuracies(script, answers),
        answer_failures=counts["answer"], judge_failures=counts["judge"], answers=answers,
        notes=notes)


async def judged_batch(script: Script, reads: AnswerContext, model: Model, judge: Model | None,
                       batch: list[tuple[FactualQuestion, str]], sample: int,
                       options: FactualOptions) -> list[FactualAnswer]:
    """Answer one batch, then judge each answer."""
    assert reads.seat is not None
    replies, error = await answer_batch(reads, model, [q for q, _ in batch], sample, options)
    found = []
    for (question, owner), reply in zip(batch, replies, strict=True):
        note("seat", failed=not reply.strip())  # unparsed or empty: no answer was given
        verdict: bool | None = False
        problem = error
        if reply.strip():
            if judge is None:
                verdict = lexical_verdict(question.question, question.answer, reply,
                                          options.threshold)
            else:
                verdict, problem = await model_verdict(judge, question, reply, reads.seat,
                                                       script.language, options.attempts)
        found.append(FactualAnswer(seat=reads.seat, question=question.id, owner=owner,
                                   kind=question_kind(script, reads.seat, owner),
                                   sample=sample, reply=reply, correct=verdict, error=problem))
    return found


@metric("factual", "Every seat answers factual questions about every character after the "
        "game; Own Q and Other's Q (CQ civilians', MQ the murderer's) judged Correct or "
        "Incorrect", "ThinkThrice, sections 5 and 6.2 (table 6), appendix H",
        optional=("judge",), options=FactualOptions,
        paper="paper:thinkthrice",
        paper_judge="ThinkThrice appendix B: GPT-3.5 judged the factual answers")
async def factual_metric(context: MetricContext) -> FactualResult:
    options = FactualOptions.model_validate(context.options.get("factual", {}))
    return await factual(context, options)
