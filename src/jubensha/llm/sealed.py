"""Internal.

A seat's line to its model: what an agent holds to call its model, embed texts and
write notes, holding no reference to what answers.

The seat's model is logged (``llm.calls.SeatModel``): it leads to the call log, and the
log to the run folder (the script's copy with its truth, every seat's events). So an agent
is handed a ``SeatLine`` and the engine keeps the ``Exchange``, the other end. The line
holds a mailbox (a queue of requests and the write end of a pipe) and nothing else; the
exchange holds the pipe's read end, which the event loop watches, and the seat's model
and embedder. A request goes into the queue with a future the line made and a copy of the
caller's context (streaming and structured-output state travel in context variables); a
byte on the pipe wakes the exchange, which answers in that context and resolves the
future. Waking goes through the operating system, so nothing reachable from the line (its
attributes, its methods' closures, the objects those refer to: ``gc.get_referents``
followed to the end) leads to the exchange. An error comes back as a copy without its
traceback, whose frames would lead there too. A cancelled call is cancelled on the
other side by a message, not by a reference. The interpreter's global doors (frames,
``gc.get_objects``, the event loop's tasks) are another matter: see docs/isolation.md.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
from collections import deque
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from jubensha.llm.base import Embedder, Model, ModelError, Request, Response
from jubensha.llm.calls import write_note


@dataclass
class _Mailbox:
    """What both ends share: the queue, the pipe's write end, and whether it is open."""

    wake: int
    items: deque[tuple[str, Any, asyncio.Future[Any] | None, contextvars.Context | None]] = \
        field(default_factory=deque)
    open: bool = True


class SeatLine(Model):
    """An agent's model, embedder and note sink (see the module)."""

    def __init__(self, name: str, server: str, mailbox: _Mailbox) -> None:
        self.name = name
        self.server = server
        self._mailbox = mailbox

    def _post(self, kind: str, payload: Any, reply: asyncio.Future[Any] | None = None,
              context: contextvars.Context | None = None) -> None:
        if not self._mailbox.open:
            raise ModelError(f"seat line of {self.name!r} is closed: the game is over")
        self._mailbox.items.append((kind, payload, reply, context))
        os.write(self._mailbox.wake, b"\0")

    async def _call(self, kind: str, payload: Any) -> Any:
        reply = asyncio.get_running_loop().create_future()
        self._post(kind, payload, reply, contextvars.copy_context())
        try:
            return await reply
        except asyncio.CancelledError:
            if self._mailbox.open:
                self._post("cancel", None, reply)
            raise

    async def generate(self, request: Request) -> Response:
        answer: Response = await self._call("generate", request)
        return answer

    async def embed(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = await self._call("embed", list(texts))
        return vectors

    def note(self, *, purpose: str, shown: str, said: str, notes: Sequence[str] = ()) -> None:
        """A record in the seat's call log of something decided without a model call
        (``llm.calls.write_note``; the seat is the line's, whatever the agent says)."""
        self._post("note", {"purpose": purpose, "shown": shown, "said": said,
                            "notes": list(notes)})


class Exchange:
    """The engine's end of one seat's line: answers its requests with ``model`` and
    ``embedder`` on the running event loop, until ``close``."""

    def __init__(self, seat: str, model: Model | None, embedder: Embedder | None) -> None:
        self.seat = seat
        self.model = model
        self.embedder = embedder
        self._loop = asyncio.get_running_loop()
        self._read, wake = os.pipe()
        os.set_blocking(self._read, False)
        self._mailbox = _Mailbox(wake)
        self._running: dict[asyncio.Future[Any], asyncio.Task[Any]] = {}
        self.line = SeatLine(model.name if model else "", model.server if model else "",
                             self._mailbox)
        self._loop.add_reader(self._read, self._drain)

    def _drain(self) -> None:
        try:
            while os.read(self._read, 4096):
                pass
        except BlockingIOError:
            pass
        while self._mailbox.items:
            kind, payload, reply, context = self._mailbox.items.popleft()
            if kind == "note":
                write_note(self.model, seat=self.seat, **payload)
            elif kind == "cancel":
                task = self._running.pop(reply, None) if reply is not None else None
                if task is not None:
                    task.cancel()
            elif reply is not None:
                self._start(kind, payload, reply, context)

    def _start(self, kind: str, payload: Any, reply: asyncio.Future[Any],
               context: contextvars.Context | None) -> None:
        work: Coroutine[Any, Any, Any] = (self._generate(payload) if kind == "generate"
                                          else self._embed(payload))
        task = self._loop.create_task(work, context=context)
        self._running[reply] = task
        task.add_done_callback(partial(self._answer, reply))

    async def _generate(self, request: Request) -> Response:
        if self.model is None:
            raise ModelError(f"seat {self.seat!r} has no model")
        return await self.model.generate(request)

    async def _embed(self, texts: list[str]) -> list[list[float]]:
        if self.embedder is None:
            raise ModelError(f"seat {self.seat!r} has no embedder")
        return await self.embedder.embed(texts)

    def _answer(self, reply: asyncio.Future[Any], task: asyncio.Task[Any]) -> None:
        self._running.pop(reply, None)
        if reply.done():
            return
        if task.cancelled():
            reply.cancel()
        elif (error := task.exception()) is not None:
            reply.set_exception(bare(error))
        else:
            reply.set_result(task.result())

    def close(self) -> None:
        """Stop answering: the line refuses new calls, calls under way are cancelled."""
        if not self._mailbox.open:
            return
        self._mailbox.open = False
        self._loop.remove_reader(self._read)
        for task in self._running.values():
            task.cancel()
        self._running.clear()
        os.close(self._read)
        os.close(self._mailbox.wake)


def bare(error: BaseException) -> BaseException:
    """A copy of ``error`` of the same class (a budget's ``BudgetExceeded`` must still end
    the game) with its arguments and attributes but no traceback, cause or context: what an
    agent may hold (a traceback's frames lead to the model's, the log's and the engine's
    objects). Made without calling ``__init__``, whose signature is the class's own."""
    found = type(error).__new__(type(error))
    found.args = error.args
    found.__dict__.update(vars(error))
    found.__suppress_context__ = True
    return found
