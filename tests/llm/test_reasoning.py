"""A reasoning model's thoughts stay private: ``<think>`` (``<reasoning>``, ``<thinking>``)
blocks and the ``reasoning_content`` field never reach speech, drafts or the transcript;
the call log keeps them as the call's ``reasoning``. A server that answers a streamed
request with one plain JSON body is read as that body (it used to give empty speeches),
and a body nested past the parser's depth is a model error, not a ``RecursionError``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from jubensha.agents.registry import make_agent
from jubensha.engine import Spoke
from jubensha.engine.game import Game, Seat
from jubensha.engine.procedure import find_procedure
from jubensha.llm import ScriptedModel
from jubensha.llm.base import GenerateConfig, Message, ModelError, Request, streaming
from jubensha.llm.calls import CallLog, MemorySink
from jubensha.llm.openai_client import OpenAIModel
from jubensha.llm.reasoning import split_reasoning, visible_draft
from jubensha.scripts.bundled import find_script
from tests.llm.fake_server import FakeOpenAIServer, Reply, completion

THOUGHT = "I am the killer and I must hide the will."


def test_split_reasoning_takes_every_form_of_block_out() -> None:
    assert split_reasoning(f"<think>{THOUGHT}</think> Good evening.") == (
        "Good evening.", THOUGHT)
    assert split_reasoning(f"<REASONING>\n{THOUGHT}\n</REASONING>\nHi.") == ("Hi.", THOUGHT)
    assert split_reasoning(f"A. <thinking>{THOUGHT}</thinking> B.") == ("A.  B.", THOUGHT)
    assert split_reasoning(f"{THOUGHT}</think>\n\nGood evening.") == ("Good evening.", THOUGHT)
    assert split_reasoning(f"Good evening. <think>{THOUGHT}") == ("Good evening.", THOUGHT)
    plain = "  I was in the <b>parlour</b> at 8 < 9.  "
    assert split_reasoning(plain) == (plain, "")


def test_a_draft_never_shows_a_thought_or_a_tag_being_written() -> None:
    reply = f"<think>{THOUGHT}</think> Good evening, all."
    drafts = [visible_draft(reply[:end]) for end in range(len(reply) + 1)]
    assert all("killer" not in d and "<" not in d and "think" not in d for d in drafts)
    assert drafts[-1] == "Good evening, all."


def reasoning_reply(text: str) -> Reply:
    reply = completion(f"<think>{THOUGHT}</think> {text}")
    assert reply.body is not None
    reply.body["choices"][0]["message"]["reasoning_content"] = "Field thought."
    return reply


def ask(model: OpenAIModel, grown: list[str] | None = None) -> Any:
    request = Request(messages=[Message(role="user", content="Introduce yourself.")],
                      purpose="speak", config=GenerateConfig())

    async def call() -> Any:
        try:
            if grown is None:
                return await model.generate(request)
            with streaming(grown.append):
                return await model.generate(request)
        finally:
            await model.aclose()

    return asyncio.run(call())


def test_the_client_keeps_reasoning_out_of_the_text_streamed_or_not() -> None:
    for streamed in (False, True):
        with FakeOpenAIServer(lambda _: reasoning_reply("Good evening.")) as server:
            grown: list[str] = []
            reply = ask(OpenAIModel("r1", base_url=server.base_url, max_retries=0),
                        grown if streamed else None)
        assert reply.text == "Good evening."
        assert reply.reasoning is not None and THOUGHT in reply.reasoning
        assert "Field thought." in reply.reasoning
        assert not streamed or (grown and all("killer" not in g and "Field" not in g
                                               for g in grown)), grown


def test_a_plain_json_body_to_a_streamed_request_is_read() -> None:
    plain = Reply(body=completion("Good evening, I keep the lamp.").body, stream=False)
    with FakeOpenAIServer(lambda _: plain) as server:
        grown: list[str] = []
        reply = ask(OpenAIModel("m", base_url=server.base_url, max_retries=0), grown)
    assert server.requests[0][1]["stream"] is True
    assert reply.text == "Good evening, I keep the lamp."
    assert grown[-1] == reply.text


def test_a_reply_nested_past_the_parsers_depth_is_a_model_error() -> None:
    nested = Reply(raw=b"[" * 100_000 + b"]" * 100_000, stream=False)
    for streamed in (False, True):
        with FakeOpenAIServer(lambda _: nested) as server:
            try:
                ask(OpenAIModel("m", base_url=server.base_url, max_retries=0),
                    [] if streamed else None)
            except ModelError as error:
                assert "nested too deeply" in str(error)
            else:
                raise AssertionError("a nested body was read")


def test_the_call_log_keeps_the_reasoning_apart_from_the_raw_reply() -> None:
    sink = MemorySink()
    model = ScriptedModel()
    model.script("speak", [f"<think>{THOUGHT}</think>Good evening."])
    seat = CallLog(sink).seat(model, "Agnes Pike")
    reply = asyncio.run(seat.generate(Request(
        messages=[Message(role="user", content="Talk.")], purpose="speak")))
    [record] = sink.records
    assert reply.text == record.raw == "Good evening."
    assert record.reasoning == THOUGHT


def thinking_server() -> FakeOpenAIServer:
    """Answers as the scripted fake would, every text reply led by a thought."""
    fake = ScriptedModel()

    def respond(body: dict[str, Any]) -> Reply:
        schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema")
        request = Request(messages=[Message(role=m["role"], content=m["content"])
                                    for m in body["messages"]], json_schema=schema)
        text = asyncio.run(fake.generate(request)).text
        return completion(text if schema else f"<think>{THOUGHT}</think> {text}")

    return FakeOpenAIServer(respond)


def test_a_game_against_a_thinking_model_shows_no_thought_anywhere() -> None:
    script = find_script("lighthouse-keeper")
    sink = MemorySink()
    drafts: list[str] = []
    with thinking_server() as server:
        model = OpenAIModel("qwen3", base_url=server.base_url, max_retries=0)
        log = CallLog(sink)
        game = Game(script, find_procedure("demo"),
                    {n: Seat(make_agent("naive"), model=log.seat(model, n))
                     for n in script.names}, seed=0,
                    on_draft=lambda draft: drafts.append(draft.text))
        asyncio.run(game.run())
        asyncio.run(model.aclose())
    spoken = [e for e in game.table.events if isinstance(e, Spoke)]
    assert spoken and drafts
    events = json.dumps([e.model_dump(mode="json") for e in game.table.events])
    assert "killer" not in events and "<think>" not in events
    assert not [d for d in drafts if "killer" in d or "<think" in d]
    thoughts = [r for r in sink.records if r.reasoning]
    assert thoughts and all(r.reasoning == THOUGHT and "killer" not in (r.raw or "")
                            for r in thoughts)
