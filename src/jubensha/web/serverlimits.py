"""How much of the server one client can hold, and how a client that leaves is logged.

uvicorn on its own keeps a connection whose request never ends open for good (a client
sending its head or body a byte at a time), and logs a traceback for every client that
leaves mid-body. ``serve`` runs it with:

- ``READ_TIMEOUT_S``: a request's head and body must have arrived this long after the
  connection opened (or the previous response ended); a slower one is closed;
- ``MAX_PER_ADDRESS`` open connections from one address (a proxy named with ``--proxy``
  excepted): more are closed as soon as they open;
- ``MAX_CONNECTIONS`` open connections: a new one beyond closes the connection that has
  been sending its request longest (so slow clients cannot lock a person out), or, when
  every connection is being answered (open pages hold one each for their live updates),
  is closed itself. So at most ``MAX_CONNECTIONS`` idle or slow connections are held,
  each for at most ``READ_TIMEOUT_S``;
- ``STALL_S``: a connection whose answer the client stopped reading (the server's writes
  paused because nothing drains them) is closed after this long;
- when the server stops, connections still sending their request are closed at once;
- uvicorn's own limits: idle keep-alive connections closed after ``KEEP_ALIVE_S``, a
  request head of at most ``MAX_HEAD_BYTES``, at most ``MAX_CONNECTIONS`` requests being
  answered at once (then ``503``), a body of at most ``MAX_BODY_BYTES`` (``413``);
- forwarded headers (``X-Forwarded-For``, ``-Proto``) trusted only from the proxies given
  with ``--proxy``: otherwise any local program could claim to be any address, and get
  round the per-address password throttle;
- one quiet log line, at most every ``QUIET_S`` per kind with a count, for clients that
  left or were too slow, instead of a traceback each.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from typing import Any, ClassVar

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)
READ_TIMEOUT_S = 10.0
KEEP_ALIVE_S = 5
MAX_CONNECTIONS = 500
MAX_PER_ADDRESS = 64
MAX_HEAD_BYTES = 16 * 1024
MAX_BODY_BYTES = 1_000_000
"""The largest form a page sends is an answer of 4,000 characters."""
QUIET_S = 10.0
STALL_S = 10.0


class QuietLog:
    """One line per kind of event now and then: the first at once, then how many more
    came, at most every ``every_s``."""

    def __init__(self, every_s: float = QUIET_S) -> None:
        self.every_s = every_s
        self.counts: Counter[str] = Counter()
        self.last: dict[str, float] = {}

    def note(self, kind: str, example: str) -> None:
        self.counts[kind] += 1
        now = time.monotonic()
        if now - self.last.get(kind, -self.every_s) >= self.every_s:
            count, self.counts[kind], self.last[kind] = self.counts[kind], 0, now
            log.warning("jubensha: %s: %d (e.g. %s); more are counted, not logged, for %.0f s",
                        kind, count, example, self.every_s)


quiet = QuietLog()


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a read deadline and caps on open connections."""

    trusted: ClassVar[frozenset[str]] = frozenset()
    """Addresses exempt from the per-address cap (the configured proxies)."""
    deadline: asyncio.TimerHandle | None = None
    reading_since = 0.0
    stall: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        address = _address(self) or ""
        mine = sum(_address(other) == address for other in self.connections)
        if address not in self.trusted and mine > MAX_PER_ADDRESS:
            self._refuse(f"connections refused over the cap of {MAX_PER_ADDRESS} per address")
            return
        if len(self.connections) > MAX_CONNECTIONS:
            slowest = min((other for other in self.connections
                           if isinstance(other, BoundedH11Protocol) and other is not self
                           and other.deadline is not None),
                          key=lambda other: other.reading_since, default=None)
            if slowest is None:
                self._refuse(f"connections refused over the cap of {MAX_CONNECTIONS} open")
                return
            slowest._refuse(f"connections still sending their request closed to make room "
                            f"for a new one (over {MAX_CONNECTIONS} open)")
        self._arm()

    def shutdown(self) -> None:
        """The server stops: a request still arriving is not waited for."""
        if self._reading():
            self.transport.close()
        else:
            super().shutdown()

    def _refuse(self, why: str) -> None:
        quiet.note(why, _address(self) or "?")
        self._disarm()
        self.transport.close()

    def handle_events(self) -> None:
        super().handle_events()
        if not self._reading():
            self._disarm()  # the request is whole: the app answers at its own pace

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self._reading():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._unstall()
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        """The client reads nothing of what it is sent: it has ``STALL_S`` to start again."""
        super().pause_writing()
        if self.stall is None:
            self.stall = self.loop.call_later(STALL_S, self._stalled)

    def resume_writing(self) -> None:
        self._unstall()
        super().resume_writing()

    def _unstall(self) -> None:
        if self.stall is not None:
            self.stall.cancel()
            self.stall = None

    def _stalled(self) -> None:
        self.stall = None
        if not self.transport.is_closing():
            quiet.note(f"connections closed whose client read nothing for {STALL_S:.0f} s",
                       _address(self) or "?")
            self.transport.abort()  # close() would wait for the buffer to drain: never

    def _reading(self) -> bool:
        """Whether the server waits for a request, or for the rest of one."""
        cycle = self.cycle
        return cycle is None or cycle.response_complete or cycle.more_body

    def _arm(self) -> None:
        self._disarm()
        self.reading_since = self.loop.time()
        self.deadline = self.loop.call_later(READ_TIMEOUT_S, self._too_slow)

    def _disarm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def _too_slow(self) -> None:
        self.deadline = None
        if self._reading() and not self.transport.is_closing():
            quiet.note(f"connections closed with no whole request after {READ_TIMEOUT_S:.0f} s",
                       self.client[0] if self.client else "?")
            self.transport.close()


def _address(connection: object) -> str | None:
    client = getattr(connection, "client", None)
    return str(client[0]) if client else None


def uvicorn_options(proxies: list[str]) -> dict[str, Any]:
    """The ``uvicorn.Config`` options for the limits above; forwarded headers are read
    only from ``proxies`` (addresses or networks)."""
    protocol = type("ServerProtocol", (BoundedH11Protocol,),
                    {"trusted": frozenset(proxies)})
    return {"http": protocol, "timeout_keep_alive": KEEP_ALIVE_S,
            "limit_concurrency": MAX_CONNECTIONS + 1,
            "h11_max_incomplete_event_size": MAX_HEAD_BYTES,
            "proxy_headers": bool(proxies), "forwarded_allow_ips": proxies or None}


async def client_left(request: Request, _: Exception) -> Response:
    """A client that went away before its request was whole: one quiet line, no
    traceback; the answer goes nowhere."""
    where = request.client.host if request.client else "?"
    quiet.note("clients that left before their request was whole",
               f"{request.method} {request.url.path} from {where}")
    return PlainTextResponse("", status_code=400)


class BodyLimit:
    """ASGI middleware: a request body over ``MAX_BODY_BYTES`` is refused (``413``) when
    its length is declared, and cut off (as if the client had left) when it is not."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length", b"0")
        if not declared.isdigit() or int(declared) > self.limit:
            await PlainTextResponse(f"refused: a request body of at most {self.limit:,} "
                                    "bytes\n", status_code=413)(scope, receive, send)
            return
        seen = 0

        async def bounded() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            return {"type": "http.disconnect"} if seen > self.limit else message

        await self.app(scope, bounded, send)


def install(app: Starlette) -> None:
    """The app-side limits: the body cap and the quiet line for clients that left. Call it
    before adding the request guard, so that the guard's headers are on these answers too."""
    app.add_middleware(BodyLimit)
    app.add_exception_handler(ClientDisconnect, client_left)
