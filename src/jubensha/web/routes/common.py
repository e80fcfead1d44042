"""What routes of several areas share: a number from a form, and the live stream of a
table's versions."""

from __future__ import annotations

from collections.abc import AsyncIterator

from fastapi import Request
from fastapi.responses import StreamingResponse

from jubensha.web.refused import Refused
from jubensha.web.tables import LiveTable, TableHost

KEEPALIVE_S = 15.0


def form_number(value: str) -> int:
    """An integer typed into a form; 422 naming the value when it is none."""
    try:
        return int(value)
    except ValueError:
        raise Refused(422, "error_not_number", value=value[:20]) from None


async def read_form(request: Request) -> dict[str, str]:
    """The posted form's fields as text (a file field becomes its name)."""
    return {key: str(value) for key, value in (await request.form()).items()}


def stream(tables: TableHost, table: LiveTable) -> StreamingResponse:
    """Server-sent events: the table's version each time it changes (and a keep-alive),
    until the game ends or the server stops (``TableHost.hang_up``)."""
    async def versions() -> AsyncIterator[str]:
        version = -1
        while True:
            newer = await table.wait(version, KEEPALIVE_S)
            if tables.closing:
                return
            if newer == version:
                yield ": keep-alive\n\n"
                continue
            version = newer
            yield f"data: {version}\n\n"
            if table.ended:
                return

    return StreamingResponse(versions(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store"})
