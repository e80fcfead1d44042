"""Internal.

How the ThinkThrice modules call the seat's model: one tagged request per step.

Every request carries a precise ``purpose`` (``answer``, ``sr.relevance``, ``sv.verify``...)
so the run log shows what each module did and cost. Judgements over a list of items (is
fact i relevant, is claim i true) are one call whose schema has one boolean per item, as
the paper's prompts ask for one JSON key per item; the item's text is the field's
description, so a constrained decoder sees it too.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, create_model

from jubensha.agents.toolkit import Caller, chat
from jubensha.llm import Message
from jubensha.prompts import render

QUESTIONS = "Your questions, in the first person."
"""What each question of ``ask`` is (the schema's description of them)."""


class SubQuestions(BaseModel):
    questions: list[str] = Field(min_length=1, description="Each question or instruction.")


class Facts(BaseModel):
    facts: list[str] = Field(min_length=1, description="One 'time, what I did' sentence each.")


class Claims(BaseModel):
    claims: list[str] = Field(description="Third-person timeline claims, in order.")


class Rewrite(BaseModel):
    answer: str = Field(description="The improved answer, in the first person.")


def flags_schema(name: str, items: list[str]) -> type[BaseModel]:
    """One required boolean per item: ``item_0``, ``item_1``..., described by the item."""
    fields: dict[str, Any] = {f"item_{i}": (bool, Field(description=text))
                              for i, text in enumerate(items)}
    return create_model(name, **fields)


def flags(reply: BaseModel, count: int) -> list[bool]:
    return [bool(getattr(reply, f"item_{i}")) for i in range(count)]


class ThinkCaller(Caller):
    """The seat's caller (``agents.toolkit``) with the ThinkThrice templates: answers are
    free text within ``text_tokens``, judgements objects within ``object_tokens``."""

    def messages(self, name: str, system: str = "", **values: Any) -> list[Message]:
        """``prompts/thinkthrice/<lang>/<name>.j2`` as the user message, after ``system``."""
        return chat(render("thinkthrice", name, self.lang, **values), system)
