"""The browser app: a lobby, a page per human seat, a spectator page, and reviews of runs.

Pages are rendered on the server (jinja2, every value escaped) and kept live by small
scripts that listen to server-sent events and fetch what changed; a page works (by
reloading) without them. Who may see what is decided here, by token, and nowhere else:

- the host area (lobby, table pages, run list, reviews): anyone who reaches the server,
  or only those who know ``password`` when one is set (tried at most ``throttle`` allows);
- a seat's page: its own sheet and the events the engine delivered to that seat, and
  after the reveal the ending and the review;
- a spectator's page: public events and the agents' suspicion charts while the game runs,
  the omniscient review once it has ended.

Which hosts and origins may reach the app at all, and the headers every page carries, are
``guard.RequestGuard``'s. Tables played before a restart are opened again as the server
starts (``restore``).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import math
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Form, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import (
    FileResponse,
    HTMLResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from jubensha.agents.registry import architectures
from jubensha.engine.procedure import find_procedure, presets
from jubensha.runlog.folder import RunError, read_run
from jubensha.runs.play import PlayError, SeatPlan, seat_humans
from jubensha.scripts.model import Script
from jubensha.web import serverlimits
from jubensha.web.guard import RequestGuard, same_secret
from jubensha.web.head import HeadAsGet
from jubensha.web.library import ScriptLibrary
from jubensha.web.lobby import lobby_values
from jubensha.web.pages import Pages, browser_language, json_response, wants_json
from jubensha.web.restore import restore_tables
from jubensha.web.review import review_values
from jubensha.web.runsdir import not_own_files, resolve_run
from jubensha.web.seatio import FormError, NotAskedYet
from jubensha.web.strings import text
from jubensha.web.tables import LiveTable, TableHost, TablesFull
from jubensha.web.throttle import Throttle
from jubensha.web.views import (
    host_live,
    host_values,
    seat_live,
    seat_values,
    watch_live,
    watch_values,
)

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
    pages = Pages()
    logins = Throttle()

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        library.parse_in_background()
        await restore_tables(tables, library, settings.models)
        yield
        await tables.close()

    app = FastAPI(title="jubensha", lifespan=lifespan, docs_url=None, redoc_url=None,
                  openapi_url=None)
    static = Path(__file__).parent / "static"
    app.mount("/static", StaticFiles(directory=static), name="static")
    app.state.tables = tables
    serverlimits.install(app)
    app.add_middleware(HeadAsGet)
    app.add_middleware(RequestGuard, allowed_hosts=settings.allowed_hosts)

    def host_key() -> str:
        return hmac.new(secret, b"host", hashlib.sha256).hexdigest()

    def is_host(request: Request) -> bool:
        if not settings.password:
            return True
        return same_secret(request.cookies.get(HOST_COOKIE, ""), host_key())

    def host_only(request: Request) -> None:
        if not is_host(request):
            raise HTTPException(status_code=401)

    def review_path(table: LiveTable) -> str | None:
        try:
            return table.out.resolve().relative_to(settings.runs.resolve()).as_posix()
        except ValueError:
            return None

    # -- errors: a page in the reader's language with a way back -------------------------
    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        lang, back = _reader(request, tables)
        return pages.error(request, exc.status_code, lang, str(exc.detail or ""), back,
                           headers=getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def form_error(request: Request, exc: RequestValidationError) -> Response:
        lang, back = _reader(request, tables)
        missing = sorted({str(error.get("loc", ["", "?"])[-1]) for error in exc.errors()})
        return pages.error(request, 422, lang, text(lang, "error_fields",
                                                    fields=", ".join(missing)), back)

    @app.get("/favicon.ico")
    async def favicon() -> Response:
        return FileResponse(static / "favicon.svg", media_type="image/svg+xml")

    # -- host area -------------------------------------------------------------------------
    @app.get("/", response_class=HTMLResponse)
    async def lobby(request: Request) -> Response:
        if not is_host(request):
            return pages.page("login.html", browser_language(request), status=401,
                              failed=False, wait=0)
        listed = await asyncio.to_thread(lobby_values, tables.tables.values(), settings.runs)
        return pages.page("lobby.html", browser_language(request),
                          scripts=await library.choices(), procedures=presets(), **listed)

    @app.post("/login")
    async def login(request: Request, password: str = Form("")) -> Response:
        lang = browser_language(request)
        wait = logins.wait(request.client.host if request.client else "")
        if wait:
            seconds = math.ceil(wait)
            return pages.page("login.html", lang, status=429, failed=True, wait=seconds,
                              headers={"Retry-After": str(seconds)})
        if settings.password and same_secret(password, settings.password):
            response = RedirectResponse("/", status_code=303)
            response.set_cookie(HOST_COOKIE, host_key(), httponly=True, samesite="strict")
            return response
        return pages.page("login.html", lang, status=401, failed=True, wait=0)

    @app.get("/new", response_class=HTMLResponse)
    async def new_table(request: Request, script: str, procedure: str) -> Response:
        host_only(request)
        found, proc = await _script(library, script), _procedure(procedure)
        return pages.page("new.html", browser_language(request), script=found, script_key=script,
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
                                script_key=form.get("script", ""))
        except TablesFull as exc:
            raise HTTPException(status_code=429, detail=str(exc)) from None
        return RedirectResponse(f"/host/{table.host_token}", status_code=303)

    @app.get("/host/{token}", response_class=HTMLResponse)
    async def host_page(request: Request, token: str) -> Response:
        host_only(request)
        table = tables.by_host(token) or _missing()
        return pages.page("host.html", table.language, started=tables.started,
                          review=review_path(table),
                          **host_values(table, str(request.base_url).rstrip("/")))

    @app.get("/host/{token}/live")
    async def host_update(request: Request, token: str) -> Response:
        host_only(request)
        table = tables.by_host(token) or _missing()
        return json_response(host_live(pages, table, str(request.base_url).rstrip("/"),
                                       tables.started))

    @app.get("/host/{token}/stream")
    async def host_stream(request: Request, token: str) -> Response:
        host_only(request)
        return _stream(tables, tables.by_host(token) or _missing())

    @app.post("/host/{token}/remove")
    async def remove_seat(request: Request, token: str, seat: str = Form(...),
                          confirm: str = Form("")) -> Response:
        host_only(request)
        table = tables.by_host(token) or _missing()
        if seat not in table.ios:
            raise HTTPException(status_code=404)
        if confirm != "yes":
            return pages.page("remove.html", table.language, table=table, seat=seat)
        table.remove(seat)
        return RedirectResponse(f"/host/{token}", status_code=303)

    @app.get("/runs", response_class=HTMLResponse)
    async def runs(request: Request) -> Response:
        host_only(request)
        listed = await asyncio.to_thread(lobby_values, tables.tables.values(), settings.runs,
                                         None)
        return pages.page("runs.html", browser_language(request), **listed)

    @app.get("/review/{path:path}", response_class=HTMLResponse)
    async def review(request: Request, path: str) -> Response:
        host_only(request)
        folder = resolve_run(settings.runs, path) or _missing()
        problem = await asyncio.to_thread(not_own_files, folder)
        if problem is not None:
            raise HTTPException(status_code=422, detail=f"{path}: not shown: {problem}; a "
                                "run folder is read only from its own files")
        return await _review(pages, folder, library, back="/")

    # -- a seat ----------------------------------------------------------------------------
    @app.get("/seat/{token}", response_class=HTMLResponse)
    async def seat_page(token: str) -> Response:
        table, seat = tables.by_seat(token) or _missing()
        if table.ios[seat].view is None:  # the game has not reached this seat's start yet
            return pages.page("waiting.html", table.language, table=table, seat=seat)
        return pages.page("seat.html", table.language, started=tables.started,
                          **seat_values(table, seat, token))

    @app.post("/seat/{token}")
    async def answer(request: Request, token: str) -> Response:
        table, seat = tables.by_seat(token) or _missing()
        form = {key: str(value) for key, value in (await request.form()).items()}
        if table.ended:
            raise HTTPException(status_code=409, detail=text(table.language, "table_over"))
        try:
            taken = table.ios[seat].submit(_int(form.get("decision", "")), form)
        except NotAskedYet:
            raise HTTPException(status_code=503, detail=text(table.language, "not_yet"),
                                headers={"Retry-After": "1"}) from None
        except FormError as exc:
            if wants_json(request):
                return json_response({"error": str(exc), "stale": exc.stale}, 422)
            return _refused(pages, table, seat, token, str(exc), form, tables.started)
        if wants_json(request):
            return json_response({"taken": taken})
        return RedirectResponse(f"/seat/{token}", status_code=303)

    @app.get("/seat/{token}/live")
    async def seat_update(token: str, after: int = 0) -> Response:
        table, seat = tables.by_seat(token) or _missing()
        if table.ios[seat].view is None:
            return json_response({"version": table.version, "started": tables.started,
                                  "waiting": True})
        return json_response(seat_live(pages, table, seat, token, after, tables.started))

    @app.get("/seat/{token}/stream")
    async def seat_stream(token: str) -> Response:
        table, _ = tables.by_seat(token) or _missing()
        return _stream(tables, table)

    @app.get("/seat/{token}/review", response_class=HTMLResponse)
    async def seat_review(token: str) -> Response:
        table, _ = tables.by_seat(token) or _missing()
        return await _table_review(pages, table, library, back=f"/seat/{token}")

    # -- a spectator -----------------------------------------------------------------------
    @app.get("/watch/{token}", response_class=HTMLResponse)
    async def watch(token: str) -> Response:
        table = tables.by_spectator(token) or _missing()
        return pages.page("watch.html", table.language, started=tables.started,
                          **watch_values(table, token))

    @app.get("/watch/{token}/live")
    async def watch_update(token: str, after: int = 0) -> Response:
        table = tables.by_spectator(token) or _missing()
        return json_response(watch_live(pages, table, token, after, tables.started))

    @app.get("/watch/{token}/stream")
    async def watch_stream(token: str) -> Response:
        return _stream(tables, tables.by_spectator(token) or _missing())

    @app.get("/watch/{token}/review", response_class=HTMLResponse)
    async def watch_review(token: str) -> Response:
        table = tables.by_spectator(token) or _missing()
        return await _table_review(pages, table, library, back=f"/watch/{token}")

    return app


# -- helpers --------------------------------------------------------------------------------
def _missing() -> Any:
    raise HTTPException(status_code=404)


def _reader(request: Request, tables: TableHost) -> tuple[str, str]:
    """The language of the table a URL belongs to (else the browser's), and the page to
    go back to: the table's own page, else the lobby."""
    parts = request.url.path.strip("/").split("/")
    if len(parts) >= 2:
        table = _table_of(tables, parts[0], parts[1])
        if table is not None:
            return table.language, f"/{parts[0]}/{parts[1]}"
    return browser_language(request), "/"


def _table_of(tables: TableHost, kind: str, token: str) -> LiveTable | None:
    if kind == "seat":
        found = tables.by_seat(token)
        return found[0] if found else None
    if kind == "watch":
        return tables.by_spectator(token)
    return tables.by_host(token) if kind == "host" else None


def _int(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise HTTPException(status_code=422, detail=f"not a number: {value[:20]!r}") from None


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


def _refused(pages: Pages, table: LiveTable, seat: str, token: str, error: str,
             form: dict[str, str], started: str) -> Response:
    """The seat page again with the reason and what the person typed."""
    values = seat_values(table, seat, token)
    values.update(error=error, form=form)
    return pages.page("seat.html", table.language, status=422, started=started, **values)


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


async def _table_review(pages: Pages, table: LiveTable, library: ScriptLibrary,
                        back: str) -> Response:
    """A table's review, for its people and spectators once the truth is out."""
    if table.status != "ended":
        raise HTTPException(status_code=403, detail=text(table.language, "review_later"))
    return await _review(pages, table.out, library, back=back, script=table.script)


async def _review(pages: Pages, folder: Path, library: ScriptLibrary, back: str,
                  script: Script | None = None) -> Response:
    try:
        run = await asyncio.to_thread(read_run, folder)
    except RunError as exc:
        raise HTTPException(status_code=422, detail=str(exc)) from None
    script = script or await asyncio.to_thread(library.played, run)
    values = await asyncio.to_thread(review_values, run, script)
    return pages.page("review.html", values.pop("lang"), back=back, **values)
