"""A table's host page: the invite links, the roster, and removing a person from a seat."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from jubensha.web.access import HostTable, HouseDep, require_host
from jubensha.web.pages import json_response
from jubensha.web.routes.common import stream
from jubensha.web.views import host_live, host_values

router = APIRouter(prefix="/host/{token}", dependencies=[Depends(require_host)])


def _base(request: Request) -> str:
    return str(request.base_url).rstrip("/")


@router.get("", response_class=HTMLResponse)
async def host_page(request: Request, house: HouseDep, table: HostTable) -> Response:
    return house.pages.page("host.html", table.language, started=house.tables.started,
                            review=house.review_path(table),
                            **host_values(table, _base(request)))


@router.get("/live")
async def host_update(request: Request, house: HouseDep, table: HostTable) -> Response:
    return json_response(host_live(house.pages, table, _base(request), house.tables.started))


@router.get("/stream")
async def host_stream(request: Request, house: HouseDep, table: HostTable) -> Response:
    return stream(house.tables, table, request)


@router.post("/remove")
async def remove_seat(token: str, house: HouseDep, table: HostTable, seat: str = Form(...),
                      confirm: str = Form("")) -> Response:
    if seat not in table.ios:
        raise HTTPException(status_code=404)
    if confirm != "yes":
        return house.pages.page("remove.html", table.language, table=table, seat=seat)
    table.remove(seat)
    return RedirectResponse(f"/host/{token}", status_code=303)
