"""The OpenAI-compatible client against a local fake server: retries, fallbacks, images."""

from __future__ import annotations

import base64
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from jubensha.llm.base import ErrorKind, GenerateConfig, ImagePart, Message, Request, TextPart
from jubensha.llm.completion import read_completion
from jubensha.llm.openai_client import (
    OpenAIEmbedder,
    OpenAIError,
    OpenAIModel,
)
from jubensha.llm.registry import ModelOptions, ModelSpecError, parse_model_spec
from jubensha.llm.structured import generate_object
from tests.llm.fake_server import FakeOpenAIServer, completion, delayed, embeddings, error


class Vote(BaseModel):
    target: str


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        yield running


def _model(server: FakeOpenAIServer, **options: object) -> OpenAIModel:
    settings: dict = {"timeout_s": 5.0, "max_retries": 3, "backoff_s": 0.01, **options}
    return OpenAIModel("test-model", base_url=server.base_url, api_key="sk-test", **settings)


def _request(text: str = "Who did it?", **config: object) -> Request:
    return Request(messages=[Message(role="system", content="You are Mary."),
                             Message(role="user", content=text)],
                   config=GenerateConfig(**config))


async def test_text_call_sends_settings_and_reads_usage(server: FakeOpenAIServer) -> None:
    server.add(completion("It was Tom.", prompt_tokens=20, completion_tokens=4))
    model = _model(server, temperature=0.3)
    reply = await model.generate(_request(max_tokens=50, seed=9))
    assert reply.text == "It was Tom." and reply.model == "openai:test-model"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (20, 4)
    assert reply.usage.latency_s > 0 and reply.finish_reason == "stop"
    path, body = server.requests[0]
    assert path == "/v1/chat/completions"
    assert body["model"] == "test-model" and body["temperature"] == 0.3
    assert (body["max_tokens"], body["seed"]) == (50, 9)
    assert body["messages"][1] == {"role": "user", "content": "Who did it?"}
    await model.aclose()


@pytest.mark.parametrize("failure", [error(429, "slow down"), error(500), error(503)])
async def test_transient_errors_are_retried(server: FakeOpenAIServer, failure) -> None:
    server.add(failure, failure, completion("fine"))
    assert (await _model(server).generate(_request())).text == "fine"
    assert len(server.requests) == 3


async def test_rate_limit_retry_after_is_honoured(server: FakeOpenAIServer) -> None:
    server.add(error(429, headers={"Retry-After": "0.2"}), completion("fine"))
    reply = await _model(server, backoff_s=0.0).generate(_request())
    assert reply.usage.latency_s >= 0.2


async def test_timeouts_are_retried_then_fail(server: FakeOpenAIServer) -> None:
    server.add(delayed(completion("late"), 1.0), completion("on time"))
    model = _model(server, timeout_s=0.3, max_retries=1)
    assert (await model.generate(_request())).text == "on time"
    server.add(delayed(completion("late"), 1.0), delayed(completion("late"), 1.0))
    with pytest.raises(OpenAIError, match="Timeout"):
        await model.generate(_request())
    assert len(server.requests) == 4


async def test_client_errors_are_not_retried(server: FakeOpenAIServer) -> None:
    server.add(error(400, "bad request"), completion("never"))
    with pytest.raises(OpenAIError, match="rejected"):
        await _model(server).generate(_request())
    assert len(server.requests) == 1


async def test_exhausted_retries_raise_a_model_error(server: FakeOpenAIServer) -> None:
    server.add(*[error(500)] * 3)
    with pytest.raises(OpenAIError, match="InternalServerError"):
        await _model(server, max_retries=2).generate(_request())
    assert len(server.requests) == 3


async def test_json_schema_is_sent_as_response_format(server: FakeOpenAIServer) -> None:
    server.add(completion('{"target": "Tom"}'))
    result = await generate_object(_model(server), _request(), Vote)
    assert result.value.target == "Tom"
    response_format = server.requests[0][1]["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "Vote"
    assert response_format["json_schema"]["schema"] == Vote.model_json_schema()


async def test_rejected_schema_falls_back_and_is_remembered(server: FakeOpenAIServer) -> None:
    server.add(error(400, "response_format json_schema not supported"),
               error(400, "json_object not supported"), completion('{"target": "Mary"}'),
               completion('{"target": "Tom"}'))
    model = _model(server)
    first = await model.generate(_request(json_schema=None).model_copy(
        update={"json_schema": Vote.model_json_schema()}))
    assert first.text == '{"target": "Mary"}' and len(first.notes) == 2
    formats = [body.get("response_format", {}).get("type") for _, body in server.requests]
    assert formats == ["json_schema", "json_object", None]
    plain = server.requests[2][1]["messages"][-1]["content"]
    assert "JSON" in plain and '"target"' in plain
    result = await generate_object(model, _request(), Vote)
    assert result.value.target == "Tom"
    assert "response_format" not in server.requests[3][1]


async def test_local_images_become_data_urls(server: FakeOpenAIServer, tmp_path: Path) -> None:
    image = tmp_path / "clue.png"
    image.write_bytes(b"\x89PNG fake bytes")
    server.add(completion("A bloody knife."), completion("A bloody knife."))
    message = Message(role="user", content=[TextPart(text="What is on the card?"),
                                            ImagePart(url=str(image), caption="a knife")])
    await _model(server).generate(Request(messages=[message]))
    parts = server.requests[0][1]["messages"][0]["content"]
    encoded = base64.b64encode(image.read_bytes()).decode()
    assert parts[1] == {"type": "image_url",
                        "image_url": {"url": f"data:image/png;base64,{encoded}"}}
    await _model(server, vision=False).generate(Request(messages=[message]))
    assert server.requests[1][1]["messages"][0]["content"].endswith("[image: a knife]")
    with pytest.raises(OpenAIError, match="image file not found"):
        await _model(server).generate(Request(messages=[Message(
            role="user", content=[ImagePart(url=str(tmp_path / "missing.png"))])]))


async def test_embeddings_endpoint(server: FakeOpenAIServer) -> None:
    server.add(embeddings([[1.0, 0.0], [0.0, 1.0]]))
    embedder = OpenAIEmbedder("embed-small", base_url=server.base_url, api_key="k",
                              backoff_s=0.01)
    assert await embedder.embed(["a", "b"]) == [[1.0, 0.0], [0.0, 1.0]]
    path, body = server.requests[0]
    assert (path, body["model"], body["input"]) == ("/v1/embeddings", "embed-small", ["a", "b"])
    with pytest.raises(OpenAIError, match="no embedding model"):
        await _model(server).embed(["a"])


def test_spec_without_key_or_endpoint_is_a_clear_error() -> None:
    options = ModelOptions(api_key=None, base_url=None)
    with pytest.raises(ModelSpecError, match="OPENAI_API_KEY"):
        parse_model_spec("openai:gpt-4o-mini", options)
    model = parse_model_spec("openai:qwen2.5:7b", ModelOptions(base_url="http://127.0.0.1:9/v1",
                                                               api_key=None))
    assert isinstance(model, OpenAIModel) and model.model == "qwen2.5:7b"


def test_a_completion_body_is_read_and_a_foreign_one_is_a_retryable_error() -> None:
    body = {"choices": [{"message": {"content": "Mary."}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 2}}
    assert read_completion(body) == ("Mary.", "stop", 9, 2, None, None, None)
    named = read_completion({**body, "model": "gpt-4o-mini-2024-07-18"})
    assert named is not None and named.model == "gpt-4o-mini-2024-07-18"  # what it ran
    assert read_completion({**body, "model": {"x": 1}}).model is None  # type: ignore[union-attr]
    assert read_completion({"choices": []}) is None
    with pytest.raises(ValueError, match="not a JSON object"):
        read_completion(["Mary."])


async def test_cached_prompt_tokens_reach_the_call_log(server: FakeOpenAIServer) -> None:
    """OpenAI's prompt_tokens_details.cached_tokens (also vLLM's and llama.cpp's) is kept;
    a server that does not say leaves it unknown."""
    from jubensha.llm.calls import CallLog

    cached = completion("It was Tom.", prompt_tokens=2000)
    assert cached.body is not None
    cached.body["usage"]["prompt_tokens_details"] = {"cached_tokens": 1920}
    server.add(cached)
    server.add(completion("Still Tom."))
    log = CallLog()
    seat = log.seat(_model(server), "Mary")
    await seat.generate(_request())
    await seat.generate(_request())
    first, second = log.sink.records
    assert (first.usage.prompt_tokens, first.usage.cached_tokens) == (2000, 1920)
    assert second.usage.cached_tokens is None
    assert '"cached_tokens":1920' in first.model_dump_json()
    assert (first.usage + second.usage).cached_tokens == 1920


async def test_a_refused_connection_is_not_retried_and_says_so() -> None:
    """Nothing listens on the port: no retry could help, so the one error comes at once
    and is fatal (a game stops on it, docs/playing.md)."""
    with socket.socket() as probe:  # a port that was free a moment ago
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = OpenAIModel("test-model", base_url=f"http://127.0.0.1:{port}/v1", api_key="sk",
                        max_retries=4, backoff_s=0.01)
    tries = 0
    complete = model._complete

    async def counted(body: dict) -> object:
        nonlocal tries
        tries += 1
        return await complete(body)

    model._complete = counted  # type: ignore[method-assign]
    with pytest.raises(OpenAIError, match="refused|Connect call failed") as raised:
        await model.generate(_request())
    assert tries == 1 and raised.value.kind is ErrorKind.DEAD
    await model.aclose()
