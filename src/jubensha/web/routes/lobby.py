"""The lobby: signing in, the list of tables and runs, and seating a new table."""

from __future__ import annotations

import asyncio
import math
from typing import Any

from fastapi import APIRouter, Depends, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from jubensha.agents.registry import architectures
from jubensha.engine.procedure import find_procedure, presets
from jubensha.runs.play import PlayError, SeatChoice, TableChoices, table_config
from jubensha.runs.prepare import DEFAULT_AGENT
from jubensha.scripts.model import Script
from jubensha.web.access import HOST_COOKIE, HouseDep, host_or_login, require_host
from jubensha.web.gate import same_secret
from jubensha.web.library import ScriptLibrary
from jubensha.web.lobby import lobby_values
from jubensha.web.pages import browser_language
from jubensha.web.refused import Refused
from jubensha.web.routes.common import form_number, read_form
from jubensha.web.tables import TablesFull

router = APIRouter()


@router.get("/", response_class=HTMLResponse, dependencies=[Depends(host_or_login)])
async def lobby(request: Request, house: HouseDep) -> Response:
    listed = await asyncio.to_thread(lobby_values, house.tables.tables.values(),
                                     house.settings.runs)
    return house.pages.page("lobby.html", browser_language(request),
                            scripts=await house.library.choices(), procedures=presets(),
                            **listed)


@router.post("/login")
async def login(request: Request, house: HouseDep, password: str = Form("")) -> Response:
    lang = browser_language(request)
    wait = house.logins.wait(request.client.host if request.client else "")
    if wait:
        seconds = math.ceil(wait)
        return house.pages.page("login.html", lang, status=429, failed=True, wait=seconds,
                                headers={"Retry-After": str(seconds)})
    if house.settings.password and same_secret(password, house.settings.password):
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(HOST_COOKIE, house.host_key(), httponly=True, samesite="strict")
        return response
    return house.pages.page("login.html", lang, status=401, failed=True, wait=0)


@router.get("/new", response_class=HTMLResponse, dependencies=[Depends(require_host)])
async def new_table(request: Request, house: HouseDep, script: str,
                    procedure: str) -> Response:
    found, proc = await _script(house.library, script), _procedure(procedure)
    return house.pages.page("new.html", browser_language(request), script=found,
                            script_key=script,
                            procedure=proc.name, architectures=architectures(),
                            default_agent=DEFAULT_AGENT,
                            models=house.settings.models)


@router.post("/tables", dependencies=[Depends(require_host)])
async def start_table(request: Request, house: HouseDep) -> Response:
    form = await read_form(request)
    found = await _script(house.library, form.get("script", ""))
    procedure = _procedure(form.get("procedure", ""))
    language = form.get("language") or found.language
    if language not in ("en", "zh"):
        raise Refused(422, "error_language")
    choices = TableChoices(agents=DEFAULT_AGENT, model=house.settings.models[0],
                           seats=_seats(found, form, house.settings.models), hot_seat=True,
                           seed=form_number(form.get("seed", "0")),
                           language=language,  # type: ignore[arg-type]
                           script_source=found.id)
    try:
        config = table_config(found, procedure, choices)
    except PlayError as exc:
        raise HTTPException(status_code=422, detail=str(exc)) from None
    try:
        table = house.tables.open(config, spectators=form.get("spectators") == "on",
                                  script_key=form.get("script", ""))
    except TablesFull:
        raise Refused(429, "error_tables_full", playing=house.tables.playing,
                      most=house.tables.max_tables) from None
    return RedirectResponse(f"/host/{table.host_token}", status_code=303)


async def _script(library: ScriptLibrary, key: str) -> Script:
    script = await library.script(key)
    if script is None:
        raise Refused(404, "error_no_script")
    return script


def _procedure(name: str) -> Any:
    if name not in presets():
        raise Refused(404, "error_no_procedure")
    return find_procedure(name)


def _seats(script: Script, form: dict[str, str], models: list[str]) -> tuple[SeatChoice, ...]:
    """Each seat's architecture and model from the form: only what the server offers."""
    seats = []
    for number, name in enumerate(script.names):
        arch = form.get(f"arch{number}", "")
        model = form.get(f"model{number}", models[0])
        if arch != "human" and arch not in architectures():
            raise Refused(422, "error_no_architecture", seat=name)
        if arch != "human" and model not in models:
            raise Refused(422, "error_no_model", seat=name)
        seats.append(SeatChoice(name=name, architecture=arch,
                                model=None if arch == "human" else model))
    return tuple(seats)
