"""Who may reach what. The app keeps one ``House`` (the server's settings, tables, scripts
and templates); routes receive it and their access checks as FastAPI dependencies, so no
route checks access by hand:

- ``require_host``: the host area (lobby, table pages, run list, reviews) is open to anyone
  who reaches the server, or only to those who know the password when one is set;
- ``host_table``, ``seat_at``, ``watched``: the table a host, seat or spectator link names
  (404 for a link this server never made).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

from fastapi import Depends, HTTPException, Request

from jubensha.web.gate import same_secret
from jubensha.web.library import ScriptLibrary
from jubensha.web.pages import Pages
from jubensha.web.tables import LiveTable, TableHost
from jubensha.web.throttle import Throttle

HOST_COOKIE = "jubensha_host"


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


@dataclass
class House:
    """What every route of one app shares."""

    settings: Settings
    tables: TableHost
    library: ScriptLibrary
    pages: Pages = field(default_factory=Pages)
    logins: Throttle = field(default_factory=Throttle)
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32))

    def host_key(self) -> str:
        """The host cookie's value: made from a secret of this process, so it lasts as
        long as the server does."""
        return hmac.new(self.secret, b"host", hashlib.sha256).hexdigest()

    def is_host(self, request: Request) -> bool:
        if not self.settings.password:
            return True
        return same_secret(request.cookies.get(HOST_COOKIE, ""), self.host_key())

    def review_path(self, table: LiveTable) -> str | None:
        """The table's run folder under ``--runs``, as a review link names it."""
        try:
            return table.out.resolve().relative_to(self.settings.runs.resolve()).as_posix()
        except ValueError:
            return None


def house(request: Request) -> House:
    house: House = request.app.state.house
    return house


HouseDep = Annotated[House, Depends(house)]


class LoginNeeded(Exception):
    """The lobby was asked for without the host's cookie: the app answers with the login
    page (``app.create_app``)."""


def require_host(request: Request, house: HouseDep) -> None:
    if not house.is_host(request):
        raise HTTPException(status_code=401)


def host_or_login(request: Request, house: HouseDep) -> None:
    if not house.is_host(request):
        raise LoginNeeded


def missing() -> HTTPException:
    return HTTPException(status_code=404)


def host_table(token: str, house: HouseDep) -> LiveTable:
    """The table whose host link holds ``token``."""
    table = house.tables.by_host(token)
    if table is None:
        raise missing()
    return table


def seat_at(token: str, house: HouseDep) -> tuple[LiveTable, str]:
    """The table and seat whose invite link holds ``token``."""
    found = house.tables.by_seat(token)
    if found is None:
        raise missing()
    return found


def watched(token: str, house: HouseDep) -> LiveTable:
    """The table whose spectator link holds ``token``."""
    table = house.tables.by_spectator(token)
    if table is None:
        raise missing()
    return table


HostTable = Annotated[LiveTable, Depends(host_table)]
SeatAt = Annotated[tuple[LiveTable, str], Depends(seat_at)]
Watched = Annotated[LiveTable, Depends(watched)]
