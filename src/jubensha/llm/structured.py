"""Structured output: ask any model for an object matching a pydantic schema.

The schema travels in ``Request.json_schema`` so that clients able to constrain decoding
(the local model, OpenAI-compatible servers) do so; whatever comes back is still parsed
defensively, because prose around the JSON, code fences and near-JSON are common. A reply
that does not validate is answered with one corrective follow-up message (a template) and
asked again, up to ``attempts`` calls; then ``StructuredOutputError`` carries every raw
reply so the run log can show what the model said. Model text is never evaluated.

While an attempt is in flight, ``current_attempt()`` tells wrappers (the call log) which
schema the reply is meant for and which attempt this is, so they can record the parsed
object next to the raw text without changing the ``Model`` interface.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Generic, Literal, TypeVar

import json_repair
from pydantic import BaseModel, Field, ValidationError, create_model

from jubensha.llm.base import ErrorKind, Message, Model, ModelError, Request, Usage
from jubensha.llm.text import messages_language
from jubensha.prompts import render

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
MAX_PROBLEMS_SHOWN = 5


class ParseFailure(ValueError):
    """A reply that is not a valid object of the schema; the message says why, briefly."""


class StructuredOutputError(ModelError):
    """No attempt produced a valid object; ``raws`` holds every reply, ``problems`` why."""

    kind = ErrorKind.FAIL

    def __init__(self, message: str, raws: list[str], problems: list[str]) -> None:
        super().__init__(message)
        self.raws = raws
        self.problems = problems


@dataclass
class Structured(Generic[T]):
    """A validated object and the history of the calls that produced it."""

    value: T
    raws: list[str]
    usages: list[Usage]

    @property
    def attempts(self) -> int:
        return len(self.raws)

    @property
    def usage(self) -> Usage:
        total = Usage()
        for usage in self.usages:
            total = total + usage
        return total


@dataclass(frozen=True)
class Attempt:
    """The structured call in flight: what its reply must parse into, and its 1-based number."""

    schema: type[BaseModel]
    number: int
    json_schema: dict[str, Any] = field(repr=False, default_factory=dict)

    def parse(self, text: str) -> BaseModel:
        return parse_reply(text, self.schema)


_ATTEMPT: ContextVar[Attempt | None] = ContextVar("jubensha_structured_attempt", default=None)


def current_attempt() -> Attempt | None:
    """The structured attempt whose ``generate`` call is running in this task, if any."""
    return _ATTEMPT.get()


def json_schema_of(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of ``schema``, a copy the caller may change."""
    return json.loads(_json_schema(schema))


@lru_cache(maxsize=1024)
def _json_schema(schema: type[BaseModel]) -> str:
    """Generated once per class: pydantic takes ~1.5 ms per call, and a seat asks the same
    schema for every vote, question and rating (kept as text: parsing it is ~10x cheaper
    than a deep copy)."""
    return json.dumps(schema.model_json_schema())


def extract_json(text: str) -> Any:
    """The JSON value inside a reply: drops code fences and prose, repairs near-JSON."""
    stripped = text.strip()
    if not stripped:
        raise ParseFailure("the reply was empty")
    fenced = _FENCE.search(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    candidate = _outermost(stripped)
    if candidate is not None:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            pass
    repaired = json_repair.loads(candidate if candidate is not None else stripped)
    if not isinstance(repaired, dict | list):
        raise ParseFailure("the reply contains no JSON object")
    return repaired


def _outermost(text: str) -> str | None:
    """From the first ``{`` (or ``[``) to the last matching closer, or to the end."""
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return None
    start = min(starts)
    closer = "}" if text[start] == "{" else "]"
    end = text.rfind(closer)
    return text[start:end + 1] if end > start else text[start:]


def parse_reply(text: str, schema: type[T]) -> T:
    """Validate a reply against ``schema``; raise ``ParseFailure`` with a short reason."""
    data = extract_json(text)
    try:
        return schema.model_validate(data)
    except ValidationError as error:
        raise ParseFailure(_summarise(error)) from None


def _summarise(error: ValidationError) -> str:
    problems = []
    for item in error.errors()[:MAX_PROBLEMS_SHOWN]:
        where = ".".join(str(p) for p in item["loc"]) or "the object"
        problems.append(f"{where}: {item['msg']}")
    more = error.error_count() - len(problems)
    return "; ".join(problems) + (f"; and {more} more" if more > 0 else "")


async def generate_object(model: Model, request: Request, schema: type[T], attempts: int = 3,
                          lang: str | None = None) -> Structured[T]:
    """Ask ``model`` for a ``schema`` object, correcting and retrying up to ``attempts`` calls.

    A corrective retry sends the original messages, the failed reply and a correction
    naming the problem (only the latest failure, to keep small context windows free).
    ``lang`` picks the correction template; by default it follows the messages.
    """
    if attempts < 1:
        raise ValueError(f"generate_object: attempts must be at least 1, got {attempts}")
    spec = json_schema_of(schema)
    language = lang or messages_language(request.messages)
    messages = list(request.messages)
    raws: list[str] = []
    usages: list[Usage] = []
    problems: list[str] = []
    for number in range(1, attempts + 1):
        call = request.model_copy(update={"messages": messages, "json_schema": spec})
        token = _ATTEMPT.set(Attempt(schema, number, spec))
        try:
            response = await model.generate(call)
        finally:
            _ATTEMPT.reset(token)
        raws.append(response.text)
        usages.append(response.usage)
        try:
            return Structured(parse_reply(response.text, schema), raws, usages)
        except ParseFailure as failure:
            problems.append(str(failure))
            messages = [*request.messages, Message(role="assistant", content=response.text),
                        Message(role="user", content=correction(str(failure), spec, language))]
    where = f" for {request.purpose!r}" if request.purpose else ""
    raise StructuredOutputError(
        f"no valid {schema.__name__} object{where} after {attempts} attempt(s): {problems[-1]}",
        raws, problems)


def correction(problem: str, spec: dict[str, Any], lang: str) -> str:
    """The follow-up message sent after an unusable reply."""
    return render("llm", "correction", lang, problem=problem,
                  schema=json.dumps(spec, ensure_ascii=False))


def schema_instruction(spec: dict[str, Any], lang: str) -> str:
    """Tells a model that cannot be constrained which object to write."""
    return render("llm", "schema_instruction", lang,
                  schema=json.dumps(spec, ensure_ascii=False))


def enum_model(name: str, choices: dict[str, Sequence[str]],
               text_fields: dict[str, str] | None = None,
               descriptions: dict[str, str] | None = None) -> type[BaseModel]:
    """A schema whose ``choices`` fields must take one of the listed values (e.g. seat names).

    ``text_fields`` adds free-text fields (name → description), after the choice fields.
    Values go into a ``Literal`` so the JSON schema carries an ``enum`` that constrained
    decoders honour and validation enforces.
    """
    return _enum_model(name, tuple((k, tuple(v)) for k, v in choices.items()),
                       tuple((text_fields or {}).items()), tuple((descriptions or {}).items()))


@lru_cache(maxsize=1024)
def _enum_model(name: str, choices: tuple[tuple[str, tuple[str, ...]], ...],
                text_fields: tuple[tuple[str, str], ...],
                descriptions: tuple[tuple[str, str], ...]) -> type[BaseModel]:
    """Built once per distinct arguments: ``create_model`` costs ~2 ms, and the same seats
    are offered as choices over and over (so the same class, and its cached schema)."""
    described = dict(descriptions)
    fields: dict[str, Any] = {}
    for field_name, values in choices:
        options = list(dict.fromkeys(values))
        if not options:
            raise ValueError(f"enum_model {name}: field {field_name!r} has no choices")
        fields[field_name] = (Literal[tuple(options)],
                              Field(description=described.get(field_name)))
    for field_name, description in text_fields:
        fields[field_name] = (str, Field(description=description or None))
    return create_model(name, **fields)


def choice_schema(choices: Sequence[str], field_name: str = "choice", reason: bool = True,
                  name: str = "Choice", description: str | None = None) -> type[BaseModel]:
    """One required choice among ``choices`` and, optionally, a short free-text ``reason``.

    The choice comes first so a reply cut off by a token limit still carries it.
    """
    text = {"reason": ""} if reason else None
    return enum_model(name, {field_name: choices}, text,
                      {field_name: description} if description else None)
