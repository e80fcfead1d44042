"""Structured output: parse defensively, correct and retry a bounded number of times."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, Field

from jubensha.llm.base import Message, Request
from jubensha.llm.fake import ScriptedModel
from jubensha.llm.structured import (
    ParseFailure,
    StructuredOutputError,
    choice_schema,
    enum_model,
    extract_json,
    generate_object,
    json_schema_of,
    parse_reply,
)


class Vote(BaseModel):
    target: str
    confidence: int = Field(ge=0, le=10)


def _request(text: str = "Who did it? Pick one.") -> Request:
    return Request(messages=[Message(role="user", content=text)], purpose="vote")


@pytest.mark.parametrize("raw", [
    '{"target": "Mary", "confidence": 7}',
    'Sure! Here it is:\n```json\n{"target": "Mary", "confidence": 7}\n```\nHope it helps.',
    'My answer is {"target": "Mary", "confidence": 7} because of the knife.',
    "{'target': 'Mary', 'confidence': 7,}",
    '{"target": "Mary", "confidence": 7',
])
def test_valid_fenced_and_near_json_replies_parse(raw: str) -> None:
    assert parse_reply(raw, Vote) == Vote(target="Mary", confidence=7)


@pytest.mark.parametrize(("raw", "problem"), [
    ("", "empty"),
    ("I think it was the butler.", "no JSON object"),
    ('{"target": "Mary", "confidence": 70}', "confidence"),
])
def test_unusable_replies_say_why(raw: str, problem: str) -> None:
    with pytest.raises(ParseFailure, match=problem):
        parse_reply(raw, Vote)


def test_extract_json_never_evaluates_code() -> None:
    with pytest.raises(ParseFailure):
        extract_json("__import__('os').system('echo hacked')")


async def test_valid_reply_takes_one_attempt_and_sets_the_schema() -> None:
    model = ScriptedModel(replies={"vote": ['{"target": "Mary", "confidence": 3}']})
    result = await generate_object(model, _request(), Vote)
    assert result.value == Vote(target="Mary", confidence=3)
    assert result.attempts == 1
    assert model.requests[0].json_schema == Vote.model_json_schema()
    assert result.usage.completion_tokens > 0


async def test_garbage_then_valid_uses_a_corrective_retry() -> None:
    model = ScriptedModel(replies={"vote": ["no idea", '{"target": "Tom", "confidence": 1}']})
    result = await generate_object(model, _request(), Vote)
    assert result.value.target == "Tom"
    assert result.raws == ["no idea", '{"target": "Tom", "confidence": 1}']
    retry = model.requests[1]
    assert [m.role for m in retry.messages] == ["user", "assistant", "user"]
    assert retry.messages[1].text == "no idea"
    assert "JSON" in retry.messages[2].text and "no JSON object" in retry.messages[2].text


async def test_chinese_requests_get_a_chinese_correction() -> None:
    model = ScriptedModel(replies={"vote": ["不知道", '{"target": "林医生", "confidence": 1}']})
    await generate_object(model, _request("凶手是谁？"), Vote)
    assert "JSON" in model.requests[1].messages[-1].text
    assert "请重新回答" in model.requests[1].messages[-1].text


async def test_always_garbage_raises_with_every_raw_after_exactly_attempts() -> None:
    model = ScriptedModel(replies={"vote": lambda request: "the butler did it"})
    with pytest.raises(StructuredOutputError) as caught:
        await generate_object(model, _request(), Vote, attempts=4)
    assert len(model.requests) == 4
    assert caught.value.raws == ["the butler did it"] * 4
    assert len(caught.value.problems) == 4
    assert "'vote'" in str(caught.value)


async def test_attempts_must_be_positive() -> None:
    with pytest.raises(ValueError, match="attempts"):
        await generate_object(ScriptedModel(), _request(), Vote, attempts=0)


def test_choice_schema_puts_the_names_in_an_enum() -> None:
    schema = choice_schema(["Dr. Ling", "Mary", "Tom"], field_name="target", name="Vote")
    spec = schema.model_json_schema()
    assert spec["properties"]["target"]["enum"] == ["Dr. Ling", "Mary", "Tom"]
    assert list(spec["properties"]) == ["target", "reason"]
    assert schema.model_validate({"target": "Mary", "reason": "motive"}).target == "Mary"
    with pytest.raises(ParseFailure, match="target"):
        parse_reply('{"target": "Nobody", "reason": "x"}', schema)


def test_enum_model_supports_several_choices_and_chinese_names() -> None:
    schema = enum_model("Accuse", {"murderer": ["林医生", "玛丽"], "weapon": ["knife", "rope"]},
                        text_fields={"why": "one sentence"})
    value = parse_reply(json.dumps({"murderer": "玛丽", "weapon": "rope", "why": "动机"},
                                   ensure_ascii=False), schema)
    assert value.murderer == "玛丽"
    with pytest.raises(ValueError, match="no choices"):
        enum_model("Empty", {"target": []})


async def test_fake_answers_enum_schemas_validly_without_a_script() -> None:
    schema = choice_schema(["Dr. Ling", "Mary", "Tom"], field_name="target")
    for sample in range(5):
        request = _request().model_copy(update={"sample": sample})
        result = await generate_object(ScriptedModel(), request, schema)
        assert result.value.target in {"Dr. Ling", "Mary", "Tom"}
        assert result.attempts == 1


def test_the_same_choices_give_the_same_class_and_a_fresh_schema_each_time() -> None:
    first = choice_schema(["Li", "Wang"], field_name="target", name="Vote")
    assert choice_schema(["Li", "Wang"], field_name="target", name="Vote") is first
    assert choice_schema(["Li", "Zhao"], field_name="target", name="Vote") is not first
    schema = json_schema_of(first)
    schema["properties"]["target"]["enum"].append("Nobody")
    assert json_schema_of(first)["properties"]["target"]["enum"] == ["Li", "Wang"]
