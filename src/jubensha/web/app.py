"""The browser app: a lobby, a page per human seat, a spectator page, and reviews of runs.

Pages are rendered on the server (jinja2, every value escaped) and kept live by a small
script that listens to server-sent events and fetches what changed; a page works (by
reloading) without it. Who may see what is decided here, by token, and nowhere else:

- the host area (lobby, table pages, run list, reviews): anyone who reaches the server,
  or only those who know ``password`` when one is set (tried at most ``throttle`` allows);
- a seat's page: its own sheet and the events the engine delivered to that seat;
- a spectator's page: public events and the suspicion charts while the game runs, the
  omniscient review once it has ended.

Which hosts and origins may reach the app at all, and the headers every page carries, are
``guard.RequestGuard``'s.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import math
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from fastapi import FastAPI, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles

from jubensha.agents.registry import architectures
from jubensha.engine.events import Event, GameEnded
from jubensha.engine.narration import describe
from jubensha.engine.procedure import find_procedure, presets
from jubensha.runlog.folder import RunError, RunLog, read_run
from jubensha.runlog.script import played_script
from jubensha.runs.play import PlayError, SeatPlan, seat_humans
from jubensha.scripts.model import Script
from jubensha.web.charts import charts
from jubensha.web.guard import RequestGuard, same_secret
from jubensha.web.library import ScriptLibrary
from jubensha.web.runsdir import list_runs, not_own_files, resolve_run
from jubensha.web.seatio import FormError
from jubensha.web.strings import text, words
from jubensha.web.tables import LiveTable, TableHost, TablesFull
from jubensha.web.throttle import Throttle

HOST_COOKIE = "jubensha_host"
KEEPALIVE_S = 15.0


@dataclass
class Settings:
    """What the person starting the server chose; nothing here comes from a page."""

    runs: Path
    script_dirs: list[Path] = field(default_factory=list)
    models: list[str] = field(default_factory=lambda: ["local", "scripted"])
    password: str | None = None
    embedder: str = "none"
    allowed_hosts: list[str] = field(default_factory=list)
    """Host names besides IP addresses and localhost the server answers to."""


def create_app(settings: Settings, host: TableHost | None = None) -> FastAPI:
    """The app for ``settings``; ``host`` (tables and model options) may be given by tests."""
    tables = host or TableHost(settings.runs, embedder=settings.embedder)
    library = ScriptLibrary(settings.script_dirs)
    secret = secrets.token_bytes(32)
    pages = _environment()
    logins = Throttle()

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        library.parse_in_background()
        yield
        await tables.close()

    app = FastAPI(title="jubensha", lifespan=lifespan, docs_url=None, redoc_url=None,
                  openapi_url=None)
    static = Path(__file__).parent / "static"
    app.mount("/static", StaticFiles(directory=static), name="static")
    app.state.tables = tables
    app.add_middleware(RequestGuard, allowed_hosts=settings.allowed_hosts)

    def page(name: str, lang: str, status: int = 200, headers: dict[str, str] | None = None,
             **values: Any) -> HTMLResponse:
        html = pages.get_template(name).render(t=words(lang), lang=lang, **values)
        return HTMLResponse(html, status_code=status,
                            headers={"Cache-Control": "no-store", **(headers or {})})

    def host_key() -> str:
        return hmac.new(secret, b"host", hashlib.sha256).hexdigest()

    def is_host(request: Request) -> bool:
        if not settings.password:
            return True
        return same_secret(request.cookies.get(HOST_COOKIE, ""), host_key())

    def host_only(request: Request) -> None:
        if not is_host(request):
            raise HTTPException(status_code=401)

    # -- host area -------------------------------------------------------------------------
    @app.get("/", response_class=HTMLResponse)
    async def lobby(request: Request) -> Response:
        if not is_host(request):
            return page("login.html", "en", status=401, failed=False, wait=0)
        live = sorted(tables.tables.values(), key=lambda t: t.status)
        return page("lobby.html", "en", scripts=await library.choices(),
                    procedures=presets(), tables=live,
                    runs=(await asyncio.to_thread(list_runs, settings.runs))[:50])

    @app.post("/login")
    async def login(request: Request, password: str = Form("")) -> Response:
        wait = logins.wait(request.client.host if request.client else "")
        if wait:
            seconds = math.ceil(wait)
            return page("login.html", "en", status=429, failed=True, wait=seconds,
                        headers={"Retry-After": str(seconds)})
        if settings.password and same_secret(password, settings.password):
            response = RedirectResponse("/", status_code=303)
            response.set_cookie(HOST_COOKIE, host_key(), httponly=True, samesite="strict")
            return response
        return page("login.html", "en", status=401, failed=True, wait=0)

    @app.get("/new", response_class=HTMLResponse)
    async def new_table(request: Request, script: str, procedure: str) -> Response:
        host_only(request)
        found, proc = await _script(library, script), _procedure(procedure)
        return page("new.html", found.language, script=found, script_key=script,
                    procedure=proc.name, architectures=architectures(),
                    models=settings.models)

    @app.post("/tables")
    async def start_table(request: Request) -> Response:
        host_only(request)
        form = {key: str(value) for key, value in (await request.form()).items()}
        found = await _script(library, form.get("script", ""))
        procedure = _procedure(form.get("procedure", ""))
        plans = _plans(found, form, settings.models)
        language = form.get("language") or found.language
        if language not in ("en", "zh"):
            raise HTTPException(status_code=422, detail="language must be en or zh")
        try:
            table = tables.open(found, procedure, plans,
                                language=language,  # type: ignore[arg-type]
                                seed=_int(form.get("seed", "0")),
                                spectators=form.get("spectators") == "on",
                                script_source=found.id)
        except TablesFull as exc:
            raise HTTPException(status_code=429, detail=str(exc)) from None
        return RedirectResponse(f"/host/{table.host_token}", status_code=303)

    @app.get("/host/{token}", response_class=HTMLResponse)
    async def host_page(request: Request, token: str) -> Response:
        host_only(request)
        table = tables.by_host(token) or _missing()
        return page("host.html", table.language, table=table,
                    base=str(request.base_url).rstrip("/"))

    @app.post("/host/{token}/remove")
    async def remove_seat(request: Request, token: str, seat: str = Form(...)) -> Response:
        host_only(request)
        table = tables.by_host(token) or _missing()
        if seat not in table.ios:
            raise HTTPException(status_code=404)
        table.remove(seat)
        return RedirectResponse(f"/host/{token}", status_code=303)

    @app.get("/runs", response_class=HTMLResponse)
    async def runs(request: Request) -> Response:
        host_only(request)
        return page("runs.html", "en", runs=list_runs(settings.runs))

    @app.get("/review/{path:path}", response_class=HTMLResponse)
    async def review(request: Request, path: str) -> Response:
        host_only(request)
        folder = resolve_run(settings.runs, path) or _missing()
        problem = await asyncio.to_thread(not_own_files, folder)
        if problem is not None:
            raise HTTPException(status_code=422, detail=f"{path}: not shown: {problem}; a "
                                "run folder is read only from its own files")
        return _review(page, folder)

    # -- a seat ----------------------------------------------------------------------------
    @app.get("/seat/{token}", response_class=HTMLResponse)
    async def seat_page(token: str, error: str = "") -> Response:
        table, seat = tables.by_seat(token) or _missing()
        return _seat_page(page, table, seat, token, error)

    @app.post("/seat/{token}")
    async def answer(request: Request, token: str) -> Response:
        table, seat = tables.by_seat(token) or _missing()
        form = {key: str(value) for key, value in (await request.form()).items()}
        try:
            table.ios[seat].submit(_int(form.get("decision", "")), form)
        except FormError as exc:
            return _seat_page(page, table, seat, token, str(exc), form, status=422)
        return RedirectResponse(f"/seat/{token}", status_code=303)

    @app.get("/seat/{token}/live")
    async def seat_live(token: str, after: int = 0) -> Response:
        table, seat = tables.by_seat(token) or _missing()
        io = table.ios[seat]
        seen = io.view.events if io.view else []
        pending = io.pending
        return _json({
            "version": table.version, "count": len(seen),
            "events": _render_events(pages, seen[max(after, 0):], table.language),
            "decision": pending.id if pending else None,
            "panel": pages.get_template("decision.html").render(
                t=words(table.language), pending=pending, token=token, form={},
                lang=table.language),
            "ended": table.ended})

    @app.get("/seat/{token}/stream")
    async def seat_stream(token: str) -> Response:
        table, _ = tables.by_seat(token) or _missing()
        return _stream(tables, table)

    # -- a spectator -----------------------------------------------------------------------
    @app.get("/watch/{token}", response_class=HTMLResponse)
    async def watch(token: str) -> Response:
        table = tables.by_spectator(token) or _missing()
        return page("watch.html", table.language, table=table, token=token,
                    events=_public(table.events), charts=_live_charts(table))

    @app.get("/watch/{token}/live")
    async def watch_live(token: str, after: int = 0) -> Response:
        table = tables.by_spectator(token) or _missing()
        public = _public(table.events)
        return _json({
            "version": table.version, "count": len(public),
            "events": _render_events(pages, public[max(after, 0):], table.language),
            "charts": pages.get_template("charts.html").render(
                t=words(table.language), charts=_live_charts(table)),
            "ended": table.ended})

    @app.get("/watch/{token}/stream")
    async def watch_stream(token: str) -> Response:
        return _stream(tables, tables.by_spectator(token) or _missing())

    @app.get("/watch/{token}/review", response_class=HTMLResponse)
    async def watch_review(token: str) -> Response:
        table = tables.by_spectator(token) or _missing()
        if not table.ended:
            raise HTTPException(status_code=403, detail="the review opens after the reveal")
        return _review(page, table.out, script=table.script)

    return app


# -- helpers --------------------------------------------------------------------------------
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("jubensha.web", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["lines"] = describe
    return env


def _missing() -> Any:
    raise HTTPException(status_code=404)


def _int(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise HTTPException(status_code=422, detail=f"not a number: {value[:20]!r}") from None


def _json(data: dict[str, Any]) -> Response:
    return Response(json.dumps(data, ensure_ascii=False), media_type="application/json",
                    headers={"Cache-Control": "no-store"})


async def _script(library: ScriptLibrary, key: str) -> Script:
    script = await library.script(key)
    if script is None:
        raise HTTPException(status_code=404, detail="no such script")
    return script


def _procedure(name: str) -> Any:
    if name not in presets():
        raise HTTPException(status_code=404, detail="no such procedure")
    return find_procedure(name)


def _plans(script: Script, form: dict[str, str], models: list[str]) -> dict[str, SeatPlan]:
    """Each seat's architecture and model from the form: only what the server offers."""
    plans = {}
    for number, name in enumerate(script.names):
        arch = form.get(f"arch{number}", "")
        model = form.get(f"model{number}", models[0])
        if arch != "human" and arch not in architectures():
            raise HTTPException(status_code=422, detail=f"seat {number}: no such architecture")
        if arch != "human" and model not in models:
            raise HTTPException(status_code=422, detail=f"seat {number}: model not offered")
        plans[name] = SeatPlan(name=name, architecture=arch, model=model)
    try:
        return seat_humans(plans, hot_seat=True)
    except PlayError as exc:
        raise HTTPException(status_code=422, detail=str(exc)) from None


def _public(events: list[Event]) -> list[Event]:
    return [event for event in events if event.audience == "public"]


def _render_events(pages: jinja2.Environment, events: list[Event], lang: str) -> str:
    return pages.get_template("events.html").render(events=events, lang=lang, t=words(lang))


def _live_charts(table: LiveTable) -> list[Any]:
    try:
        calls = read_run(table.out).calls
    except RunError:
        calls = []
    return charts(table.events, calls)


def _seat_page(page: Any, table: LiveTable, seat: str, token: str, error: str = "",
               form: dict[str, str] | None = None, status: int = 200) -> Response:
    io = table.ios[seat]
    view = io.view
    if view is None:  # the game has not reached this seat's start yet
        return page("waiting.html", table.language, table=table, seat=seat)
    return page("seat.html", table.language, status=status, table=table, seat=seat,
                view=view, sheet=view.sheet, pending=io.pending, token=token, error=error,
                form=form or {}, gone=io.gone)


def _stream(tables: TableHost, table: LiveTable) -> StreamingResponse:
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


def _played(run: RunLog) -> Script | None:
    """The run's script from its folder's own copy (``runlog.script``), never a file its
    meta.json names; None when it has none."""
    try:
        return played_script(run)
    except RunError:
        return None


def _review(page: Any, folder: Path, script: Script | None = None) -> Response:
    try:
        run = read_run(folder)
    except RunError as exc:
        raise HTTPException(status_code=422, detail=str(exc)) from None
    lang = run.meta.language if run.meta else "en"
    script = script or _played(run)
    ended = next((e for e in run.events if isinstance(e, GameEnded)), None)
    seats = sorted({call.seat or "-" for call in run.calls})
    return page("review.html", lang, run=run, script=script, ended=ended,
                charts=charts(run.events, run.calls), seats=seats,
                title=text(lang, "review_title"))
