"""Internal.

How the ThinkThrice modules call the seat's model: one tagged request per step.

Every request carries a precise ``purpose`` (``answer``, ``sr.relevance``, ``sv.verify``...)
so the run log shows what each module did and cost. Judgements over a list of items (is
fact i relevant, is claim i true) are one call whose schema has one boolean per item, as
the paper's prompts ask for one JSON key per item; the item's text is the field's
description, so a constrained decoder sees it too.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, Field, create_model

from jubensha.llm import GenerateConfig, Message, Model, Request, generate_object
from jubensha.prompts import render

T = TypeVar("T", bound=BaseModel)


class SubQuestions(BaseModel):
    questions: list[str] = Field(min_length=1, description="Each question or instruction.")


class Facts(BaseModel):
    facts: list[str] = Field(min_length=1, description="One 'time, what I did' sentence each.")


class Claims(BaseModel):
    claims: list[str] = Field(description="Third-person timeline claims, in order.")


class Rewrite(BaseModel):
    answer: str = Field(description="The improved answer, in the first person.")


def questions_schema(count: int) -> type[BaseModel]:
    """Exactly ``count`` questions for the chosen seat."""
    return create_model("Questions", questions=(list[str], Field(
        min_length=count, max_length=count, description="Your questions, in the first person.")))


def flags_schema(name: str, items: list[str]) -> type[BaseModel]:
    """One required boolean per item: ``item_0``, ``item_1``..., described by the item."""
    fields: dict[str, Any] = {f"item_{i}": (bool, Field(description=text))
                              for i, text in enumerate(items)}
    return create_model(name, **fields)


def flags(reply: BaseModel, count: int) -> list[bool]:
    return [bool(getattr(reply, f"item_{i}")) for i in range(count)]


class Caller:
    """The seat's model, language, seed and limits, for the modules to call through."""

    def __init__(self, model: Model, seat: str, lang: str, seed: int, temperature: float,
                 answer_tokens: int, judge_tokens: int, attempts: int) -> None:
        self.model = model
        self.seat = seat
        self.lang = lang
        self.seed = seed
        self.temperature = temperature
        self.answer_tokens = answer_tokens
        self.judge_tokens = judge_tokens
        self.attempts = attempts

    def messages(self, name: str, system: str = "", **values: Any) -> list[Message]:
        """``prompts/thinkthrice/<lang>/<name>.j2`` as the user message, after ``system``."""
        user = Message(role="user", content=render("thinkthrice", name, self.lang, **values))
        return [Message(role="system", content=system), user] if system else [user]

    def request(self, purpose: str, messages: list[Message], max_tokens: int,
                sample: int = 0) -> Request:
        config = GenerateConfig(temperature=self.temperature, max_tokens=max_tokens,
                                seed=self.seed)
        return Request(messages=messages, config=config, purpose=purpose, seat=self.seat,
                       sample=sample)

    async def text(self, purpose: str, messages: list[Message], sample: int = 0) -> str:
        """Free text; ``sample`` tells regenerated answers apart (caches key on it)."""
        response = await self.model.generate(
            self.request(purpose, messages, self.answer_tokens, sample))
        return response.text

    async def object(self, purpose: str, messages: list[Message], schema: type[T],
                     sample: int = 0) -> T:
        """A validated ``schema`` object, with corrective retries (``attempts`` calls)."""
        result = await generate_object(
            self.model, self.request(purpose, messages, self.judge_tokens, sample), schema,
            attempts=self.attempts, lang=self.lang)
        return result.value
