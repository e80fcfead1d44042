"""The web app in a real browser (Debian's chromium driven by playwright): a person starts
a table in the lobby, plays every decision of the demo and MIRAGE procedures from the seat
page as it updates live, the spectator sees the suspicion charts, the review opens after
the reveal, and two people play one table from two browser contexts. A page on another
port cannot start a table with a form nor frame the lobby, a rebound host name is refused,
and the server's own pages break no rule of their Content-Security-Policy. Screenshots are
saved (to $JUBENSHA_SCREENSHOTS when set, e.g. docs/web)."""

from __future__ import annotations

import html
import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from jubensha.web.app import Settings, create_app
from jubensha.web.commands import web_server
from jubensha.web.tables import TableHost

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium browser installed "
                                "(apt-get install chromium; .ci/run installs it)")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         # a name an attacker points at this machine, as DNS rebinding does
         "--host-resolver-rules=MAP evil.example 127.0.0.1"]
WAIT_MS = 30_000


@pytest.fixture
def server(tmp_path) -> Iterator[str]:
    import uvicorn

    runs = tmp_path / "runs"
    tables = TableHost(runs)
    app = create_app(Settings(runs=runs, models=["scripted"]), tables)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    web = web_server(config, tables)
    thread = threading.Thread(target=web.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not web.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    web.should_exit = True
    thread.join(10)


@pytest.fixture
def browser() -> Iterator[object]:
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def shots(tmp_path) -> Path:
    folder = Path(os.environ.get("JUBENSHA_SCREENSHOTS") or tmp_path / "shots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def start_table(page, base: str, script: str, procedure: str, humans: list[int],
                spectators: bool) -> tuple[list[str], str | None]:
    """Seat a table from the lobby; the invite links and the spectator link."""
    page.goto(base + "/")
    page.select_option("select[name=script]", script)
    page.select_option("select[name=procedure]", procedure)
    page.click("#new-table button[type=submit]")
    for number in humans:
        page.select_option(f"select[name=arch{number}]", "human")
    if spectators:
        page.check("input[name=spectators]")
    page.click("#seats button[type=submit]")
    page.wait_for_selector("a.invite")
    invites = [link.get_attribute("href") for link in page.query_selector_all("a.invite")]
    spectator = page.query_selector("#spectator")
    return [base + path for path in invites], (
        base + spectator.get_attribute("href") if spectator else None)


def next_decision(page) -> str | None:
    """Wait until the page shows a decision (its kind) or the end of the game (None)."""
    page.wait_for_selector("#decision-form, #ended:not([hidden])", timeout=WAIT_MS)
    form = page.query_selector("#decision-form")
    return form.get_attribute("data-kind") if form else None


def answer(page, kind: str, turns: int, text: str) -> None:
    form = "#decision-form "
    for area in page.query_selector_all(form + "textarea"):
        area.fill(text)
    if kind == "turn" and turns == 1 and page.query_selector(form + "input[value=investigate]"):
        page.check(form + "input[value=investigate]")
    if kind == "rate":
        page.check(form + "input[name=trust][value='1']")
        page.check(form + "input[name=doubt][value='2']")
    with page.expect_navigation():
        page.click(form + "button[type=submit]")


def play(page, limit_s: float = 240, text: str = "I was on the cliff path at ten.",
         shot: Path | None = None) -> list[str]:
    kinds: list[str] = []
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        kind = next_decision(page)
        if kind is None:
            return kinds
        kinds.append(kind)
        if shot is not None and len(kinds) == 3:
            page.screenshot(path=str(shot))
        answer(page, kind, kinds.count("turn"), text)
    raise AssertionError("the game did not end in time")


def test_a_person_plays_mirage_in_the_browser_and_watches_the_review(server, browser, shots):
    host = browser.new_page()
    invites, spectator = start_table(host, server, "lighthouse-keeper", "mirage", [0], True)
    host.screenshot(path=str(shots / "host.png"), full_page=True)
    assert spectator is not None and len(invites) == 1
    seat = browser.new_context().new_page()
    seat.goto(invites[0])
    watcher = browser.new_context().new_page()
    watcher.goto(spectator)
    kinds = play(seat, shot=shots / "seat.png")
    assert {"speak", "turn", "rate", "accuse", "vote"} <= set(kinds)
    assert "The game is over." in seat.inner_text("#ended")
    watcher.wait_for_selector("#ended:not([hidden])", timeout=WAIT_MS)
    watcher.wait_for_selector("figure.chart[data-kind=trust]", timeout=WAIT_MS)
    assert len(watcher.query_selector_all("figure.chart polyline")) >= 3
    watcher.screenshot(path=str(shots / "spectator.png"))
    watcher.click("#review-link")
    watcher.wait_for_selector("#truth")
    assert watcher.query_selector("#calls details")
    watcher.screenshot(path=str(shots / "review.png"))
    host.goto(server + "/")
    assert "ended" in host.inner_text("main")
    host.screenshot(path=str(shots / "lobby.png"), full_page=True)


def test_two_people_play_one_table_from_two_browser_contexts(server, browser, shots):
    lobby = browser.new_page()
    invites, spectator = start_table(lobby, server, "lighthouse-keeper", "demo", [0, 2], False)
    assert spectator is None and len(invites) == 2
    pages = [browser.new_context().new_page() for _ in invites]
    for page, link in zip(pages, invites, strict=True):
        page.goto(link)
    done = [False, False]
    deadline = time.monotonic() + 180
    while not all(done):
        assert time.monotonic() < deadline, "the game did not end in time"
        for number, page in enumerate(pages):
            if done[number]:
                continue
            if page.query_selector("#ended:not([hidden])"):
                done[number] = True
            elif (form := page.query_selector("#decision-form")) is not None:
                answer(page, form.get_attribute("data-kind") or "", 0, f"person {number}")
            else:
                page.wait_for_timeout(100)
    names = [page.inner_text("#seat-name") for page in pages]
    assert names[0] != names[1]
    transcript = pages[0].inner_text("#events")
    assert "person 0" in transcript and "person 1" in transcript
    pages[1].screenshot(path=str(shots / "second-seat.png"))


@pytest.fixture
def attacker() -> Iterator[tuple[str, dict[str, str]]]:
    """Another site on another port of this machine: it serves the pages put in the dict."""
    pages: dict[str, str] = {}

    class Pages(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = pages.get(self.path, "").encode("utf-8")
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    site = ThreadingHTTPServer(("127.0.0.1", 0), Pages)
    thread = threading.Thread(target=site.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{site.server_address[1]}", pages
    site.shutdown()
    site.server_close()


def test_a_page_on_another_port_can_neither_start_a_table_nor_frame_the_lobby(
        server, browser, attacker, tmp_path):
    site, pages = attacker
    fields = {"script": "lighthouse-keeper", "procedure": "demo", "seed": "0",
              **{f"arch{n}": "naive" for n in range(4)},
              **{f"model{n}": "scripted" for n in range(4)}}
    inputs = "".join(f'<input type="hidden" name="{k}" value="{html.escape(v)}">'
                     for k, v in fields.items())
    pages["/post"] = (f'<form id="f" method="post" action="{server}/tables">{inputs}</form>'
                      '<script>document.getElementById("f").submit()</script>')
    pages["/frame"] = f'<iframe id="lobby" src="{server}/"></iframe>'
    page = browser.new_page()
    with page.expect_navigation(url=server + "/tables") as posted:
        page.goto(site + "/post")
    assert posted.value.status == 403
    assert "must come from this server's own pages" in page.inner_text("body")
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
    assert "lighthouse-keeper" in browser.new_page().goto(server + "/").text()

    page.goto(site + "/frame")
    page.wait_for_timeout(500)
    framed = [frame for frame in page.frames if frame != page.main_frame]
    assert framed and all("jubensha" not in frame.content() for frame in framed)


def test_a_rebound_host_name_is_refused_and_own_pages_break_no_policy(server, browser):
    page = browser.new_page()
    port = server.rsplit(":", 1)[1]
    refused = page.goto(f"http://evil.example:{port}/")
    assert refused is not None and refused.status == 400
    assert "does not answer to the host name" in page.inner_text("body")

    violations: list[str] = []
    page.on("console", lambda message: violations.append(message.text)
            if "Content Security Policy" in message.text else None)
    invites, spectator = start_table(page, server, "lighthouse-keeper", "mirage", [0], True)
    for link in [*invites, spectator, server + "/runs"]:
        page.goto(link)
        page.wait_for_timeout(300)
    assert not violations, violations
