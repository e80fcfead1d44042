"""A person's seat: its page, its answers to decisions, its live updates and its review."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from jubensha.web.access import House, HouseDep, SeatAt
from jubensha.web.pages import json_response, wants_json
from jubensha.web.routes.common import form_number, read_form, stream
from jubensha.web.routes.review import table_review
from jubensha.web.seatio import FormError, NotAskedYet
from jubensha.web.strings import text
from jubensha.web.tables import LiveTable
from jubensha.web.views import seat_live, seat_values

router = APIRouter(prefix="/seat/{token}")


@router.get("", response_class=HTMLResponse)
async def seat_page(token: str, house: HouseDep, at: SeatAt) -> Response:
    table, seat = at
    if table.ios[seat].view is None:  # the game has not reached this seat's start yet
        return house.pages.page("waiting.html", table.language, table=table, seat=seat)
    return house.pages.page("seat.html", table.language, started=house.tables.started,
                            **seat_values(table, seat, token))


@router.post("")
async def answer(request: Request, token: str, house: HouseDep, at: SeatAt) -> Response:
    table, seat = at
    form = await read_form(request)
    if table.ended:
        raise HTTPException(status_code=409, detail=text(table.language, "table_over"))
    try:
        taken = table.ios[seat].submit(form_number(form.get("decision", "")), form)
    except NotAskedYet:
        raise HTTPException(status_code=503, detail=text(table.language, "not_yet"),
                            headers={"Retry-After": "1"}) from None
    except FormError as exc:
        if wants_json(request):
            return json_response({"error": str(exc), "stale": exc.stale}, 422)
        return _refused(house, table, seat, token, str(exc), form)
    if wants_json(request):
        return json_response({"taken": taken})
    return RedirectResponse(f"/seat/{token}", status_code=303)


@router.get("/live")
async def seat_update(token: str, house: HouseDep, at: SeatAt, after: int = 0) -> Response:
    table, seat = at
    if table.ios[seat].view is None:
        return json_response({"version": table.version, "started": house.tables.started,
                              "waiting": True})
    return json_response(seat_live(house.pages, table, seat, token, after,
                                   house.tables.started))


@router.get("/stream")
async def seat_stream(request: Request, house: HouseDep, at: SeatAt) -> Response:
    return stream(house.tables, at[0], request)


@router.get("/review", response_class=HTMLResponse)
async def seat_review(token: str, house: HouseDep, at: SeatAt) -> Response:
    return await table_review(house, at[0], back=f"/seat/{token}")


def _refused(house: House, table: LiveTable, seat: str, token: str, error: str,
             form: dict[str, str]) -> Response:
    """The seat page again with the reason and what the person typed."""
    values = seat_values(table, seat, token)
    values.update(error=error, form=form)
    return house.pages.page("seat.html", table.language, status=422,
                            started=house.tables.started, **values)
