"""The browser app: a lobby, a page per human seat, a spectator page, and reviews of runs.

Pages are rendered on the server (jinja2, every value escaped) and kept live by small
scripts that listen to server-sent events and fetch what changed; a page works (by
reloading) without them. The routes are grouped by area in ``routes/`` (lobby, host, seat,
watch, review); who may see what is decided by token in ``access``, and nowhere else:

- the host area (lobby, table pages, run list, reviews): anyone who reaches the server,
  or only those who know ``password`` when one is set (tried at most ``throttle`` allows);
- a seat's page: its own sheet and the events the engine delivered to that seat, and
  after the reveal the ending and the review;
- a spectator's page: public events and the agents' suspicion charts while the game runs,
  the omniscient review once it has ended.

Which hosts and origins may reach the app at all, and the headers every page carries, are
``gate.RequestGate``'s. Tables played before a restart are opened again as the server
starts (``restore``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from jubensha.web import serverlimits
from jubensha.web.access import House, LoginNeeded, Settings
from jubensha.web.gate import RequestGate
from jubensha.web.head import HeadAsGet
from jubensha.web.library import ScriptLibrary
from jubensha.web.pages import browser_language
from jubensha.web.refused import Refused
from jubensha.web.restore import restore_tables
from jubensha.web.routes import host as host_area
from jubensha.web.routes import lobby, review, seat, watch
from jubensha.web.strings import text
from jubensha.web.tables import LiveTable, TableHost

__all__ = ["Settings", "create_app"]


def create_app(settings: Settings, host: TableHost | None = None) -> FastAPI:
    """The app for ``settings``; ``host`` (tables and model options) may be given by tests."""
    house = House(settings=settings,
                  tables=host or TableHost(settings.runs, embedder=settings.embedder),
                  library=ScriptLibrary(settings.script_dirs))

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        house.library.parse_in_background()
        await restore_tables(house.tables, house.library, settings.models)
        yield
        await house.tables.close()

    app = FastAPI(title="jubensha", lifespan=lifespan, docs_url=None, redoc_url=None,
                  openapi_url=None)
    app.mount("/static", StaticFiles(directory=Path(__file__).parent / "static"),
              name="static")
    app.state.house = house
    app.state.tables = house.tables
    serverlimits.install(app)
    app.add_middleware(HeadAsGet)
    app.add_middleware(RequestGate, allowed_hosts=settings.allowed_hosts)
    _add_error_pages(app, house)
    for area in (lobby, host_area, review, seat, watch):
        app.include_router(area.router)

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> Response:
        return FileResponse(Path(__file__).parent / "static" / "favicon.svg",
                            media_type="image/svg+xml")
    return app


def _add_error_pages(app: FastAPI, house: House) -> None:
    """Errors as a page in the reader's language with a way back; the lobby without the
    host's cookie as the login page."""

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        lang, back = _reader(request, house.tables)
        detail = exc.said(lang) if isinstance(exc, Refused) else str(exc.detail or "")
        return house.pages.error(request, exc.status_code, lang, detail, back,
                                 headers=getattr(exc, "headers", None))

    async def form_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        lang, back = _reader(request, house.tables)
        missing = sorted({str(error.get("loc", ["", "?"])[-1]) for error in exc.errors()})
        return house.pages.error(request, 422, lang, text(lang, "error_fields",
                                                          fields=", ".join(missing)), back)

    async def login_page(request: Request, _: Exception) -> Response:
        return house.pages.page("login.html", browser_language(request), status=401,
                                failed=False, wait=0)

    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, form_error)
    app.add_exception_handler(LoginNeeded, login_page)


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
