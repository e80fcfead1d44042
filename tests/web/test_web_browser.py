"""The web app in a real browser (Debian's chromium driven by playwright): a person starts
a table in the lobby, plays every decision of the demo and MIRAGE procedures from the seat
page as it updates live, the spectator sees the suspicion charts, the review opens after
the reveal, and two people play one table from two browser contexts. Screenshots are
saved (to $JUBENSHA_SCREENSHOTS when set, e.g. docs/web)."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from jubensha.web.app import Settings, create_app
from jubensha.web.tables import TableHost

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium browser installed "
                                "(apt-get install chromium; .ci/run installs it)")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WAIT_MS = 30_000


@pytest.fixture
def server(tmp_path) -> Iterator[str]:
    import uvicorn

    runs = tmp_path / "runs"
    app = create_app(Settings(runs=runs, models=["scripted"]), TableHost(runs))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    web = uvicorn.Server(config)
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
