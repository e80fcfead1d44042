"""One classification of model errors (``ErrorKind``): a dead endpoint stops a game whose
model never answered; a spent quota or budget is never retried and stops the game at once.
(What the client retries: tests/llm/test_openai_client.py.)"""

from __future__ import annotations

import pickle

import pytest

from jubensha.llm import ErrorKind, ModelError, ModelExhausted
from jubensha.llm.base import Model, Request, Response
from jubensha.llm.catalog import ModelFileError
from jubensha.llm.health import Health, ModelUnreachable
from jubensha.llm.openai_client import OpenAIError
from jubensha.llm.replay import CassetteError
from jubensha.llm.structured import StructuredOutputError
from jubensha.llm.wrappers import Budget, BudgetExceeded, Meter, stack


class Failing(Model):
    """Fails every call with ``error``, counting the attempts."""

    def __init__(self, error: ModelError) -> None:
        self.name, self.error, self.attempts = "failing", error, 0

    async def generate(self, request: Request) -> Response:
        self.attempts += 1
        raise self.error


KINDS = [
    (ModelError("a server error"), ErrorKind.RETRY),
    (StructuredOutputError("no valid object", [], []), ErrorKind.FAIL),
    (CassetteError("unreadable cassette"), ErrorKind.FAIL),
    (OpenAIError("key rejected", kind=ErrorKind.DEAD), ErrorKind.DEAD),
    (ModelFileError("no model file"), ErrorKind.DEAD),
    (BudgetExceeded("run budget spent"), ErrorKind.SPENT),
    (ModelExhausted("quota spent"), ErrorKind.SPENT),
]


@pytest.mark.parametrize(("error", "kind"), KINDS, ids=lambda x: str(x))
def test_each_error_has_its_kind(error: ModelError, kind: ErrorKind) -> None:
    assert error.kind is kind


async def test_a_spent_budget_never_reaches_the_model_and_stops_the_game() -> None:
    inner = Failing(ModelError("never reached"))
    budgeted = stack(inner, meters=[Meter(Budget(max_calls=0), "game")])
    with pytest.raises(BudgetExceeded) as refused:
        await budgeted.generate(Request(messages=[]))
    assert inner.attempts == 0
    health = Health(max_consecutive=0)
    health.succeeded("Ann")  # even after answers
    with pytest.raises(ModelUnreachable):
        health.failed("Ann", "m", refused.value)


def test_the_game_stops_on_a_spent_quota_even_after_answers() -> None:
    health = Health(max_consecutive=0)
    health.succeeded("Ann")
    health.failed("Ann", "m", ModelError("flaky"))
    health.failed("Ann", "m", OpenAIError("gone", kind=ErrorKind.DEAD))  # answered before
    with pytest.raises(ModelUnreachable) as stopped:
        health.failed("Ann", "m", ModelExhausted("quota spent"))
    assert stopped.value.say("en") == "the model 'm' cannot answer now: quota spent"


def test_a_dead_model_stops_the_game_before_any_answer() -> None:
    with pytest.raises(ModelUnreachable):
        Health().failed("Ann", "m", BudgetExceeded("spent"))
    with pytest.raises(ModelUnreachable):
        Health().failed("Ann", "m", OpenAIError("refused", kind=ErrorKind.DEAD))
    Health().failed("Ann", "m", ModelError("a server error"))  # worth going on
    Health().failed("Ann", "m", StructuredOutputError("no valid object", [], []))


def test_the_kind_survives_pickling() -> None:
    """Errors cross processes (the process and Ray executors) with their kind."""
    error = pickle.loads(pickle.dumps(OpenAIError("refused", kind=ErrorKind.DEAD)))
    assert error.kind is ErrorKind.DEAD and str(error) == "refused"
