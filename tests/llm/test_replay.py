"""Record a session, replay it exactly: samples stay distinct, failures replay as failures."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from jubensha.llm.base import GenerateConfig, Message, ModelError, Request
from jubensha.llm.fake import ScriptedModel
from jubensha.llm.registry import ModelSpecError, parse_model_spec
from jubensha.llm.replay import CassetteError, RecordingModel, ReplayModel
from jubensha.llm.structured import generate_object


class Vote(BaseModel):
    target: str


HEARD = ("Tom said he dined at eight. Mary heard a scream at ten. Someone saw a light in the "
         "study. Where were you?")


def _ask(seat: str, purpose: str, sample: int = 0, text: str = HEARD) -> Request:
    sheet = (f"You are {seat}. You dined at eight. You heard a scream at ten. "
             "You saw a light in the study. You own a red scarf.")
    return Request(messages=[Message(role="system", content=sheet),
                             Message(role="user", content=text)], seat=seat, purpose=purpose,
                   sample=sample, config=GenerateConfig(temperature=0.9))


async def _session(model) -> list[str]:
    """A small session: the same question from two seats, samples, a structured call."""
    replies = []
    for seat in ("Mary", "Tom"):
        for sample in range(3):
            replies.append((await model.generate(_ask(seat, "answer", sample))).text)
    vote = await generate_object(model, _ask("Mary", "vote", text="Vote now."), Vote)
    replies.append(vote.value.target)
    return replies


async def test_replay_reproduces_a_recorded_session_exactly(tmp_path: Path) -> None:
    cassette = tmp_path / "session.jsonl"
    live = ScriptedModel(seed=5, replies={"vote": ["not json", '{"target": "Tom"}']})
    recorded = await _session(RecordingModel(live, cassette))
    replay = parse_model_spec(f"replay:{cassette}")
    assert isinstance(replay, ReplayModel)
    assert await _session(replay) == recorded
    assert len(set(recorded[:3])) > 1, "samples at temperature > 0 must stay distinct"
    reply = await replay.generate(_ask("Mary", "answer", 1))
    assert reply.origin == "replay"


async def test_seats_asking_alike_get_their_own_replies(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    live = ScriptedModel(replies={"answer": ["from Mary", "from Tom"]})
    recorder = RecordingModel(live, cassette)
    await recorder.generate(_ask("Mary", "answer"))
    await recorder.generate(_ask("Tom", "answer"))
    replay = ReplayModel.load(cassette)
    assert (await replay.generate(_ask("Tom", "answer"))).text == "from Tom"
    assert (await replay.generate(_ask("Mary", "answer"))).text == "from Mary"


async def test_repeated_requests_replay_in_order_then_repeat_the_last(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    recorder = RecordingModel(ScriptedModel(replies={"answer": ["one", "two"]}), cassette)
    for _ in range(2):
        await recorder.generate(_ask("Mary", "answer"))
    replay = ReplayModel.load(cassette)
    texts = [(await replay.generate(_ask("Mary", "answer"))).text for _ in range(3)]
    assert texts == ["one", "two", "two"]


async def test_recorded_failures_replay_as_failures(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    recorder = RecordingModel(ScriptedModel(replies={"answer": [ModelError("overloaded")]}),
                              cassette)
    with pytest.raises(ModelError):
        await recorder.generate(_ask("Mary", "answer"))
    with pytest.raises(ModelError, match="overloaded"):
        await ReplayModel.load(cassette).generate(_ask("Mary", "answer"))


async def test_a_missing_key_names_purpose_and_seat(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    await RecordingModel(ScriptedModel(), cassette).generate(_ask("Mary", "answer"))
    with pytest.raises(CassetteError, match="'vote'.*'Tom'.*sample 2"):
        await ReplayModel.load(cassette).generate(_ask("Tom", "vote", 2))


def test_bad_cassettes_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ModelSpecError, match="cassette not found"):
        parse_model_spec(f"replay:{tmp_path / 'none.jsonl'}")
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"key": "k"}\n')
    with pytest.raises(ModelSpecError, match="broken.jsonl:1: request"):
        parse_model_spec(f"replay:{broken}")
