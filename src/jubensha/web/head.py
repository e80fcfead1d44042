"""``HEAD`` for every page: answered as ``GET`` with the same status and headers and no
body. Link checkers, proxies and ``curl -I`` ask a page with ``HEAD``, and FastAPI's routes
answer only the methods they name (a ``GET`` page would be 405).

The body the app writes is dropped, and the answer ends with the headers: a page that keeps
streaming (a table's live events) ends there too, since the server reports the client gone
to an app still writing after the answer has ended."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HeadAsGet:
    """ASGI middleware: a ``HEAD`` request runs as ``GET``, and only its head is sent."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return
        ended = False

        async def head_only(message: Message) -> None:
            nonlocal ended
            if ended:
                return
            if message["type"] == "http.response.start":
                await send(message)
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                ended = True

        await self.app({**scope, "method": "GET"}, receive, head_only)
