"""Every page on a laptop (1280x900) and a phone (390x844), in a real browser: nothing is
wider than the screen (no sideways scroll, no table, list or field cut at the right
edge), every field a person fills in has a label that names it, no page asks for a file
the server lacks (a favicon), the ending is read whole on a laptop with the truth told
once, and a Chinese browser gets the lobby and its error pages in Chinese. Screenshots of
the lobby, the seat set-up, the host page, a seat during the game and at its end, the
spectator's end and the review, at both sizes, go to $JUBENSHA_SCREENSHOTS when set."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.web.test_web_browser import (
    CHROMIUM,
    DESKTOP,
    PHONE,
    WAIT_MS,
    browser,  # noqa: F401  (a fixture)
    play,
    seat_page,
    server,  # noqa: F401  (a fixture)
    shots,  # noqa: F401  (a fixture)
    start_table,
)

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium browser installed "
                                "(apt-get install chromium; .ci/run installs it)")
SIZES = {"desktop": DESKTOP, "phone": PHONE}

TOO_WIDE = """() => {
  const width = document.documentElement.clientWidth;
  const found = [];
  if (document.documentElement.scrollWidth > width) {
    found.push("the page scrolls sideways: " + document.documentElement.scrollWidth + " px");
  }
  for (const el of document.querySelectorAll("main *")) {
    const style = getComputedStyle(el);
    if (style.display === "none" || style.visibility === "hidden" || el.closest(".sr-only")) {
      continue;
    }
    const box = el.getBoundingClientRect();
    if (box.width && box.right > width + 1) {
      found.push(el.tagName + "." + el.className + " ends at " + Math.round(box.right) + " px");
    }
    const clips = ["auto", "scroll", "hidden"].includes(style.overflowX);
    if (clips && el.matches("table, ul, ol, div, pre") && el.scrollWidth > el.clientWidth + 1) {
      found.push(el.tagName + "." + el.className + " hides " + (el.scrollWidth - el.clientWidth)
                 + " px at its right");
    }
  }
  return found.slice(0, 8);
}"""

UNLABELLED = """() => [...document.querySelectorAll("select, textarea, input")]
  .filter(el => el.type !== "hidden" && el.type !== "submit")
  .filter(el => !(el.labels && el.labels.length) && !el.getAttribute("aria-label")
                && !el.getAttribute("aria-labelledby"))
  .map(el => el.name || el.id)"""


def check(page, name: str, folder: Path, full: bool = True) -> None:
    """The page at both sizes: nothing too wide, every field labelled; a screenshot each."""
    for size_name, size in SIZES.items():
        page.set_viewport_size(size)
        page.wait_for_timeout(150)
        assert page.evaluate(TOO_WIDE) == [], (name, size_name)
        assert page.evaluate(UNLABELLED) == [], (name, size_name)
        page.screenshot(path=str(folder / f"{name}-{size_name}.png"), full_page=full)
    page.set_viewport_size(DESKTOP)


def failed_requests(page) -> list[str]:
    """Every request of the page answered with an error (a missing favicon, a script)."""
    failed: list[str] = []
    page.on("response", lambda response: failed.append(f"{response.status} {response.url}")
            if response.status >= 400 else None)
    return failed


def test_every_page_fits_a_laptop_and_a_phone(server, browser, shots):  # noqa: F811
    host = browser.new_context(viewport=DESKTOP).new_page()
    host_failed = failed_requests(host)
    host.goto(server + "/new?script=lighthouse-keeper&procedure=mirage")
    check(host, "new", shots)
    invites, spectator = start_table(host, server, "lighthouse-keeper", "mirage", [0], True)
    assert spectator is not None
    seat = seat_page(browser, invites[0])
    seat_failed = failed_requests(seat)
    seat.wait_for_selector("#decision-form", timeout=WAIT_MS)
    check(seat, "seat", shots, full=False)
    host.wait_for_selector("#seats td.state-turn", timeout=WAIT_MS)
    check(host, "host", shots)
    lobby = browser.new_context(viewport=DESKTOP).new_page()
    lobby.goto(server + "/")
    rows = lobby.inner_text(".live-table")
    assert "The Last Light on Gull Rock" in rows and "Tom Hale" in rows and "started" in rows
    assert "playing" in lobby.inner_text("table.runs") and "unfinished" not in lobby.inner_text(
        "table.runs")
    check(lobby, "lobby", shots)
    watcher = browser.new_context(viewport=DESKTOP).new_page()
    watcher.goto(spectator)
    check(watcher, "spectator", shots, full=False)

    play(seat, "en")
    seat.wait_for_selector(".ending")
    ending = seat.locator("#ending")
    assert ending.evaluate("el => el.scrollHeight <= el.clientHeight + 1")  # no scroll box
    assert "What happened" not in seat.inner_text("#events")
    assert seat.inner_text("main").count("What happened") == 1
    seat.set_viewport_size(PHONE)
    seat.click(".tabs button[data-show=table]")
    check(seat, "seat-end", shots)
    watcher.wait_for_selector(".ending", timeout=WAIT_MS)
    check(watcher, "spectator-end", shots)
    seat.click("#review-link")
    seat.wait_for_selector("#truth")
    check(seat, "review", shots)
    host.goto(server + "/runs")
    check(host, "runs", shots)
    assert host_failed == [] and seat_failed == [], (host_failed, seat_failed)


def test_a_chinese_browser_gets_the_lobby_and_error_pages_in_chinese(server, browser,  # noqa: F811
                                                                     shots):  # noqa: F811
    page = browser.new_context(viewport=PHONE, locale="zh-CN").new_page()
    page.goto(server + "/")
    assert page.inner_text("h1") == "牌桌" and "开一桌" in page.inner_text("main")
    assert page.get_attribute("html", "lang") == "zh-Hans"
    check(page, "lobby-zh", shots)
    page.goto(server + "/new?script=lighthouse-keeper&procedure=demo")
    note = page.inner_text("#language-note")
    assert "英文" in note  # the mystery stays in its own language, said before choosing
    missing = page.goto(server + "/seat/no-such-link")
    assert missing is not None and missing.status == 404
    text = page.inner_text("main")
    assert "这个链接在这里打不开" in text and "Not Found" not in text
    check(page, "error-zh", shots)


def test_the_set_up_warns_as_another_language_than_the_mysterys_is_chosen(
        server, browser):  # noqa: F811
    page = browser.new_context(viewport=DESKTOP).new_page()
    page.goto(server + "/new?script=lighthouse-keeper&procedure=demo")
    assert not page.is_visible("#language-warning") and not page.is_visible("#language-default")
    page.select_option("#f-language", "zh")
    assert page.is_visible("#language-warning")
    assert "stays in English" in page.inner_text("#language-warning")
    page.select_option("#f-language", "en")
    assert not page.is_visible("#language-warning")
    width = page.evaluate("document.getElementById('f-language').getBoundingClientRect().width")
    assert width < 400, width  # as narrow as the other fields, not the page's whole width
