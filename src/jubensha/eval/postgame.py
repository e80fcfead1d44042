"""Internal.

The seats after the game: what each may read when it answers questions or votes again,
and the model it answers with.

A seat answers from its own sheet (every act: the game is over) and the events its seat
observed (``Event.audience``), retrieved for each question; never from the script as a
whole. ``agents.answerers`` builds these contexts (``dialogue``: sheet and observed
dialogue, ``ssa``: the sheet alone, ``fsa``: every character's script, the omniscient
reference). Seats whose architecture played without memory (ThinkThrice's "No MR" row)
answer from their sheet alone, as they played.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import TypeVar

from jubensha.agents.answerers import (
    Access,
    AnswerContext,
    AnswererConfig,
    ChoiceAnswer,
    answer_choice,
    build_context,
)
from jubensha.eval.failure import note
from jubensha.eval.judge import EvalError, seat_model
from jubensha.eval.registry import MetricContext
from jubensha.llm.base import Model, ModelWrapper, Request, Response
from jubensha.llm.registry import ModelSpecError
from jubensha.runlog.folder import RunLog
from jubensha.scripts.model import ChoiceQuestion

T = TypeVar("T")

MEMORYLESS = ("thinkthrice:none",)
"""Architectures that play with no memory of the game (ThinkThrice's "No MR" row)."""


class PurposePrefix(ModelWrapper):
    """Prefixes every request's purpose (``answer.dialogue`` becomes
    ``wellplay.answer.dialogue``), so the calls of shared answerers are told apart by
    metric in the evaluation's call log."""

    def __init__(self, inner: Model, prefix: str) -> None:
        super().__init__(inner)
        self.prefix = prefix

    async def generate(self, request: Request) -> Response:
        if not request.purpose.startswith(self.prefix):
            request = request.model_copy(update={"purpose": self.prefix + request.purpose})
        return await self.inner.generate(request)


def seat_answerer(context: MetricContext, seat: str) -> Model:
    """The model ``seat`` answers with after the game (``eval.judge.seat_model``). A game
    replayed from a cassette, or imported with a model that is no spec of ours, cannot
    answer: the error says to pass ``--seat-model``."""
    meta = context.run.meta
    spec = meta.seats[seat].model if meta and seat in meta.seats else ""
    if context.answerer is None and spec.strip().lower().startswith("replay:"):
        raise EvalError(f"seat {seat!r} played from a cassette ({spec}), which holds no "
                        "post-game answers: pass --seat-model MODEL")
    try:
        return seat_model(context, seat)
    except ModelSpecError:
        raise EvalError(f"seat {seat!r}: its model {spec!r} is no model spec that can answer "
                        "after the game here; pass --seat-model MODEL") from None


def answering_model(context: MetricContext, seat: str, prefix: str) -> Model:
    """``seat_answerer`` with its purposes prefixed (``wellplay.answer.dialogue``)."""
    return PurposePrefix(seat_answerer(context, seat), prefix)


def seat_access(context: MetricContext, seat: str, memoryless: Iterable[str] = MEMORYLESS
                ) -> Access:
    """``ssa`` for a seat whose architecture played without memory, else ``dialogue``."""
    meta = context.run.meta
    architecture = meta.seats[seat].architecture if meta and seat in meta.seats else ""
    return "ssa" if architecture.strip().lower() in set(memoryless) else "dialogue"


def whole_scripts(run: RunLog) -> bool:
    """Whether the game handed every seat its whole script at the start: an imported game
    (the PLAYER* authors' games did); ours hand out each act when it starts."""
    return bool(run.meta and run.meta.options.get("imported"))


def answer_context(context: MetricContext, seat: str | None, access: Access,
                   config: AnswererConfig) -> AnswerContext:
    """What ``seat`` may read after the game (``fsa``: every script, no seat)."""
    return build_context(access, context.script, seat, context.run.events, config=config,
                         embedder=context.embedder, whole_script=whole_scripts(context.run))


async def choice_answer(question: ChoiceQuestion, context: AnswerContext, model: Model,
                        sample: int) -> ChoiceAnswer:
    """A seat's answer to a multiple-choice question, noted for the metric's tally: an
    answer with no valid reply (no letters) failed (``eval.failure``)."""
    reply = await answer_choice(question, context, model, sample=sample)
    note("seat", failed=reply.error is not None or not reply.letters)
    return reply


async def gather_limited(tasks: Iterable[Awaitable[T]], limit: int) -> list[T]:
    """Await ``tasks`` with at most ``limit`` in flight; results in input order."""
    semaphore = asyncio.Semaphore(max(1, limit))

    async def run(task: Awaitable[T]) -> T:
        try:
            async with semaphore:
                return await task
        except BaseException:
            if asyncio.iscoroutine(task):
                task.close()  # cancelled before its turn: never started, never to be awaited
            raise

    return list(await asyncio.gather(*(run(task) for task in tasks)))
