"""The scripted fake: deterministic, schema-valid, talking like a player, and scriptable."""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any, Literal

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, create_model

from jubensha.llm.base import GenerateConfig, Message, ModelError, Request, Response
from jubensha.llm.fake import HashingEmbedder, ScriptedModel
from jubensha.llm.text import contains_cjk

SHEET = ("You are Dr. Ling, the family physician. You arrived at the manor at nine. "
         "You saw Mary near the study door.")


def _request(question: str = "Where were you at ten?", **update: Any) -> Request:
    request = Request(messages=[Message(role="system", content=SHEET),
                                Message(role="user", content=question)],
                      purpose="answer", seat="Dr. Ling")
    return request.model_copy(update=update)


async def test_same_request_same_reply_and_samples_differ() -> None:
    model = ScriptedModel(seed=3)
    first = await model.generate(_request())
    again = await ScriptedModel(seed=3).generate(_request())
    assert first.text == again.text
    heard = ("Mary said she was in the garden. Tom said he heard a shout. "
             "The host asked about the study. Where were you at ten?")
    samples = {(await model.generate(_request(heard, sample=i))).text for i in range(12)}
    assert len(samples) > 1


async def test_text_is_table_talk_of_its_kind_never_the_prompt_nor_the_sheet() -> None:
    reply = await ScriptedModel().generate(_request())
    assert reply.text and "Where were you at ten?" not in reply.text  # no echo of the prompt
    for seed in range(8):
        said = (await ScriptedModel(seed=seed).generate(_request(
            "You saw Mary near the study door. Reply with JSON: {\"text\": <words>}"))).text
        assert "You saw Mary" not in said and "JSON" not in said and "{" not in said
        assert ":" not in said and '"' not in said  # no label, no quoted speaker
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0
    assert reply.model == "scripted"


async def test_talk_follows_the_kind_the_language_and_the_speaker() -> None:
    intro = _request("Please introduce yourself.", purpose="introduction", seat="Mary")
    said = {(await ScriptedModel(seed=n).generate(intro)).text for n in range(12)}
    assert any("Mary" in text for text in said) and len(said) > 2
    asked = {(await ScriptedModel(seed=n).generate(_request(purpose="question"))).text
             for n in range(6)}
    assert all(text.endswith("?") for text in asked)
    chinese = _request("请回答：案发时你在哪里？", purpose="answer", seat="林默")
    text = (await ScriptedModel().generate(chinese)).text
    assert contains_cjk(text) and not re.search("[A-Za-z]", text)


async def test_object_strings_are_talk_of_their_field() -> None:
    class Ask(BaseModel):
        target: Literal["Mary", "Tom"]
        questions: list[str] = Field(min_length=2, max_length=2)
        reason: str

    request = _request("Choose one player and write 2 questions. Reply with JSON.",
                       json_schema=Ask.model_json_schema(), purpose="ask")
    asked = Ask.model_validate_json((await ScriptedModel().generate(request)).text)
    assert all(question.endswith("?") for question in asked.questions)
    assert "JSON" not in asked.reason and "Choose" not in " ".join(asked.questions)

    class Made(BaseModel):
        question: str
        source: str  # where in the text given the answer comes from: quoted, not talk

    text = "Write a question about this text. Tom lit the lamp at nine. The boat sank at three."
    made = Made.model_validate_json((await ScriptedModel().generate(_request(
        text, json_schema=Made.model_json_schema(), purpose="factual.generate"))).text)
    assert made.source and made.source in text and made.source not in SHEET


async def test_max_tokens_bounds_text_replies() -> None:
    request = _request(config=GenerateConfig(max_tokens=4))
    reply = await ScriptedModel().generate(request)
    assert len(reply.text.split()) <= 2


async def test_scripted_replies_per_purpose_then_invented() -> None:
    model = ScriptedModel(replies={
        "answer": ["first", {"target": "Mary"}, ModelError("server down")],
        "*": lambda request: f"wild {request.purpose}",
    })
    assert (await model.generate(_request())).text == "first"
    assert json.loads((await model.generate(_request())).text) == {"target": "Mary"}
    with pytest.raises(ModelError, match="server down"):
        await model.generate(_request())
    assert (await model.generate(_request())).text != "first"
    other = _request().model_copy(update={"purpose": "vote"})
    assert (await model.generate(other)).text == "wild vote"


async def test_scripted_callable_may_be_async_and_return_a_response() -> None:
    async def reply(request: Request) -> Response:
        return Response(text="canned", model="elsewhere")

    model = ScriptedModel(replies={"answer": reply})
    assert (await model.generate(_request())).model == "elsewhere"


async def test_simulated_latency() -> None:
    model = ScriptedModel(latency_s=0.05)
    start = time.perf_counter()
    await asyncio.gather(*(model.generate(_request(sample=i)) for i in range(4)))
    assert 0.05 <= time.perf_counter() - start < 0.5


async def test_embeddings_are_deterministic_and_similar_for_similar_texts() -> None:
    texts = ["the knife was in the study", "a knife lay in the study",
             "the garden was wet with rain", "书房里有一把刀", "书房里发现了刀"]
    first = np.array(await ScriptedModel().embed(texts))
    again = np.array(await HashingEmbedder().embed(texts))
    assert np.allclose(first, again)
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0)
    similarity = first @ first.T
    assert similarity[0, 1] > similarity[0, 2]
    assert similarity[3, 4] > similarity[3, 2]


# --- schema validity over many random pydantic schemas -------------------------------------

NAMES = st.text(alphabet="abcdefghij", min_size=1, max_size=6)


def _leaf() -> st.SearchStrategy[tuple[Any, Any]]:
    def bounded_int(low: int, span: int) -> tuple[Any, Any]:
        return (int, Field(ge=low, le=low + span))

    def bounded_float(low: float, span: float) -> tuple[Any, Any]:
        return (float, Field(gt=low, lt=low + span + 0.01))

    def sized_str(low: int, span: int) -> tuple[Any, Any]:
        return (str, Field(min_length=low, max_length=low + span))

    def enum(values: list[str]) -> tuple[Any, Any]:
        return (Literal[tuple(values)], ...)

    return st.one_of(
        st.just((str, ...)), st.just((bool, ...)), st.just((int, ...)),
        st.builds(bounded_int, st.integers(-50, 50), st.integers(0, 20)),
        st.builds(bounded_float, st.floats(-10, 10), st.floats(0, 5)),
        st.builds(sized_str, st.integers(0, 30), st.integers(0, 40)),
        st.builds(enum, st.lists(st.sampled_from(["Mary", "Tom", "Dr. Ling", "林医生"]),
                                 min_size=1, max_size=4, unique=True)),
    )


def _wrap(inner: tuple[Any, Any], how: str, low: int, span: int) -> tuple[Any, Any]:
    annotation = inner[0]
    if how == "list":
        return (list[annotation], Field(min_length=low, max_length=low + span))
    if how == "optional":
        return (annotation | None, None)
    return inner


def _fields() -> st.SearchStrategy[dict[str, tuple[Any, Any]]]:
    field = st.builds(_wrap, _leaf(), st.sampled_from(["plain", "list", "optional"]),
                      st.integers(0, 3), st.integers(0, 3))
    return st.dictionaries(NAMES, field, min_size=1, max_size=5)


@st.composite
def _schemas(draw: st.DrawFn) -> type[BaseModel]:
    inner = create_model("Inner", **draw(_fields()))
    fields: dict[str, Any] = draw(_fields())
    if draw(st.booleans()):
        fields["nested"] = (inner, ...)
    if draw(st.booleans()):
        fields["many"] = (list[inner], Field(min_length=1, max_length=2))
    return create_model("Outer", **fields)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=_schemas(), sample=st.integers(0, 1000))
def test_fake_objects_validate_against_random_schemas(schema: type[BaseModel],
                                                       sample: int) -> None:
    request = _request(json_schema=schema.model_json_schema(), sample=sample)
    reply = asyncio.run(ScriptedModel().generate(request))
    schema.model_validate_json(reply.text)


async def test_fake_handles_recursive_schemas() -> None:
    class Node(BaseModel):
        name: str
        children: list[Node] = []

    reply = await ScriptedModel().generate(_request(json_schema=Node.model_json_schema()))
    Node.model_validate_json(reply.text)
