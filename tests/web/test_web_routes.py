"""The app's routes are grouped by area, and each area's access rule is a dependency of its
routes: the host area needs the host (the password, when one is set), a seat's and a
spectator's pages the token of their link. No route checks access by hand."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from jubensha.web import access
from jubensha.web.app import Settings, create_app
from jubensha.web.routes import host, lobby, review, seat, watch
from tests.web.web_helpers import client

ROUTES = Path(access.__file__).parent / "routes"
AREAS = (lobby, host, review, seat, watch)

RULES: dict[str, Callable[..., Any] | None] = {
    "/": access.host_or_login, "/login": None, "/new": access.require_host,
    "/tables": access.require_host, "/runs": access.require_host,
    "/review": access.require_host, "/host": access.require_host, "/seat": access.seat_at,
    "/watch": access.watched,
}
"""The first part of a route's path → the dependency that decides who may reach it."""


def calls(dependant: Dependant) -> Iterator[Callable[..., Any]]:
    for sub in dependant.dependencies:
        if sub.call is not None:
            yield sub.call
        yield from calls(sub)


def routes() -> Iterator[tuple[str, list[Callable[..., Any]]]]:
    """Each route of every area: its full path and the dependencies it runs, in order."""
    for area in AREAS:
        shared = [depends.dependency for depends in area.router.dependencies]
        for route in area.router.routes:
            assert isinstance(route, APIRoute)
            yield area.router.prefix + route.path, [*shared, *calls(route.dependant)]


def test_the_app_serves_every_area(tmp_path: Path) -> None:
    app = create_app(Settings(runs=tmp_path))
    assert len(list(routes())) >= 18
    assert app.state.house.settings.runs == tmp_path


def test_every_route_has_its_areas_access_rule_as_a_dependency() -> None:
    for path, found in routes():
        area = "/" + path.strip("/").split("/")[0]
        assert area in RULES, f"{path}: a route outside the known areas"
        rule = RULES[area]
        if rule is None:
            assert not set(found) & {access.require_host, access.host_or_login}, path
        else:
            assert rule in found, f"{path} does not depend on {rule.__name__}"


def test_the_host_rule_is_met_before_the_table_is_looked_up() -> None:
    for _, found in routes():
        if access.host_table in found:
            assert found.index(access.require_host) < found.index(access.host_table)


def test_no_route_module_checks_access_by_hand() -> None:
    for path in sorted(ROUTES.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        named = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
        named |= {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        hand = named & {"is_host", "by_host", "by_seat", "by_spectator", "password",
                        "cookies"} - ({"password"} if path.name == "lobby.py" else set())
        assert not hand, f"{path.name} checks access itself: {sorted(hand)}"


def test_a_locked_host_area_answers_401_and_the_lobby_the_login_page(tmp_path: Path) -> None:
    web = client(tmp_path, password="pw")
    lobby = web.get("/")
    assert lobby.status_code == 401 and 'name="password"' in lobby.text
    for path in ("/runs", "/review/x", "/host/nope", "/new?script=a&procedure=demo"):
        assert web.get(path).status_code == 401, path
    assert web.post("/tables", data={}).status_code == 401
    assert web.post("/login", data={"password": "pw"}, follow_redirects=False
                    ).status_code == 303
    assert web.get("/").status_code == 200
    assert web.get("/host/nope").status_code == 404
    assert web.get("/seat/nope").status_code == 404
    assert web.get("/watch/nope/live").status_code == 404
