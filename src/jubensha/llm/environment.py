"""Internal.

The environment variable that names the default model, apart from the modules that read
it (the model registry, the catalog of local models and the command line) so that none of
them imports another for it."""

from __future__ import annotations

MODEL_ENV = "JUBENSHA_MODEL"
"""Names the default model where a command line gives none (e.g. local:qwen2.5-coder-1.5b;
``llm.catalog.default_play_model``)."""
