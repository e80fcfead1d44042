"""Internal.

Which model a spec named when a game was played, for the run's provenance: the file a
local model loaded (its sha256, hashed once: ``catalog.file_sha256``), the endpoint and the
model string of an ``openai:`` spec, the cassette a replay read. What an endpoint says it
ran is only known from its replies (``CallRecord.served_model``); the run adds it after the
game. Never raises: an identity that cannot be had is recorded with the reason.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from jubensha.llm.base import ModelError, endpoint_of
from jubensha.llm.catalog import file_sha256
from jubensha.llm.registry import ModelOptions, split_form

__all__ = ["ModelIdentity", "endpoint_of", "model_identity"]


class ModelIdentity(BaseModel):
    """What a model spec was when it played."""

    kind: str = Field(description="local, openai, scripted, replay...")
    name: str = Field("", description="The model string (openai:), the file name (local:).")
    sha256: str = Field("", description="The local model file's or the cassette's sha256.")
    endpoint: str = Field("", description="The endpoint's scheme, host and path (no key, "
                          "no query); '' for the provider's default.")
    served: list[str] = Field(default_factory=list, description=(
        "What the server said answered, as it named it in its replies."))
    problem: str = Field("", description="Why part of the identity is missing.")

    def key(self) -> tuple[str, ...]:
        """What must agree between two games for them to have played the same model (two
        servers serving one model name are two models)."""
        return (self.kind, self.name, self.sha256, self.endpoint, ",".join(self.served))


def model_identity(spec: str, options: ModelOptions | None = None) -> ModelIdentity:
    """The identity of the model ``spec`` names on this machine, now."""
    kind, argument = split_form(spec)
    identity = ModelIdentity(kind=kind)
    try:
        if kind == "local":
            from jubensha.llm.local import resolve

            path, known = resolve(argument)
            identity.name = path.name
            identity.sha256 = file_sha256(path, known)
        elif kind == "openai":
            identity.name = argument
            identity.endpoint = endpoint_of((options or ModelOptions()).base_url)
        elif kind == "replay":
            path = Path(argument).expanduser()
            identity.name = path.name
            identity.sha256 = file_sha256(path)
        else:
            identity.name = argument
    except (ModelError, OSError) as exc:
        identity.problem = f"{type(exc).__name__}: {exc}"[:300]
    return identity
