"""What routes of several areas share: a number from a form, and the live stream of a
table's versions."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

from fastapi import Request
from fastapi.responses import Response

from jubensha.web.refused import Refused
from jubensha.web.streams import HeldStream, deadline, refused
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


def stream(tables: TableHost, table: LiveTable, request: Request) -> Response:
    """Server-sent events: the table's version each time it changes (and a keep-alive),
    until the game ends, the server stops (``TableHost.hang_up``) or the stream's time is
    up (``web.streams``: the page connects again); refused over the stream caps."""
    address = request.client.host if request.client else "?"
    slots = tables.streams
    why = slots.refusal(address, table.id)
    if why is not None:
        return refused(why)
    slots.take(address, table.id)

    async def versions() -> AsyncIterator[str]:
        version = -1
        started = changed = time.monotonic()
        while (left := deadline(started, changed)) > 0:
            newer = await table.wait(version, min(KEEPALIVE_S, left))
            if tables.closing:
                return
            if newer == version:
                yield ": keep-alive\n\n"
                continue
            version, changed = newer, time.monotonic()
            yield f"data: {version}\n\n"
            if table.ended:
                return

    return HeldStream(versions(), lambda: slots.give(address, table.id))
