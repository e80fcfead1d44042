"""A seat's line: it calls the seat's logged model, embeds and writes notes, and nothing
reachable from it (gc.get_referents followed to the end) is the model, the log or its
sink; errors come back without the traceback that would lead there."""

from __future__ import annotations

import asyncio
import gc
import os
from typing import Any

import pytest

from jubensha.llm.base import Message, Model, ModelError, Request, Response, streaming
from jubensha.llm.calls import NOT_A_CALL, CallLog, MemorySink
from jubensha.llm.fake import ScriptedModel
from jubensha.llm.sealed import Exchange


def reachable(root: Any) -> list[Any]:
    """Every object reachable from ``root`` by references, stopping at modules and
    classes (global doors) and at the event loop (every coroutine reaches it)."""
    seen: dict[int, Any] = {}
    stack = [root]
    while stack:
        item = stack.pop()
        if id(item) in seen or isinstance(item, type | type(os)
                                          | asyncio.AbstractEventLoop):
            continue
        seen[id(item)] = item
        stack.extend(gc.get_referents(item))
    return list(seen.values())


def ask(text: str, purpose: str = "introduction") -> Request:
    return Request(messages=[Message(role="user", content=text)], purpose=purpose)


class Broken(Model):
    name = "broken"

    async def generate(self, request: Request) -> Response:
        secret = {"run folder": "/runs/secret"}  # a local of the model's frame
        raise ModelError(f"down ({len(secret)})")


class Slow(Model):
    name = "slow"

    def __init__(self) -> None:
        self.cancelled = asyncio.Event()

    async def generate(self, request: Request) -> Response:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return Response(text="late", model=self.name)


async def test_the_line_calls_the_logged_model_and_leads_nowhere() -> None:
    sink = MemorySink()
    logged = CallLog(sink).seat(ScriptedModel(replies={"introduction": ["I am Ann."]}), "Ann")
    exchange = Exchange("Ann", logged, ScriptedModel())
    line = exchange.line
    drafts: list[str] = []
    with streaming(drafts.append):
        answer = await line.generate(ask("Introduce yourself."))
    vectors = await line.embed(["a clue"])
    line.note(purpose="detective.plan", shown="cover", said="plan")
    await asyncio.sleep(0.01)
    exchange.close()
    assert answer.text == "I am Ann." and drafts and drafts[-1] == "I am Ann."
    assert len(vectors) == 1 and vectors[0]
    assert [(r.purpose, r.seat, r.model) for r in sink.records] == [
        ("introduction", "Ann", "scripted"), ("detective.plan", "Ann", NOT_A_CALL)]
    found = reachable(line)
    assert not any(item is logged or item is exchange or item is sink
                   or item is logged.log for item in found)
    assert not any(isinstance(item, CallLog | MemorySink | Exchange) for item in found)


async def test_an_error_comes_back_without_the_frames_that_raised_it() -> None:
    exchange = Exchange("Ann", Broken(), None)
    with pytest.raises(ModelError, match="down") as raised:
        await exchange.line.generate(ask("Hello"))
    exchange.close()
    frames, tb = [], raised.value.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    assert frames  # the agent's own frames and the line's, not the model's nor the engine's
    assert not any("secret" in frame.f_locals or isinstance(frame.f_locals.get("self"),
                                                            Broken | Exchange)
                   for frame in frames)
    assert raised.value.__cause__ is None and raised.value.__context__ is None
    assert not any(isinstance(item, dict) and "run folder" in item
                   for item in reachable(raised.value))


class Abort(BaseException):
    """An error that is not an ``Exception``, with a signature of its own."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class Aborting(Model):
    name = "aborting"

    async def generate(self, request: Request) -> Response:
        raise Abort("budget", "spent")


async def test_an_error_keeps_its_class_and_attributes() -> None:
    exchange = Exchange("Ann", Aborting(), None)
    with pytest.raises(Abort) as raised:
        await exchange.line.generate(ask("Hello"))
    exchange.close()
    assert (raised.value.kind, raised.value.args) == ("budget", ("spent",))


async def test_a_cancelled_call_is_cancelled_on_the_other_side() -> None:
    slow = Slow()
    exchange = Exchange("Ann", slow, None)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(exchange.line.generate(ask("Hello")), 0.05)
    await asyncio.wait_for(slow.cancelled.wait(), 5)
    exchange.close()


async def test_a_closed_line_refuses_calls() -> None:
    exchange = Exchange("Ann", ScriptedModel(), None)
    exchange.close()
    with pytest.raises(ModelError, match="closed"):
        await exchange.line.generate(ask("Hello"))
