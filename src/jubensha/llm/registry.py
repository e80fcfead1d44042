"""Model names as written on the command line, turned into clients.

One string names a model everywhere (``--model``, ``--seat NAME=SPEC``, experiment specs):
``local`` (the embedded model, the default), ``openai:<model>``, ``scripted`` or
``replay:<file>``. Each form is a ``Form`` in ``MODELS`` (a ``jubensha.registry.Registry``),
whose builder imports its client only when used. Options that are not part of the name
(endpoint, key, timeout, temperature) come from ``ModelOptions``, whose defaults read the
usual environment.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, Literal, TypeVar

from pydantic import BaseModel, Field

from jubensha.llm.base import Model, ModelError
from jubensha.registry import Registry

T = TypeVar("T")
DEFAULT_SPEC = "local"


class ModelSpecError(ValueError):
    """A model name that does not fit any known form; the message lists the forms."""


class ModelOptions(BaseModel):
    """Settings shared by the clients a spec can name; ``None`` means the client's default."""

    base_url: str | None = Field(
        default_factory=lambda: os.environ.get("OPENAI_BASE_URL") or None,
        description="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL, else OpenAI).")
    api_key: str | None = Field(
        default_factory=lambda: os.environ.get("OPENAI_API_KEY") or None,
        description="API key (default: $OPENAI_API_KEY).")
    timeout_s: float = Field(120.0, gt=0, description="Per-request timeout.")
    max_retries: int = Field(4, ge=0, description="Retries on rate limits, 5xx and timeouts.")
    deadline_s: float = Field(300.0, gt=0, description="No retry starts once a call has "
                              "taken this long (a hanging server costs at most about this "
                              "plus one request's timeout per call).")
    temperature: float | None = Field(
        None, ge=0, description="Used when a request sets no temperature.")
    embedding_model: str | None = Field(
        None, description="Embeddings model of an openai: client (e.g. text-embedding-3-small).")
    context_tokens: int | None = Field(
        None, gt=0, description="Context window of the local model (default: its own).")
    threads: int | None = Field(
        None, ge=1, description="CPU threads of the local model (default: all cores but one).")
    slots: int | None = Field(
        None, ge=0, description="KV-cache slots of the local model, one per seat and "
        "prompt family (default 32; 0: one slot for all).")
    exact: bool = Field(
        False, description="Local model: read prompts a token at a time, so that a reply at "
        "temperature 0 does not depend on what the KV cache held (slower; docs/models.md).")
    seed: int = Field(0, description="Seed of the scripted fake.")
    latency_s: float = Field(0.0, ge=0, description="Simulated latency of the scripted fake.")


@dataclass(frozen=True)
class Form(Generic[T]):
    """One form of a ``kind[:argument]`` name (``openai:<model>``): its line in the list of
    forms, whether it takes an argument, and the builder of what it names."""

    usage: str
    build: Callable[[str, ModelOptions], T]
    argument: Literal["none", "optional", "required"] = "none"
    needs: str = ""
    """What a required argument names, for the error when it is missing."""

    def accepts(self, argument: str) -> bool:
        """Whether ``argument`` ("" for none) fits this form."""
        return self.argument == "optional" or bool(argument) == (self.argument == "required")


def split_form(spec: str) -> tuple[str, str]:
    """``"openai:gpt-4o-mini"`` → ``("openai", "gpt-4o-mini")``."""
    kind, _, argument = spec.strip().partition(":")
    return kind.strip().lower(), argument.strip()


def client_names(spec: str) -> set[str] | None:
    """The names (``Model.name``) a client built from ``spec`` records its calls under, so
    that a run's call log can be checked against the models its meta.json names; None for
    a form whose clients may name themselves otherwise (nothing to check)."""
    kind, argument = split_form(spec)
    if kind == "scripted":
        return {"scripted"}
    if kind == "openai":
        return {f"openai:{argument}"}
    if kind == "replay":
        return {f"replay:{Path(argument).name}"}
    if kind == "local":  # the default model is "local"; a named one by its name or file
        return {"local", f"local:{argument}", f"local:{argument.lower()}",
                f"local:{Path(argument).name}"} if argument \
            else {"local", "local:smollm2-135m"}
    return None


def _scripted(argument: str, options: ModelOptions) -> Model:
    from jubensha.llm.fake import ScriptedModel

    return ScriptedModel(seed=options.seed, latency_s=options.latency_s)


def _local(argument: str, options: ModelOptions) -> Model:
    from jubensha.llm.local import LocalModel

    return LocalModel.named(argument, context_tokens=options.context_tokens,
                            temperature=options.temperature, threads=options.threads,
                            slots=options.slots, exact=options.exact)


def _openai(argument: str, options: ModelOptions) -> Model:
    from jubensha.llm.openai_client import OpenAIModel

    return OpenAIModel(argument, base_url=options.base_url, api_key=options.api_key,
                       timeout_s=options.timeout_s, max_retries=options.max_retries,
                       deadline_s=options.deadline_s, temperature=options.temperature,
                       embedding_model=options.embedding_model)


def _replay(argument: str, options: ModelOptions) -> Model:
    from jubensha.llm.replay import ReplayModel

    return ReplayModel.load(Path(argument))


MODELS: Registry[Form[Model]] = Registry()
MODELS.put("local", Form("local  (the embedded SmolLM2 model; local:qwen2.5-coder-1.5b; "
                         "local:<path to a .gguf>)", _local, "optional"))
MODELS.put("openai", Form("openai:<model>  (any OpenAI-compatible endpoint, e.g. "
                          "openai:gpt-4o-mini)", _openai, "required", "model name"))
MODELS.put("scripted", Form("scripted  (the deterministic fake used by tests)", _scripted))
MODELS.put("replay", Form("replay:<file>  (answers from a recorded cassette)", _replay,
                          "required", "file"))


def _unknown(spec: str, why: str) -> ModelSpecError:
    forms = "\n  ".join(form.usage for _, form in MODELS.items())
    return ModelSpecError(f"model {spec!r}: {why}. A model is one of:\n  {forms}")


def _form(spec: str) -> Form[Model]:
    kind, argument = split_form(spec)
    form = MODELS.get(kind) if kind in MODELS else None
    if form is not None and not argument and form.argument == "required":
        raise _unknown(spec, f"'{kind}:' needs a {form.needs}")
    if form is None or not form.accepts(argument):
        raise _unknown(spec, "unknown model")
    return form


def validate_model_spec(spec: str) -> str:
    """Check the form of ``spec`` without building a client; returns it stripped."""
    _form(spec)
    return spec.strip()


def named_file(spec: str) -> str | None:
    """The file ``spec`` makes this machine open, if any: a cassette (``replay:<file>``) or
    a ``.gguf`` path (``local:<path>``; a known model's name is resolved from the user's own
    cache instead). A model spec read from a run folder may name none: the folder's author
    would choose what the native loader parses."""
    kind, argument = split_form(spec)
    if kind == "replay":
        return argument
    if kind == "local" and argument:
        from jubensha.llm.catalog import KNOWN

        return None if argument.lower() in KNOWN else argument
    return None


def parse_model_spec(spec: str, options: ModelOptions | None = None) -> Model:
    """Build the client that ``spec`` names (see ``MODELS``).

    Every problem (an unknown form, a missing model file or package, a bad cassette) is a
    ``ModelSpecError`` that names the spec, so a command line can report it in one line.
    """
    try:
        return _build(spec, options or ModelOptions())
    except ModelError as error:
        raise ModelSpecError(f"model {spec.strip()!r}: {error}") from None


def _build(spec: str, options: ModelOptions) -> Model:
    _, argument = split_form(spec)
    return _form(spec).build(argument, options)

