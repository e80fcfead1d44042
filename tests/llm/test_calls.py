"""The call log: one record per call, tagged with seat and purpose, with parsed objects."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from jubensha.llm.base import Message, ModelError, Request
from jubensha.llm.calls import (
    NOT_A_CALL,
    CallLog,
    JsonlSink,
    MemorySink,
    SeatModel,
    is_note,
    read_calls,
)
from jubensha.llm.fake import ScriptedModel
from jubensha.llm.structured import StructuredOutputError, generate_object


class Vote(BaseModel):
    target: str


def _request(purpose: str = "") -> Request:
    return Request(messages=[Message(role="user", content="Who did it?")], purpose=purpose)


async def test_seat_model_tags_requests_and_writes_one_record_per_call() -> None:
    fake = ScriptedModel()
    sink = MemorySink()
    log = CallLog(sink)
    ling = log.seat(fake, "Dr. Ling", purpose="chat")
    mary = log.seat(fake, "Mary")
    await ling.generate(_request())
    await mary.generate(_request("answer"))
    assert [(r.index, r.seat, r.purpose) for r in sink.records] == [
        (0, "Dr. Ling", "chat"), (1, "Mary", "answer")]
    assert fake.requests[0].seat == "Dr. Ling" and fake.requests[0].purpose == "chat"
    record = sink.records[0]
    assert record.model == "scripted" and record.raw and record.usage.prompt_tokens > 0
    assert record.messages[0].text == "Who did it?" and record.parsed is None


async def test_structured_calls_record_raw_and_parsed_for_each_attempt() -> None:
    fake = ScriptedModel(replies={"vote": ["nonsense", '{"target": "Mary"}']})
    sink = MemorySink()
    model = SeatModel(fake, sink, seat="Tom")
    result = await generate_object(model, _request("vote"), Vote)
    assert result.value.target == "Mary"
    first, second = sink.records
    assert (first.attempt, first.raw, first.parsed) == (1, "nonsense", None)
    assert "no JSON object" in first.parse_error
    assert (second.attempt, second.parsed, second.parse_error) == (2, {"target": "Mary"}, None)
    assert second.json_schema == "Vote"


async def test_failed_calls_are_recorded_then_raised() -> None:
    fake = ScriptedModel(replies={"vote": [ModelError("rate limited for good")]})
    sink = MemorySink()
    with pytest.raises(ModelError):
        await generate_object(SeatModel(fake, sink, seat="Tom"), _request("vote"), Vote)
    assert sink.records[0].error == "ModelError: rate limited for good"
    assert sink.records[0].raw is None


async def test_garbage_structured_calls_log_every_attempt() -> None:
    fake = ScriptedModel(replies={"vote": lambda request: "garbage"})
    sink = MemorySink()
    with pytest.raises(StructuredOutputError):
        await generate_object(SeatModel(fake, sink), _request("vote"), Vote, attempts=2)
    assert [r.attempt for r in sink.records] == [1, 2]
    assert all(r.parse_error for r in sink.records)


async def test_with_purpose_shares_the_log(tmp_path: Path) -> None:
    log = CallLog(JsonlSink(tmp_path / "calls.jsonl"))
    seat = log.seat(ScriptedModel(), "Mary")
    await seat.with_purpose("introduce").generate(_request())
    await seat.generate(_request("ask"))
    records = read_calls(tmp_path / "calls.jsonl")
    assert [(r.index, r.purpose) for r in records] == [(0, "introduce"), (1, "ask")]


def test_read_calls_names_a_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    path.write_text('{"not": "a record"}\n')
    with pytest.raises(ValueError, match="calls.jsonl:1"):
        read_calls(path)


def test_a_note_is_labelled_a_note_and_older_folders_notes_still_read_as_notes() -> None:
    """An agent's note is no model call: it carries its own label, not the name of one
    of its writers ("guard" labelled a detective's plan as the speech guard's), and the
    label folders of earlier versions wrote is still read as a note."""
    assert NOT_A_CALL == "note"
    assert is_note(NOT_A_CALL) and is_note("guard")
    assert not is_note("scripted") and not is_note("gpt-4o-mini")
