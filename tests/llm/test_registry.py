"""Model names on the command line: the known forms build clients, others say what is valid."""

from __future__ import annotations

import pytest

from jubensha.llm.fake import ScriptedModel
from jubensha.llm.registry import (
    ModelOptions,
    ModelSpecError,
    parse_model_spec,
    validate_model_spec,
)


def test_scripted_spec_builds_the_fake_with_options() -> None:
    model = parse_model_spec("scripted", ModelOptions(seed=7, latency_s=0.01))
    assert isinstance(model, ScriptedModel)
    assert (model.seed, model.latency_s) == (7, 0.01)


@pytest.mark.parametrize("spec", ["gpt-4", "openai:", "replay:", "scripted:x", "", "llama"])
def test_unknown_specs_list_the_valid_forms(spec: str) -> None:
    with pytest.raises(ModelSpecError) as caught:
        parse_model_spec(spec)
    message = str(caught.value)
    for form in ("local", "openai:<model>", "scripted", "replay:<file>"):
        assert form in message


def test_openai_model_names_may_contain_colons() -> None:
    assert validate_model_spec(" openai:qwen2.5:7b ") == "openai:qwen2.5:7b"


def test_options_read_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    options = ModelOptions()
    assert (options.base_url, options.api_key) == ("http://127.0.0.1:11434/v1", "sk-test")
    assert ModelOptions(base_url="http://other/v1").base_url == "http://other/v1"


def test_local_spec_builds_the_embedded_model_lazily() -> None:
    pytest.importorskip("xllamacpp")
    from jubensha.llm.local import LocalModel

    model = parse_model_spec("local", ModelOptions(context_tokens=1024, temperature=0.2))
    assert isinstance(model, LocalModel)
    assert (model.name, model.context_tokens, model.temperature) == ("local", 1024, 0.2)
    with pytest.raises(ValueError, match="not found"):
        parse_model_spec("local:/nowhere/model.gguf")
