"""Reviews: the host's list of run folders and the omniscient review of one, and a
table's review for its people and spectators once the truth is out."""

from __future__ import annotations

import asyncio
from pathlib import Path

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import HTMLResponse, Response

from jubensha.runlog.folder import RunError, read_run
from jubensha.scripts.model import Script
from jubensha.web.access import House, HouseDep, missing, require_host
from jubensha.web.lobby import lobby_values
from jubensha.web.pages import browser_language
from jubensha.web.refused import Refused
from jubensha.web.review import review_values
from jubensha.web.runsdir import not_own_files, resolve_run
from jubensha.web.strings import text
from jubensha.web.tables import LiveTable

router = APIRouter(dependencies=[Depends(require_host)])


@router.get("/runs", response_class=HTMLResponse)
async def runs(request: Request, house: HouseDep) -> Response:
    listed = await asyncio.to_thread(lobby_values, house.tables.tables.values(),
                                     house.settings.runs, None)
    return house.pages.page("runs.html", browser_language(request), **listed)


@router.get("/review/{path:path}", response_class=HTMLResponse)
async def review(path: str, house: HouseDep) -> Response:
    folder = resolve_run(house.settings.runs, path)
    if folder is None:
        raise missing()
    problem = await asyncio.to_thread(not_own_files, folder)
    if problem is not None:
        raise Refused(422, "error_not_own", path=path, problem=problem)
    return await review_page(house, folder, back="/")


async def table_review(house: House, table: LiveTable, back: str) -> Response:
    """A table's review, for its people and spectators once the truth is out."""
    if table.status != "ended":
        raise HTTPException(status_code=403, detail=text(table.language, "review_later"))
    return await review_page(house, table.out, back=back, script=table.script)


async def review_page(house: House, folder: Path, back: str,
                      script: Script | None = None) -> Response:
    try:
        run = await asyncio.to_thread(read_run, folder)
    except RunError as exc:
        raise HTTPException(status_code=422, detail=str(exc)) from None
    script = script or await asyncio.to_thread(house.library.played, run)
    values = await asyncio.to_thread(review_values, run, script)
    playing = any(not table.ended and table.out.resolve() == folder.resolve()
                  for table in house.tables.tables.values())
    return house.pages.page("review.html", values.pop("lang"), back=back, playing=playing,
                            **values)
