"""The scripted fake model (spec ``scripted``): deterministic, instant, and schema-valid.

Tests and dry runs need a model that never touches the network and always answers in the
right shape, and what it says is what tests, docs and a first ``jubensha play --model
scripted`` show, so it talks like a dull, fair player at the table: every text reply is
plain table talk (``data/table_talk.yaml``) of the request's language and kind (an
introduction, a question, an answer, a reason for a vote...), never a word of the prompt,
so it neither reads out the instructions it was given nor the seat's sheet. Replies are a
function of the whole request and the seed. Schema requests get an object built by
walking the JSON schema (enums picked by hashing the request, strings of table talk,
numbers within their bounds, arrays within their sizes). A text request that states a
format of labelled lines to fill in ("Modus operandi: ..." / "Motive: ...") gets those
lines, each filled with talk of its kind. Per-purpose scripts override this to force
garbage, errors or particular answers.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import math
import random
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import cache
from importlib import resources
from itertools import pairwise
from typing import Any

import numpy as np
import yaml

from jubensha.llm.base import Model, Request, Response, Usage, stream_sink
from jubensha.llm.text import HAN, estimate_tokens, messages_language

Scripted = str | dict | Exception | Response
"""One scripted reply: text, an object (sent as JSON), an exception to raise, or a Response."""
ReplyScript = Sequence[Scripted] | Callable[[Request], Scripted | None | Awaitable[Scripted | None]]
"""Replies for one purpose: consumed in order, or computed (``None`` falls back to invented)."""

ANY_PURPOSE = "*"
FORMATTED = {"date-time": "2024-01-01T20:00:00Z", "date": "2024-01-01", "time": "20:00:00",
             "email": "host@example.org", "uri": "https://example.org/",
             "uuid": "00000000-0000-4000-8000-000000000000", "duration": "PT1H"}
"""Fixed values for string formats pydantic emits (datetime, date, ... fields)."""
MAX_DEPTH = 6
_CJK_CHAR = re.compile(f"[{HAN}]")
_WORD = re.compile(f"[^\\W{HAN}]+")
_FORMAT_LINE = re.compile(r"^[ \t]*([^\n:：\"“”]{1,40}?)[ \t]*([:：])[ \t]*(?:\.{3,}|…+)"
                          r"[ \t\"”」']*$", re.MULTILINE)
"""A line of a stated format: a label, a colon and a placeholder ("Motive: ...", "动机：……")."""


class ScriptedModel(Model):
    """A deterministic fake: same request and seed, same reply; see the module docstring."""

    def __init__(self, seed: int = 0, latency_s: float = 0.0,
                 replies: Mapping[str, ReplyScript] | None = None, name: str = "scripted",
                 dimensions: int = 256) -> None:
        self.name = name
        self.seed = seed
        self.latency_s = latency_s
        self.dimensions = dimensions
        self._scripts: dict[str, ReplyScript] = {}
        self._positions: dict[str, int] = {}
        for purpose, script in (replies or {}).items():
            self.script(purpose, script)
        self.requests: list[Request] = []
        """Every request received, in order (for tests)."""

    def script(self, purpose: str, replies: ReplyScript) -> None:
        """Set the replies for ``purpose`` (``"*"``: any purpose without its own script)."""
        self._scripts[purpose] = replies if callable(replies) else list(replies)
        self._positions[purpose] = 0

    async def generate(self, request: Request) -> Response:
        self.requests.append(request)
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        scripted = await self._scripted(request)
        if isinstance(scripted, Exception):
            raise scripted
        if isinstance(scripted, Response):
            return scripted
        if isinstance(scripted, dict):
            text = json.dumps(scripted, ensure_ascii=False)
        elif scripted is not None:
            text = scripted
        else:
            text = self.invent(request)
        if (sink := stream_sink(request)) is not None:
            words = text.split(" ")
            for count in range(1, len(words) + 1):
                sink(" ".join(words[:count]))
        usage = Usage(prompt_tokens=sum(estimate_tokens(m.text) for m in request.messages),
                      completion_tokens=estimate_tokens(text), latency_s=self.latency_s)
        return Response(text=text, model=self.name, usage=usage, finish_reason="stop")

    async def _scripted(self, request: Request) -> Scripted | None:
        key = request.purpose if request.purpose in self._scripts else ANY_PURPOSE
        script = self._scripts.get(key)
        if script is None:
            return None
        if callable(script):
            reply = script(request)
            return await reply if inspect.isawaitable(reply) else reply
        position = self._positions[key]
        if position >= len(script):
            return None
        self._positions[key] = position + 1
        return script[position]

    def invent(self, request: Request) -> str:
        """The reply made up when no script applies: a schema object or table talk."""
        rng = random.Random(self._digest(request))
        talk = TableTalk(rng, request)
        form = filled_format(talk, request)
        if request.json_schema is not None:
            value = SchemaFaker(rng, talk, request.json_schema, form).value(
                request.json_schema)
            return json.dumps(value, ensure_ascii=False)
        if form:
            return form
        text = talk.speech()
        limit = request.config.max_tokens
        if limit is not None and estimate_tokens(text) > limit:
            text = talk.join(talk.units(text)[:max(1, limit // 2)])
        return text

    def _digest(self, request: Request) -> int:
        blob = json.dumps(request.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
        digest = hashlib.sha256(f"{self.seed}\n{blob}".encode()).digest()
        return int.from_bytes(digest[:8], "big")

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return hashing_vectors(texts, self.dimensions).tolist()


class HashingEmbedder:
    """Deterministic bag-of-words vectors: texts sharing words get similar vectors."""

    def __init__(self, dimensions: int = 256) -> None:
        self.dimensions = dimensions

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return hashing_vectors(texts, self.dimensions).tolist()


QUOTING = frozenset({"source", "quote", "evidence", "excerpt", "citation"})
"""Object fields that quote the text given (where in a script an answer comes from): a
sentence of the request's user messages, not talk."""
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*|\n+")


def quotable(request: Request) -> list[str]:
    """Sentences of the user messages a quoting field may give, never one that is also in
    a system message (where agents put the seat's own sheet)."""
    private = {s.strip() for m in request.messages if m.role == "system"
               for s in _SENTENCE_END.split(m.text)}
    found = [s.strip() for m in request.messages if m.role == "user"
             for s in _SENTENCE_END.split(m.text)]
    return [s for s in found if len(s) > 1 and s not in private]


@cache
def _talk() -> dict[str, dict[str, list[str]]]:
    source = resources.files("jubensha.llm").joinpath("data/table_talk.yaml")
    return yaml.safe_load(source.read_text(encoding="utf-8"))


KINDS = {"ask": "question", "questions": "question", "rewrite": "answer", "vote": "reason",
         "accuse": "reason", "why": "reason", "turn": "remark", "investigate": "remark",
         "location": "remark", "method": "method", "motive": "motive"}
"""Purposes and field names that say which kind of talk a reply is, where the kind is not
named as such (a speech's purpose is its kind: "introduction", "answer"...)."""


def kind_of(word: str | None) -> str | None:
    """The kind of talk a purpose ("sr.rewrite": its last part) or a field name asks for;
    None when it says none."""
    last = (word or "").rsplit(".", 1)[-1].casefold()
    if last in _talk()["en"]:
        return last
    return KINDS.get(last)


class TableTalk:
    """Plain table talk for one request: its language, its speaker's name, its kind."""

    def __init__(self, rng: random.Random, request: Request):
        self.rng = rng
        self.lang = messages_language(request.messages)
        self.me = request.seat or ""
        self.kind = kind_of(request.purpose) or "statement"
        self.quotable = quotable(request)

    def line(self, kind: str | None = None) -> str:
        bank = _talk()[self.lang]
        lines = [line for line in bank.get(kind or self.kind, bank["statement"])
                 if self.me or "{me}" not in line]
        return self.rng.choice(lines).format(me=self.me)

    def speech(self) -> str:
        """A line of the request's kind, and now and then a second one."""
        first = self.line()
        second = self.line() if self.kind in ("statement", "answer") else first
        return first if second == first or self.rng.random() < 0.5 else self.join(
            [first, second])

    def join(self, parts: list[str]) -> str:
        return ("" if self.lang == "zh" else " ").join(parts)

    def units(self, text: str) -> list[str]:
        """Words (Chinese: characters), to cut a reply to a token limit."""
        return list(text) if self.lang == "zh" else text.split()


def stated_format(request: Request) -> list[tuple[str, str]]:
    """The last block of labelled lines the last user message asks to fill in (two lines or
    more in a row: one alone is a prompt, not a format), with their colons; the block may
    be quoted inside a retold conversation. Empty when the message states none."""
    last = next((m.text for m in reversed(request.messages) if m.role == "user"), "")
    blocks: list[list[re.Match[str]]] = []
    for match in _FORMAT_LINE.finditer(last):
        if blocks and last.count("\n", blocks[-1][-1].end(), match.start()) <= 1:
            blocks[-1].append(match)
        else:
            blocks.append([match])
    found = [block for block in blocks if len(block) >= 2]
    return [(m.group(1).strip(), m.group(2)) for m in found[-1]] if found else []


def filled_format(talk: TableTalk, request: Request) -> str:
    """The format the request states, each label followed by talk of its kind (a motive
    for "Motive", else how it was done); '' when it states none."""
    return "\n".join(f"{label}{colon}{' ' if colon == ':' else ''}{talk.line(_label_kind(label))}"
                     for label, colon in stated_format(request))


def _label_kind(label: str) -> str:
    return "motive" if "动机" in label or "motive" in label.casefold() else "method"


def _tokens(text: str) -> list[str]:
    lowered = text.lower()
    chars = _CJK_CHAR.findall(lowered)
    bigrams = ["".join(pair) for pair in pairwise(chars)]
    return _WORD.findall(lowered) + chars + bigrams


def hashing_vectors(texts: Sequence[str], dimensions: int = 256) -> np.ndarray:
    """Signed feature hashing of words (and Chinese characters and bigrams), unit length."""
    matrix = np.zeros((len(texts), dimensions), dtype=np.float32)
    for row, text in enumerate(texts):
        for token in _tokens(text):
            digest = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(),
                                    "big")
            matrix[row, digest % dimensions] += 1.0 if digest >> 63 else -1.0
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


SPOKEN = frozenset({"answer", "response", "reply", "text", "speech", "statement"})
"""Object fields that hold what a seat says: they follow a format the prompt states."""


class SchemaFaker:
    """Builds a value that satisfies a JSON schema (the subset pydantic emits); a string
    field named as speech (``SPOKEN``) is ``form`` when the prompt states a format."""

    def __init__(self, rng: random.Random, talk: TableTalk, root: dict[str, Any],
                 form: str = "") -> None:
        self.rng = rng
        self.talk = talk
        self.root = root
        self.form = form
        self.field: str | None = None
        """The name of the object field being filled: it says what kind of talk a string
        of it is ("questions", "reason")."""

    def value(self, schema: dict[str, Any] | bool, depth: int = 0) -> Any:
        if schema is True or schema == {}:
            return self.string({})
        if schema is False:
            raise ValueError("the scripted model cannot satisfy the schema `false`")
        schema = self.resolve(schema)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self.rng.choice(schema["enum"])
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return self.value(self.pick_option(schema[key], depth), depth + 1)
        if "allOf" in schema:
            merged: dict[str, Any] = {}
            for part in schema["allOf"]:
                merged.update(self.resolve(part))
            return self.value(merged, depth + 1)
        kind = self.kind(schema, depth)
        if kind == "object":
            return self.object(schema, depth)
        if kind == "array":
            return self.array(schema, depth)
        if kind == "null":
            return None
        return {"string": self.string, "integer": self.integer, "number": self.number,
                "boolean": self.boolean}[kind](schema)

    def free_text(self, schema: Any, value: Any) -> bool:
        """Whether ``form`` may stand for ``value``: free text long enough to hold it."""
        resolved = self.resolve(schema) if isinstance(schema, dict) else {}
        bounded = {"enum", "const", "pattern", "format"} & set(resolved)
        return isinstance(value, str) and not bounded and \
            len(self.form) <= int(resolved.get("maxLength", len(self.form)))

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            target: Any = self.root
            for part in schema["$ref"].removeprefix("#/").split("/"):
                target = target[part]
            extra = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**target, **extra}
        return schema

    def pick_option(self, options: list[Any], depth: int) -> Any:
        """Prefer non-null options, except deep in recursive schemas where null ends it."""
        nulls = [o for o in options if isinstance(o, dict) and o.get("type") == "null"]
        others = [o for o in options if o not in nulls]
        if nulls and (depth >= MAX_DEPTH or not others):
            return nulls[0]
        return self.rng.choice(others)

    def kind(self, schema: dict[str, Any], depth: int) -> str:
        kind = schema.get("type")
        if isinstance(kind, list):
            non_null = [k for k in kind if k != "null"]
            kind = "null" if not non_null or depth >= MAX_DEPTH and "null" in kind \
                else self.rng.choice(non_null)
        if kind is None:
            kind = ("object" if "properties" in schema else
                    "array" if "items" in schema or "prefixItems" in schema else "string")
        return kind

    def string(self, schema: dict[str, Any]) -> str:
        if schema.get("format") in FORMATTED:
            return FORMATTED[schema["format"]]
        def piece() -> str:
            if self.field in QUOTING and self.talk.quotable:
                return self.rng.choice(self.talk.quotable)
            return self.talk.line(kind_of(self.field))

        text = piece()
        while len(text) < int(schema.get("minLength", 0)):
            text = self.talk.join([text, piece()])
        high = schema.get("maxLength")
        return text if high is None else text[:int(high)]

    def integer(self, schema: dict[str, Any]) -> int:
        low, high = self.bounds(schema, integral=True)
        step = schema.get("multipleOf")
        if step:
            first, last = math.ceil(low / step), math.floor(high / step)
            return int(self.rng.randint(first, max(first, last)) * step)
        return self.rng.randint(int(low), int(high))

    def number(self, schema: dict[str, Any]) -> float:
        low, high = self.bounds(schema, integral=False)
        step = schema.get("multipleOf")
        if step:
            first, last = math.ceil(low / step), math.floor(high / step)
            return float(self.rng.randint(first, max(first, last)) * step)
        return self.rng.uniform(low, high)

    @staticmethod
    def bounds(schema: dict[str, Any], integral: bool) -> tuple[float, float]:
        """Inclusive bounds; exclusive ones are nudged inwards; open sides span 100."""
        nudge = 1 if integral else 1e-6
        low: Any = schema.get("minimum")  # numbers of a JSON schema, or None
        if "exclusiveMinimum" in schema:
            low = schema["exclusiveMinimum"] + nudge
        high: Any = schema.get("maximum")
        if "exclusiveMaximum" in schema:
            high = schema["exclusiveMaximum"] - nudge
        if integral:
            low = None if low is None else math.ceil(low)
            high = None if high is None else math.floor(high)
        if low is None and high is None:
            low, high = 0, 100
        elif low is None:
            low = high - 100
        elif high is None:
            high = low + 100
        return low, max(low, high)

    def boolean(self, schema: dict[str, Any]) -> bool:
        return self.rng.random() < 0.5

    def array(self, schema: dict[str, Any], depth: int) -> list[Any]:
        prefix = schema.get("prefixItems", [])
        low = max(int(schema.get("minItems", 0)), len(prefix))
        high = schema.get("maxItems")
        span = 0 if depth >= MAX_DEPTH else 3
        top = low + span if high is None else min(int(high), low + span)
        count = self.rng.randint(low, max(low, top))
        items = [self.value(s, depth + 1) for s in prefix[:count]]
        item_schema = schema.get("items", {})
        tries = 0
        while len(items) < count and tries < 10 * (count + 1):
            tries += 1
            item = self.value(item_schema, depth + 1)
            if not schema.get("uniqueItems") or item not in items:
                items.append(item)
        return items

    def object(self, schema: dict[str, Any], depth: int) -> dict[str, Any]:
        required = set(schema.get("required", []))
        result = {}
        for name, sub in schema.get("properties", {}).items():
            if name in required or depth < MAX_DEPTH:
                self.field = name
                result[name] = self.value(sub, depth + 1)
                if self.form and name in SPOKEN and self.free_text(sub, result[name]):
                    result[name] = self.form
        extra = 0
        while len(result) < int(schema.get("minProperties", 0)):
            extra += 1
            result[f"field{extra}"] = self.value(schema.get("additionalProperties", {}),
                                                 depth + 1)
        return result

