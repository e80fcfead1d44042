"""Internal.

Any OpenAI-compatible endpoint (spec ``openai:<model>``): OpenAI, vLLM, Ollama, llama.cpp
server, DeepSeek, Qwen (DashScope)...

Transient failures (rate limits, 5xx, timeouts, dropped connections) are retried with
exponential backoff, honouring ``Retry-After``; other 4xx errors are not, since asking
again cannot help, and neither is a 429 whose ``Retry-After`` is longer than the call's
deadline (a spent quota: ``ModelExhausted`` stops the job at once). Each request ends at
its timeout by the wall clock, however slowly a server drips its reply. Schemas go out as ``response_format: json_schema``; servers that reject
it are asked for ``json_object`` and then plain text with the schema spelled out in the
prompt, and the client remembers what worked. Local image paths are sent as data URLs.
"""

from __future__ import annotations

import asyncio
import base64
import json
import mimetypes
import re
import socket
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from functools import cache, partial
from pathlib import Path
from typing import Any, Literal, TypeVar

import httpx2
import openai
from openai import AsyncOpenAI
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, stop_after_delay
from tenacity.stop import stop_base
from tenacity.wait import wait_exponential_jitter

from jubensha.llm.base import (
    ErrorKind,
    ImagePart,
    Message,
    Model,
    ModelError,
    ModelExhausted,
    Request,
    Response,
    TextPart,
    TextSink,
    Usage,
    endpoint_of,
    stream_sink,
)
from jubensha.llm.completion import Completion, read_completion
from jubensha.llm.sse import read_stream
from jubensha.llm.structured import schema_instruction
from jubensha.llm.text import messages_language

T = TypeVar("T")
ResponseFormat = Literal["json_schema", "json_object", "plain"]
FORMATS: tuple[ResponseFormat, ...] = ("json_schema", "json_object", "plain")
TRANSIENT = (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError,
             openai.APIConnectionError, openai.APIResponseValidationError, ValueError)
"""Worth another try: rate limits, server errors, timeouts, dropped connections, and a
body that is not JSON or not UTF-8 (``ValueError``: a proxy's error page, a cut reply)."""
DEFAULT_MAX_TOKENS = 2048
"""Completion cap of a request that sets none: a runaway reply cannot fill a log."""
REJECTED = (openai.BadRequestError, openai.UnprocessableEntityError)
FATAL = (openai.APIConnectionError, openai.AuthenticationError, openai.PermissionDeniedError,
         openai.NotFoundError)
"""Errors every later call would meet too (after retries): the game stops on them."""


class OpenAIError(ModelError):
    """The endpoint failed for good (after retries) or is misconfigured."""


def _retry_after(error: BaseException | None) -> float | None:
    """The server's ``Retry-After`` in seconds: a number, or an HTTP date."""
    response = getattr(error, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(when.tzinfo or UTC)).total_seconds())


class _Wait(wait_exponential_jitter):
    """Exponential backoff with jitter, or the server's ``Retry-After`` when it sends one."""

    def __call__(self, retry_state: Any) -> float:
        error = retry_state.outcome.exception() if retry_state.outcome else None
        hinted = _retry_after(error)
        return min(hinted, self.max) if hinted is not None else super().__call__(retry_state)


def _causes(error: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    cause: BaseException | None = error
    while cause is not None and cause not in chain:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    return chain


_URL_CREDENTIALS = re.compile(r"(?<=://)[^\s/@'\"]+@")


def without_credentials(text: str) -> str:
    """``text`` with the ``user:password@`` of every URL in it cut out. Error texts are
    written to run logs, cassettes and the terminal, and what lies under an SDK error (the
    HTTP library's status error, say) names the URL it called, with the credentials of a
    ``--base-url`` that holds them."""
    return _URL_CREDENTIALS.sub("", text)


def no_server(error: BaseException) -> bool:
    """Nothing listens at the address (the connection is refused, the host name does not
    exist): every try would meet the same, so it is not retried and stops a game at once.
    A connection dropped in the middle of a reply is still retried."""
    return any(isinstance(cause, ConnectionRefusedError) or (
        isinstance(cause, socket.gaierror) and cause.errno == socket.EAI_NONAME)
        for cause in _causes(error))


def _reason(error: BaseException) -> str:
    """The SDK's error and, where it only says "Connection error.", what lay under it."""
    root = _causes(error)[-1]
    below = f" ({root})" if root is not error and str(root) else ""
    return without_credentials(f"{type(error).__name__}: {error}{below}")


def _transient(error: BaseException) -> bool:
    return isinstance(error, TRANSIENT) and not no_server(error)


async def with_retries(call: Callable[[], Awaitable[T]], max_retries: int, backoff_s: float,
                       backoff_max_s: float, deadline_s: float | None = None) -> T:
    """Run ``call``, retrying transient errors up to ``max_retries`` times, and starting no
    new attempt once ``deadline_s`` has passed. A rate limit asking to wait longer than
    ``deadline_s`` is ``ModelExhausted`` at once: no wait, no retry."""
    stop: stop_base = stop_after_attempt(max_retries + 1)
    if deadline_s is not None:
        stop = stop | stop_after_delay(deadline_s)
    retrying = AsyncRetrying(stop=stop,
                             wait=_Wait(multiplier=backoff_s, max=backoff_max_s,
                                        jitter=backoff_s),
                             retry=retry_if_exception(_transient), reraise=True)
    async for attempt in retrying:
        with attempt:
            result = await _unless_exhausted(call, deadline_s)
    return result


async def _unless_exhausted(call: Callable[[], Awaitable[T]], deadline_s: float | None) -> T:
    try:
        return await call()
    except openai.RateLimitError as error:
        wait = _retry_after(error)
        if wait is not None and deadline_s is not None and wait > deadline_s:
            raise ModelExhausted(
                f"rate limited: the server asks to wait {wait:,.0f} s (Retry-After), longer "
                f"than a call's deadline of {deadline_s:,.0f} s; its quota is probably spent "
                "(try again later, or raise deadline_s)") from None
        raise


def image_url(part: ImagePart) -> str:
    """The part's URL as sent: http(s) and data URLs as they are, a local file as a data URL."""
    if re.match(r"^(https?|data):", part.url):
        return part.url
    path = Path(part.url).expanduser()
    if not path.is_file():
        raise OpenAIError(f"image file not found: {path}", kind=ErrorKind.FAIL)
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def _json(data: bytes) -> Any:
    """A reply body's JSON; one nested past the parser's depth is a ``ValueError`` like any
    other garbled body (retried, then a recorded ``ModelError``), not a ``RecursionError``."""
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("the reply is nested too deeply to read") from None


def _schema_name(schema: dict[str, Any]) -> str:
    name = re.sub(r"[^a-zA-Z0-9_-]", "_", str(schema.get("title") or "reply"))
    return name[:64] or "reply"


@cache
def _ssl_context() -> ssl.SSLContext:
    """One verifying context per process: loading the CA bundle takes ~40 ms, and a batch
    builds a client per game (64 games at once spent 2.6 s of a 12 s run here)."""
    return httpx2.create_ssl_context()


class OpenAIModel(Model):
    """A chat model behind an OpenAI-compatible HTTP API."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 timeout_s: float = 120.0, max_retries: int = 4,
                 temperature: float | None = None, embedding_model: str | None = None,
                 vision: bool = True, backoff_s: float = 1.0,
                 backoff_max_s: float = 60.0, deadline_s: float | None = 300.0) -> None:
        if not api_key and not base_url:
            raise OpenAIError("no API key: set OPENAI_API_KEY (or pass --base-url for a "
                              "server that needs no key, e.g. a local vLLM or Ollama)",
                              kind=ErrorKind.DEAD)
        self.model = model
        self.name = f"openai:{model}"
        self.client = AsyncOpenAI(api_key=api_key or "not-needed", base_url=base_url,
                                  timeout=timeout_s, max_retries=0,
                                  http_client=openai.DefaultAsyncHttpxClient(
                                      verify=_ssl_context(), timeout=timeout_s))
        self.server = endpoint_of(str(self.client.base_url))
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self.temperature = temperature
        self.embedding_model = embedding_model
        self.vision = vision
        self.backoff = (backoff_s, backoff_max_s)
        self.deadline_s = deadline_s
        self.response_format: ResponseFormat = "json_schema"
        """The best structured mode the server accepted so far."""
        self.streams = True
        """False once the server refused a streamed request: later ones are not streamed."""

    async def generate(self, request: Request) -> Response:
        start = time.perf_counter()
        notes: list[str] = []
        while True:
            mode = self.response_format if request.json_schema is not None else "plain"
            sink = stream_sink(request) if self.streams else None
            body = self._arguments(request, mode)
            create = (partial(self._complete, body) if sink is None
                      else partial(self._complete_streamed, body, sink))
            try:
                completion = await self._retrying(create)
                break
            except ModelExhausted as error:
                raise ModelExhausted(f"{self.name}: {error}") from None
            except REJECTED as error:
                if sink is not None:
                    self.streams = False
                    notes.append(f"server rejected a streamed request ({_reason(error)}); "
                                 "asking without streaming")
                    continue
                if request.json_schema is None or mode == "plain":
                    raise OpenAIError(f"{self.name} rejected the request: "
                                      f"{without_credentials(str(error))}") from None
                self.response_format = FORMATS[FORMATS.index(mode) + 1]
                notes.append(f"server rejected response_format {mode}; "
                             f"using {self.response_format}")
            except (openai.OpenAIError, ValueError) as error:
                raise OpenAIError(f"{self.name}: {_reason(error)}",
                                  kind=ErrorKind.DEAD if isinstance(error, FATAL)
                                  else ErrorKind.RETRY) from None
        if completion is None:
            raise OpenAIError(f"{self.name} returned no choices")
        return Response(
            text=completion.text, model=self.name,
            usage=Usage(prompt_tokens=completion.prompt_tokens,
                        completion_tokens=completion.completion_tokens,
                        cached_tokens=completion.cached_tokens,
                        latency_s=time.perf_counter() - start),
            finish_reason=completion.finish_reason, notes=notes,
            served_model=completion.model, reasoning=completion.reasoning)

    async def _complete(self, body: dict[str, Any]) -> Completion | None:
        """POST ``body`` as it is and read the reply's JSON here: the SDK's typed ``create``
        walks every argument against its TypedDicts and builds a model of the reply, ~2 ms
        of CPU a call that 64 games at once wait on. A body that is not a completion is a
        ``ValueError``, retried like a garbled reply."""
        async with self._wall_clock("/chat/completions"):
            response = await self.client.post("/chat/completions", cast_to=httpx2.Response,
                                              body=body)
        return read_completion(_json(response.content))

    async def _complete_streamed(self, body: dict[str, Any], sink: TextSink
                                 ) -> Completion | None:
        """The reply as server-sent chunks, read here (``sse``): ``sink`` gets the text so
        far at every chunk. A server that answers a streamed request with one plain JSON
        body (some proxies and small servers do) is read as that body."""
        async with self._wall_clock("/chat/completions"):
            response = await self.client.post(
                "/chat/completions", cast_to=httpx2.Response, stream=True,
                body={**body, "stream": True, "stream_options": {"include_usage": True}})
            try:
                if "text/event-stream" not in response.headers.get("content-type", ""):
                    found = read_completion(_json(await response.aread()))
                    if found is not None and found.text:
                        sink(found.text)
                    return found
                return await read_stream(response.aiter_lines(), sink)
            finally:
                await response.aclose()

    @asynccontextmanager
    async def _wall_clock(self, path: str) -> AsyncIterator[None]:
        """End a request at ``timeout_s`` by the wall clock: the HTTP client's timeout is
        per read, so a server dripping a byte every few seconds would never meet it. Ends
        as the client's own timeout does (``APITimeoutError``: retried, then failed)."""
        try:
            async with asyncio.timeout(self.timeout_s):
                yield
        except TimeoutError:
            url = f"{str(self.client.base_url).rstrip('/')}{path}"
            raise openai.APITimeoutError(request=httpx2.Request("POST", url)) from None

    async def _retrying(self, call: Callable[[], Awaitable[T]]) -> T:
        return await with_retries(call, self.max_retries, *self.backoff, self.deadline_s)

    def _arguments(self, request: Request, mode: ResponseFormat) -> dict[str, Any]:
        messages = list(request.messages)
        schema = request.json_schema
        if schema is not None and mode != "json_schema":
            messages.append(Message(role="user", content=schema_instruction(
                schema, messages_language(messages))))
        config = request.config
        temperature = config.temperature if config.temperature is not None else self.temperature
        arguments: dict[str, Any] = {
            "model": self.model, "messages": [self._message(m) for m in messages],
            "temperature": temperature, "max_tokens": config.max_tokens or DEFAULT_MAX_TOKENS, "top_p": config.top_p,
            "seed": config.seed, "stop": config.stop}
        if schema is not None and mode == "json_schema":
            arguments["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": _schema_name(schema), "schema": schema, "strict": False}}
        elif schema is not None and mode == "json_object":
            arguments["response_format"] = {"type": "json_object"}
        return {k: v for k, v in arguments.items() if v is not None}

    def _message(self, message: Message) -> dict[str, Any]:
        if isinstance(message.content, str) or not self.vision:
            return {"role": message.role, "content": message.text}
        parts: list[dict[str, Any]] = []
        for part in message.content:
            if isinstance(part, TextPart):
                parts.append({"type": "text", "text": part.text})
            else:
                parts.append({"type": "image_url", "image_url": {"url": image_url(part)}})
        return {"role": message.role, "content": parts}

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """Vectors from the embeddings endpoint, in the order of ``texts``."""
        model = self.embedding_model
        if not model:
            raise OpenAIError(f"{self.name} has no embedding model: set one "
                              "(ModelOptions.embedding_model) or use another embedder")
        if not texts:
            return []
        async def create() -> Any:
            async with self._wall_clock("/embeddings"):
                return await self.client.embeddings.create(model=model, input=texts)

        try:
            result = await self._retrying(create)
        except openai.OpenAIError as error:
            raise OpenAIError(f"embeddings {model}: {_reason(error)}") from None
        vectors = sorted(result.data, key=lambda item: item.index)
        if len(vectors) != len(texts):
            raise OpenAIError(f"embeddings {model}: {len(vectors)} vectors for "
                              f"{len(texts)} texts")
        return [list(item.embedding) for item in vectors]

    async def aclose(self) -> None:
        await self.client.close()


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible endpoint (spec ``openai:<model>`` for embedders)."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 timeout_s: float = 120.0, max_retries: int = 4, backoff_s: float = 1.0) -> None:
        self.chat = OpenAIModel(model, base_url=base_url, api_key=api_key, timeout_s=timeout_s,
                                max_retries=max_retries, embedding_model=model,
                                backoff_s=backoff_s)

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return await self.chat.embed(texts)

    async def aclose(self) -> None:
        await self.chat.aclose()
