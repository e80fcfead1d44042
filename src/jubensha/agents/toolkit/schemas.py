"""Internal.

The reply schemas several architectures ask a model for. A schema's JSON (its title, the
order of its fields, their descriptions) goes to the model with the prompt, so each is
defined once and built once per distinct arguments: ``create_model`` costs ~2 ms, and the
same seats are offered as choices over and over. ``RatingReply`` (trust and doubt, 0 to
2) is the one the table's default rating asks for too, so it is defined beside that
default, in the layer below.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from jubensha.engine.defaults import RatingReply
from jubensha.llm import choice_schema

__all__ = ["RatingReply", "questions_schema", "target_schema", "turn_schema"]


def questions_schema(count: int, candidates: Sequence[str] | None = None,
                     description: str | None = None) -> type[BaseModel]:
    """Exactly ``count`` questions (each ``description``); with ``candidates``, first the
    ``target`` they are put to, one of them."""
    return _questions_schema(count, None if candidates is None else tuple(candidates),
                             description)


@lru_cache(maxsize=256)
def _questions_schema(count: int, candidates: tuple[str, ...] | None,
                      description: str | None) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    if candidates is not None:
        fields["target"] = (Literal[candidates], ...)
    fields["questions"] = (list[str], Field(min_length=count, max_length=count,
                                            description=description))
    return create_model("Questions", **fields)


def turn_schema(candidates: Sequence[str], locations: Sequence[str]) -> type[BaseModel]:
    """An open turn: ``ask`` one of ``candidates`` a ``question``, or (when there are
    ``locations``) ``investigate`` one of them."""
    return _turn_schema(tuple(candidates), tuple(locations))


@lru_cache(maxsize=256)
def _turn_schema(candidates: tuple[str, ...], locations: tuple[str, ...]) -> type[BaseModel]:
    fields: dict[str, Any] = {
        "action": (Literal["ask", "investigate"] if locations else Literal["ask"], ...),
        "target": (Literal[candidates], ...),
        "question": (str, ...),
    }
    if locations:
        fields["location"] = (Literal[locations], ...)
    return create_model("Turn", **fields)


def target_schema(candidates: Sequence[str], purpose: Literal["vote", "accuse"]
                  ) -> type[BaseModel]:
    """A vote or an accusation: one of ``candidates`` as ``target``, then a ``reason``
    (the schema named ``Vote`` or ``Accuse``)."""
    return choice_schema(list(candidates), field_name="target", name=purpose.capitalize())
