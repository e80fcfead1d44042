"""A spectator's page: public events and the agents' suspicion while the game runs, the
omniscient review once it has ended."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from jubensha.web.access import HouseDep, Watched
from jubensha.web.pages import json_response
from jubensha.web.routes.common import stream
from jubensha.web.routes.review import table_review
from jubensha.web.views import watch_live, watch_values

router = APIRouter(prefix="/watch/{token}")


@router.get("", response_class=HTMLResponse)
async def watch(token: str, house: HouseDep, table: Watched) -> Response:
    return house.pages.page("watch.html", table.language, started=house.tables.started,
                            **watch_values(table, token))


@router.get("/live")
async def watch_update(token: str, house: HouseDep, table: Watched,
                       after: int = 0) -> Response:
    return json_response(watch_live(house.pages, table, token, after, house.tables.started))


@router.get("/stream")
async def watch_stream(request: Request, house: HouseDep, table: Watched) -> Response:
    return stream(house.tables, table, request)


@router.get("/review", response_class=HTMLResponse)
async def watch_review(token: str, house: HouseDep, table: Watched) -> Response:
    return await table_review(house, table, back=f"/watch/{token}")
