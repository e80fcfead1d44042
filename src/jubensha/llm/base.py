"""The small model interface every client and wrapper implements.

A call is one ``Request`` (messages, sampling settings, an optional JSON schema, and tags
saying who asked and why) answered by one ``Response``. Keeping the whole request in one
value makes caching, recording and replay a matter of hashing it. Clients implement
``generate`` and ``embed``; everything else (retry, cache, record/replay, budget,
accounting, structured output) wraps a client without changing this interface.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from enum import StrEnum
from typing import Any, Literal, Protocol, runtime_checkable
from urllib.parse import urlsplit

from pydantic import BaseModel, Field

from jubensha.llm.reasoning import visible_draft

Role = Literal["system", "user", "assistant"]


class ImagePart(BaseModel):
    """An image inside a message, for vision-capable models (a data: URL or http URL)."""

    type: Literal["image"] = "image"
    url: str
    caption: str = Field("", description="Text used instead of the image by text-only models.")


class TextPart(BaseModel):
    type: Literal["text"] = "text"
    text: str


class Message(BaseModel):
    role: Role
    content: str | list[TextPart | ImagePart]

    @property
    def text(self) -> str:
        """The message as plain text, with image captions in place of images."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(p.text if isinstance(p, TextPart) else f"[image: {p.caption}]"
                         for p in self.content)


class GenerateConfig(BaseModel):
    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    seed: int | None = None
    stop: list[str] | None = None


class Request(BaseModel):
    """One model call. ``purpose``, ``seat`` and ``sample`` tag it for the run log and key
    repeated samples apart in caches; they are not sent to the model."""

    messages: list[Message]
    config: GenerateConfig = Field(default_factory=GenerateConfig)
    json_schema: dict[str, Any] | None = Field(
        None, description="When set, the reply must be a JSON object matching this schema."
    )
    purpose: str = ""
    seat: str | None = None
    sample: int = 0

    def cache_key(self, model: str) -> str:
        """A stable hash of everything that determines the reply, including the sample index."""
        payload = self.model_dump(mode="json", exclude={"purpose", "seat"})
        payload["model"] = model
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int | None = Field(
        None, description="Prompt tokens the server served from its cache (OpenAI's "
        "prompt_tokens_details.cached_tokens, llama.cpp's cache_n); None: not reported.")
    latency_s: float = 0.0
    cost_usd: float | None = None

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cached_tokens=_sum_known(self.cached_tokens, other.cached_tokens),
            latency_s=self.latency_s + other.latency_s,
            cost_usd=_sum_known(self.cost_usd, other.cost_usd),
        )

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def _sum_known(a: Any, b: Any) -> Any:
    """``a + b`` of two optional numbers; unknown (None) only when both are."""
    if a is None and b is None:
        return None
    return (a or 0) + (b or 0)


class Response(BaseModel):
    text: str
    model: str
    usage: Usage = Field(default_factory=Usage)
    finish_reason: str | None = None
    origin: Literal["live", "cache", "replay", "resumed"] = Field(
        "live", description="Where the reply came from: the model, a cache, a cassette, or the "
        "log of an earlier attempt at the same game (resumed: spent there)."
    )
    notes: list[str] = Field(
        default_factory=list,
        description="What a client changed on the way, e.g. a prompt truncated to fit.",
    )
    served_model: str | None = Field(
        None, description="The model the server said answered (an endpoint's own name for "
        "it, e.g. a dated version); None: not said.")
    reasoning: str | None = Field(
        None, description="The model's reasoning (a reasoning_content field, or <think> "
        "blocks taken out of the text): never part of ``text``; None: none given.")


class ErrorKind(StrEnum):
    """What a failed model call means for what comes next, read in one place each: the
    client retries what is worth another try (``openai_client.with_retries``, the one retry
    of a call), the game's health stops a game on ``DEAD`` and ``SPENT``, and a seat falls
    back on every kind that does not stop it."""

    RETRY = "retry"
    """Another attempt may succeed (a rate limit, a server error, a timeout, an empty
    reply): the client retries what it sees fail so, within its ``max_retries``; then
    the seat falls back."""
    FAIL = "fail"
    """This call failed for good (no reply fits the schema, no such image): never
    retried; the seat falls back."""
    DEAD = "dead"
    """Every later call to this model fails the same way (unreachable, key rejected, no
    such model or model file, a call the cassette does not hold): never retried; a game
    whose model has not answered yet stops at once."""
    SPENT = "spent"
    """The endpoint refuses for longer than a call may wait (a spent quota), or a game's or
    batch's budget is spent (``wrappers.BudgetExceeded``): never retried; the game stops at
    once, however many calls were answered before."""


class ModelError(Exception):
    """A model call that failed for good (after any retries): the caller records it and
    falls back; it never crashes a game. ``kind`` says whether it is worth another try and
    whether the game or the job goes on (``ErrorKind``); a class sets its usual kind, a
    raise may name another."""

    kind: ErrorKind = ErrorKind.RETRY

    def __init__(self, *args: object, kind: ErrorKind | None = None) -> None:
        super().__init__(*args)
        if kind is not None:
            self.kind = kind


class ModelExhausted(ModelError):
    """The endpoint refuses for longer than a call may wait (HTTP 429 with a
    ``Retry-After`` past the call's deadline: a spent quota). Every call would wait as long,
    so the job stops at once, however many calls were answered before."""

    kind = ErrorKind.SPENT


TextSink = Callable[[str], None]
"""Receives a reply while it is written: the whole text so far, each time it grows."""

_stream_sink: ContextVar[TextSink | None] = ContextVar("jubensha_stream_sink", default=None)


@contextmanager
def streaming(sink: TextSink) -> Iterator[None]:
    """Text calls made inside this block hand ``sink`` their reply as it is written (the
    whole text so far each time, so a retried call simply starts again). A client that
    cannot stream calls it once with the finished text; calls with a JSON schema never
    stream. Wrappers need nothing: the sink travels with the task (a context variable)."""
    token = _stream_sink.set(sink)
    try:
        yield
    finally:
        _stream_sink.reset(token)


def stream_sink(request: Request) -> TextSink | None:
    """The sink that ``request``'s reply should stream into, or None (no ``streaming``
    block around the call, or a structured call, whose JSON is no speech). It is handed
    only what the model says, never its reasoning (``reasoning.visible_draft``)."""
    sink = None if request.json_schema is not None else _stream_sink.get()
    if sink is None:
        return None
    shown = ""

    def said(text: str) -> None:
        nonlocal shown
        draft = visible_draft(text)
        if draft != shown:
            shown = draft
            sink(draft)

    return said


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into vectors (memory retrieval and similarity metrics)."""

    async def embed(self, texts: list[str]) -> list[list[float]]: ...


class Model(ABC):
    """A language model client or a wrapper around one."""

    name: str
    server: str = ""
    """Where its calls go, as ``endpoint_of`` writes it (no key, no query); "" for a model
    that runs here. Two servers serving one model name are two models: reply caches and
    provenance key on it."""

    @abstractmethod
    async def generate(self, request: Request) -> Response:
        """Answer one request; raise ModelError when it cannot."""

    async def embed(self, texts: list[str]) -> list[list[float]]:
        raise ModelError(f"model {self.name!r} does not provide embeddings",
                         kind=ErrorKind.FAIL)

    async def aclose(self) -> None:
        """Release connections or loaded weights; the default holds nothing."""


def endpoint_of(url: str | None) -> str:
    """``url`` without its query, fragment or credentials: what may be written down."""
    if not url:
        return ""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}".rstrip("/")


class ModelWrapper(Model):
    """Passes everything to ``inner``; subclasses override what they change."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.name = inner.name
        self.server = inner.server

    async def generate(self, request: Request) -> Response:
        return await self.inner.generate(request)

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return await self.inner.embed(texts)

    async def aclose(self) -> None:
        await self.inner.aclose()
