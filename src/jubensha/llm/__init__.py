"""Model clients behind one small async interface, and the wrappers around them.

What an agent, a metric or a new client needs comes from here: the interface (``Model``,
``Request``, ``Response``, ``Embedder``), structured output (``generate_object``), the
wrapper base, model specs (``parse_model_spec("openai:gpt-4o-mini")``), purpose
declarations for the call log, and the scripted fake for tests. The clients themselves
(OpenAI-compatible HTTP, the embedded local model) are reached through model specs; the
other modules are internal. docs/architecture.md shows the model contract.
"""

from typing import TYPE_CHECKING

from jubensha.lazy import lazy_names

if TYPE_CHECKING:
    from jubensha.llm.base import (
        Embedder,
        ErrorKind,
        GenerateConfig,
        ImagePart,
        Message,
        Model,
        ModelError,
        ModelExhausted,
        ModelWrapper,
        Request,
        Response,
        Role,
        TextPart,
        Usage,
    )
    from jubensha.llm.calls import CallRecord, declare
    from jubensha.llm.fake import HashingEmbedder, ScriptedModel
    from jubensha.llm.registry import ModelSpecError, parse_model_spec
    from jubensha.llm.structured import (
        Structured,
        StructuredOutputError,
        choice_schema,
        enum_model,
        generate_object,
    )

__all__ = [
    "CallRecord",
    "Embedder",
    "ErrorKind",
    "GenerateConfig",
    "HashingEmbedder",
    "ImagePart",
    "Message",
    "Model",
    "ModelError",
    "ModelExhausted",
    "ModelSpecError",
    "ModelWrapper",
    "Request",
    "Response",
    "Role",
    "ScriptedModel",
    "Structured",
    "StructuredOutputError",
    "TextPart",
    "Usage",
    "choice_schema",
    "declare",
    "enum_model",
    "generate_object",
    "parse_model_spec",
]

__getattr__, __dir__ = lazy_names(__name__, __file__)
