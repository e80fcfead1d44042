"""How many live-update streams the server holds, for whom, and for how long.

Every open page (a seat, a spectator, the host) holds one connection for its table's
server-sent events. A spectator link anyone may open, so without bounds a few addresses
opening streams they never read filled the server's connection cap and locked everyone
else out. Now:

- ``MAX_STREAMS`` streams at once, well below the connection cap
  (``serverlimits.MAX_CONNECTIONS``): pages, forms and the lobby always find room;
- ``MAX_PER_ADDRESS`` from one address (a browser opens at most six connections to a
  server anyway) and ``MAX_PER_TABLE`` for one table;
- a stream ends after ``IDLE_S`` without news, and after ``MAX_S`` whatever happens; a
  page's ``EventSource`` simply connects again, a client that stopped reading does not;
- a stream over a cap is refused at once (``429`` with ``Retry-After``), and the page
  tries again a little later.

A client that stops reading while news keeps coming is dropped by the connection itself
(``serverlimits``: writes paused for ``STALL_S``).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import AsyncIterator, Callable

from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.types import Receive, Scope, Send

MAX_STREAMS = 300
MAX_PER_ADDRESS = 16
MAX_PER_TABLE = 100
IDLE_S = 60.0
MAX_S = 300.0
RETRY_AFTER_S = 10


class StreamSlots:
    """The streams open now, by address and by table."""

    def __init__(self) -> None:
        self.total = 0
        self.addresses: Counter[str] = Counter()
        self.tables: Counter[str] = Counter()

    def refusal(self, address: str, table: str) -> str | None:
        """Why one more stream from ``address`` for ``table`` is refused (None: it is not)."""
        if self.total >= MAX_STREAMS:
            return f"{MAX_STREAMS} live streams are open, the most this server holds"
        if self.addresses[address] >= MAX_PER_ADDRESS:
            return f"{MAX_PER_ADDRESS} live streams are open from this address"
        if self.tables[table] >= MAX_PER_TABLE:
            return f"{MAX_PER_TABLE} live streams are open for this table"
        return None

    def take(self, address: str, table: str) -> None:
        self.total += 1
        self.addresses[address] += 1
        self.tables[table] += 1

    def give(self, address: str, table: str) -> None:
        self.total -= 1
        for counter, key in ((self.addresses, address), (self.tables, table)):
            counter[key] -= 1
            if counter[key] <= 0:
                del counter[key]


class HeldStream(StreamingResponse):
    """A stream that gives its slot back however it ends (finished, cut off, never read)."""

    def __init__(self, body: AsyncIterator[str], release: Callable[[], None]) -> None:
        super().__init__(body, media_type="text/event-stream",
                         headers={"Cache-Control": "no-store"})
        self.release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.release()


def refused(why: str) -> Response:
    return PlainTextResponse(f"refused: {why}; try again later\n", status_code=429,
                             headers={"Retry-After": str(RETRY_AFTER_S)})


def deadline(started: float, changed: float) -> float:
    """Seconds this stream may still wait for news (at most 0 when it should end)."""
    now = time.monotonic()
    return min(IDLE_S - (now - changed), MAX_S - (now - started))
