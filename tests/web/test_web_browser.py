"""The web app in a real browser (Debian's chromium driven by playwright).

A person starts a MIRAGE table in the lobby and plays it to the reveal on a desktop
(1280x900, English) and on a phone (390x844, Chinese): at every decision the form is in
view and the tab title says it is their turn, on the phone the sheet never stands above
the conversation, and the game ends with the ending panel; the host page follows the game
without reloading, copies links and asks before removing someone, whose page is told. The
server is stopped mid-game and started again: the page says it is reconnecting, keeps the
answer sent meanwhile, sends it when the server is back, and the game goes on. An answer
to a question that has changed is not dropped silently, and half-typed text survives a
reload. Two people play one table from two browser contexts. A page on another port cannot
start a table with a form nor frame the lobby, a rebound host name is refused, and the
server's own pages break no rule of their Content-Security-Policy. Screenshots are saved
(to $JUBENSHA_SCREENSHOTS when set, e.g. docs/web)."""

from __future__ import annotations

import html
import os
import re
import shutil
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from jubensha.engine.events import Spoke
from jubensha.runlog.folder import read_run
from jubensha.web.app import Settings, create_app
from jubensha.web.commands import web_server
from jubensha.web.restore import resume_table
from jubensha.web.tables import Resumer, TableHost

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium browser installed "
                                "(apt-get install chromium; .ci/run installs it)")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         # a name an attacker points at this machine, as DNS rebinding does
         "--host-resolver-rules=MAP evil.example 127.0.0.1"]
WAIT_MS = 60_000
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
TURN = {"en": "● Your turn", "zh": "● 轮到你了"}


@dataclass
class Server:
    """A server on a port of this machine, as `jubensha serve` runs it."""

    base: str
    port: int
    stop: Callable[[], None]


def serve(runs: Path, state: Path, port: int = 0, resumer: Resumer | None = None) -> Server:
    import uvicorn

    tables = TableHost(runs, state=state, resumer=resumer)
    app = create_app(Settings(runs=runs, models=["scripted"]), tables)
    if not port:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
    web = web_server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"),
                     tables)
    thread = threading.Thread(target=web.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not web.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)

    def stop() -> None:
        web.should_exit = True
        thread.join(20)

    return Server(f"http://127.0.0.1:{port}", port, stop)


@pytest.fixture
def server(tmp_path) -> Iterator[str]:
    running = serve(tmp_path / "runs", tmp_path / "state")
    yield running.base
    running.stop()


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


def seat_page(browser, link: str, size: dict[str, int] = DESKTOP):
    """A person's page in a browser of their own, confirming what it asks to confirm."""
    page = browser.new_context(viewport=size).new_page()
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(link)
    return page


def next_decision(page) -> str | None:
    """Wait until the page shows a decision (its kind) or the ending (None)."""
    page.wait_for_selector("#decision-form, .ending", timeout=WAIT_MS)
    form = page.query_selector("#decision-form")
    return form.get_attribute("data-kind") if form else None


def decision_id(page) -> str:
    return page.get_attribute("#decision-form input[name=decision]", "value") or ""


def fill(page, kind: str, turns: int, text: str) -> None:
    """Fill in a valid answer to the decision shown."""
    form = "#decision-form "
    if kind == "turn" and turns == 1 and page.query_selector(form + "input[value=investigate]"):
        page.check(form + "input[value=investigate]")
    for area in page.query_selector_all(form + "textarea"):
        if area.is_visible():
            area.fill(text)
    if kind == "rate_round":  # the first statement rated; the others keep 1 · some
        page.check(form + "input[name=trust0][value='0']")
        page.check(form + "input[name=doubt0][value='2']")
    for select in page.query_selector_all(form + "select"):
        if select.is_visible() and not select.input_value():
            select.select_option(index=1)


def send(page) -> None:
    """Send the form and wait until the page has moved on from that decision."""
    asked = decision_id(page)
    page.click("#decision-form button[type=submit]")
    page.wait_for_selector(f"#live:not([data-decision='{asked}'])", timeout=WAIT_MS)


def in_view(page, selector: str) -> bool:
    """Whether the element is on the screen and nothing hides it: neither scrolled off the
    page nor out of sight in the dock it scrolls in, nor covered."""
    box = page.locator(selector).bounding_box()
    size = page.viewport_size
    return (box is not None and 0 <= box["y"] and box["y"] + box["height"] <= size["height"]
            and page.locator(selector).evaluate(SEEN))


SEEN = """el => { const box = el.getBoundingClientRect();
  return el.contains(document.elementFromPoint(box.left + box.width / 2,
                                               box.top + box.height / 2)); }"""


def play(page, lang: str, shot: Callable[[str, int], None] | None = None,
         limit_s: float = 420, text: str = "I was on the cliff path at ten.") -> list[str]:
    """Answer every decision until the ending, checking at each that it is unmistakably
    the person's turn and the form is in view; ``shot(kind, number)`` at each."""
    kinds: list[str] = []
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        kind = next_decision(page)
        if kind is None:
            return kinds
        kinds.append(kind)
        assert page.title().startswith(TURN[lang]), page.title()
        assert "state-turn" in page.get_attribute("#roster .chip.you", "class")
        assert in_view(page, "#decision-form button[type=submit]")
        assert not page.is_visible("#pane-sheet") or page.viewport_size["width"] >= 900
        fill(page, kind, kinds.count("turn"), text)
        if shot is not None:
            shot(kind, len(kinds))
        send(page)
    raise AssertionError("the game did not end in time")


def test_a_person_plays_mirage_on_a_desktop_while_the_host_and_a_spectator_watch(
        server, browser, shots):
    host = browser.new_context(viewport=DESKTOP,
                               permissions=["clipboard-read", "clipboard-write"]).new_page()
    invites, spectator = start_table(host, server, "lighthouse-keeper", "mirage", [0], True)
    assert spectator is not None and len(invites) == 1
    seat = seat_page(browser, invites[0])
    seat.wait_for_selector("#decision-form", timeout=WAIT_MS)
    host.wait_for_selector("#seats td.state-turn", timeout=WAIT_MS)  # live, never reloaded
    host.click("button.copy >> nth=0")
    host.wait_for_selector("button.copy:has-text('Copied')", timeout=WAIT_MS)
    assert host.evaluate("navigator.clipboard.readText()") == invites[0]
    host.screenshot(path=str(shots / "host.png"), full_page=True)
    watcher = browser.new_context(viewport=DESKTOP).new_page()
    watcher.goto(spectator)

    def shot(kind: str, number: int) -> None:
        if kind == "rate_round" and not (shots / "seat.png").exists():
            seat.screenshot(path=str(shots / "seat.png"))
        if kind == "turn" and not (shots / "phone-seat-en.png").exists():
            seat.set_viewport_size(PHONE)
            seat.screenshot(path=str(shots / "phone-seat-en.png"))
            seat.set_viewport_size(DESKTOP)
        if kind == "vote":
            watcher.screenshot(path=str(shots / "spectator.png"))

    kinds = play(seat, "en", shot)
    assert {"speak", "turn", "rate_round", "accuse", "vote"} <= set(kinds)
    ending = seat.inner_text(".ending")
    assert "The reveal" in ending and "Everyone's ballots" in ending
    assert re.search(r"You (voted for .+|abstained) · (right|wrong)", ending)
    assert seat.title() == seat.get_attribute("#live", "data-title")
    seat.screenshot(path=str(shots / "seat-end.png"))
    host.wait_for_selector("#host-review", state="visible", timeout=WAIT_MS)
    watcher.wait_for_selector(".ending", timeout=WAIT_MS)
    assert len(watcher.query_selector_all("figure.chart[data-kind=trust] polyline")) >= 3
    seat.click("#review-link")
    seat.wait_for_selector("#truth")
    assert seat.query_selector("#calls details") and seat.title().startswith("Review · ")
    seat.screenshot(path=str(shots / "review.png"))
    host.goto(server + "/")
    assert "The Last Light on Gull Rock" in host.inner_text("main")
    host.screenshot(path=str(shots / "lobby.png"), full_page=True)


def test_a_person_plays_a_whole_chinese_mirage_game_on_a_phone(server, browser, shots):
    lobby = browser.new_page(viewport=DESKTOP)
    invites, _ = start_table(lobby, server, "tingsong-tea-estate", "mirage", [0], False)
    seat = seat_page(browser, invites[0], PHONE)
    seat.wait_for_selector("#decision-form", timeout=WAIT_MS)
    assert not seat.is_visible("#pane-sheet") and seat.is_visible("#events")
    seat.click(".tabs button[data-show=sheet]")
    assert seat.is_visible("#sheet") and not seat.is_visible("#events")
    seat.click(".tabs button[data-show=table]")

    def shot(kind: str, number: int) -> None:
        if kind == "rate_round" and number < 6:
            seat.screenshot(path=str(shots / "phone-seat-zh.png"))
        if kind == "vote":
            seat.set_viewport_size(DESKTOP)
            seat.screenshot(path=str(shots / "seat-zh.png"))
            seat.set_viewport_size(PHONE)

    kinds = play(seat, "zh", shot)
    assert {"speak", "turn", "rate_round", "accuse", "vote"} <= set(kinds)
    assert seat.evaluate("window.scrollY") < 200  # never sent far down the page
    ending = seat.inner_text(".ending")
    assert "真相揭晓" in ending and "所有人的投票" in ending
    assert not re.search(r"[\u4e00-\u9fff]\s?[:;,()]|[()]\s?[\u4e00-\u9fff]", ending), ending
    seat.screenshot(path=str(shots / "phone-end-zh.png"))


def test_the_table_goes_on_after_the_server_is_restarted(tmp_path, browser, shots):
    runs, state = tmp_path / "runs", tmp_path / "state"
    first = serve(runs, state)
    host = browser.new_page(viewport=DESKTOP)
    invites, _ = start_table(host, first.base, "lighthouse-keeper", "demo", [0], False)
    seat = seat_page(browser, invites[0])
    kind = next_decision(seat)
    fill(seat, kind or "", 0, "Before the restart.")
    send(seat)
    kind = next_decision(seat)
    asked = decision_id(seat)
    first.stop()
    seat.wait_for_selector("#notice:not([hidden])", timeout=WAIT_MS)
    assert "reconnecting" in seat.inner_text("#notice")
    fill(seat, kind or "", 0, "Sent while the server was away.")
    seat.click("#decision-form button[type=submit]")
    seat.wait_for_selector("#notice.bad", timeout=WAIT_MS)
    seat.screenshot(path=str(shots / "reconnecting.png"))
    second = serve(runs, state, port=first.port, resumer=resume_table)
    try:
        seat.wait_for_selector(f"#live:not([data-decision='{asked}'])", timeout=WAIT_MS)
        assert invites[0] in seat.url
        kinds = play(seat, "en", text="After the restart.")
        assert seat.query_selector(".ending")
    finally:
        second.stop()
    run = read_run(next(path for path in runs.iterdir() if ".partial" not in path.name))
    # The person's words exactly (a scripted seat may quote them back in its own line).
    asked = [event.text for event in run.events if isinstance(event, Spoke)
             and event.text == "Sent while the server was away."]
    assert run.finished and kinds and kinds[-1] == "vote"  # decisions after the restart
    assert len(asked) == 1, asked  # the question sent during the outage, asked once


def test_a_stale_answer_is_not_dropped_and_half_typed_text_survives_a_reload(
        server, browser, shots):
    lobby = browser.new_page(viewport=DESKTOP)
    invites, _ = start_table(lobby, server, "lighthouse-keeper", "demo", [0], False)
    one, two = seat_page(browser, invites[0]), seat_page(browser, invites[0])
    next_decision(one)
    one.fill("#decision-form textarea >> nth=0", "Half typed")
    one.reload()
    next_decision(one)
    assert one.input_value("#decision-form textarea >> nth=0") == "Half typed"
    kind = next_decision(two)
    two.route("**/live?*", lambda route: route.abort())  # this page misses the news
    fill(one, kind or "", 0, "Answered on the first page.")
    send(one)
    fill(two, kind or "", 0, "My late answer.")
    two.click("#decision-form button[type=submit]")
    two.wait_for_selector("#notice.bad", timeout=WAIT_MS)
    assert "already answered or has changed" in two.inner_text("#notice")
    two.screenshot(path=str(shots / "stale.png"))
    two.unroute("**/live?*")
    deadline = time.monotonic() + 60
    while True:
        assert time.monotonic() < deadline, "the late answer's text was lost"
        areas = two.query_selector_all("#decision textarea")
        if any(area.input_value() == "My late answer." for area in areas):
            break
        two.wait_for_timeout(200)


def test_the_host_removes_a_person_after_confirming_and_their_page_is_told(
        server, browser):
    host = browser.new_page(viewport=DESKTOP)
    invites, _ = start_table(host, server, "lighthouse-keeper", "demo", [0], False)
    seat = seat_page(browser, invites[0])
    next_decision(seat)
    asked: list[str] = []
    host.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    host.click("form.remove button")
    host.wait_for_timeout(300)
    assert asked and "Remove Tom Hale?" in asked[0]
    assert "removed you" not in seat.inner_text("#progress")
    host.once("dialog", lambda dialog: dialog.accept())
    host.click("form.remove button")
    seat.wait_for_selector("#progress .error", timeout=WAIT_MS)
    assert "The host removed you" in seat.inner_text("#progress")
    host.wait_for_selector("#seats td.state-removed", timeout=WAIT_MS)


def test_two_people_play_one_table_from_two_browser_contexts(server, browser, shots):
    lobby = browser.new_page(viewport=DESKTOP)
    invites, spectator = start_table(lobby, server, "lighthouse-keeper", "demo", [0, 2], False)
    assert spectator is None and len(invites) == 2
    pages = [seat_page(browser, link) for link in invites]
    done = [False, False]
    deadline = time.monotonic() + 240
    while not all(done):
        assert time.monotonic() < deadline, "the game did not end in time"
        for number, page in enumerate(pages):
            if done[number]:
                continue
            if page.query_selector(".ending"):
                done[number] = True
            elif (form := page.query_selector("#decision-form")) is not None:
                fill(page, form.get_attribute("data-kind") or "", 0, f"person {number}")
                send(page)
            else:
                page.wait_for_timeout(100)
    names = [page.inner_text("#roster .chip.you .name") for page in pages]
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
