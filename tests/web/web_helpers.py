"""Driving the web app over HTTP as a person would: open the lobby, seat a table, answer
each decision the seat page shows, until the reveal."""

from __future__ import annotations

import html
import re
import time
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from jubensha.web.app import Settings, create_app
from jubensha.web.tables import TableHost

DECISION = re.compile(r'name="decision" value="(\d+)"')
KIND = re.compile(r'data-kind="(\w+)"')


BASE = "http://localhost"


def browser_like(app: Any) -> TestClient:
    """A client that sends what a browser on the server's own page sends: its Host, and
    its origin with every form."""
    return TestClient(app, base_url=BASE, headers={"Origin": BASE})


def client(runs: Path, host: TableHost | None = None, **settings: Any) -> TestClient:
    options = {"models": ["scripted"], **settings}
    return browser_like(create_app(Settings(runs=runs, **options), host or TableHost(runs)))


def seat_form(script: str, procedure: str, seats: dict[int, str], players: int,
              **extra: str) -> dict[str, str]:
    """The lobby's seat form: ``seats`` maps seat numbers to 'human' (others naive)."""
    form = {"script": script, "procedure": procedure, "seed": "0", **extra}
    for number in range(players):
        form[f"arch{number}"] = seats.get(number, "naive")
        form[f"model{number}"] = "scripted"
    return form


def open_table(web: TestClient, form: dict[str, str]) -> tuple[str, dict[str, str], str]:
    """Start a table; returns the host page's path, seat name → invite path, and the
    host page's text."""
    started = web.post("/tables", data=form, follow_redirects=False)
    assert started.status_code == 303, started.text
    host = started.headers["location"]
    page = web.get(host).text
    invites = {html.unescape(seat): path for seat, path in
               re.findall(r'class="invite" data-seat="([^"]*)" href="([^"]+)"', page)}
    return host, invites, page


def answer_for(kind: str, text: str, investigate: bool = False) -> dict[str, str]:
    """A valid answer to a decision of ``kind`` (a turn investigates when asked to)."""
    if kind == "turn" and investigate:
        return {"action": "investigate", "location": "1", "remark": "Let me look here."}
    return {"text": text, "method": "poison in the tea", "motive": "an old debt",
            "question1": "Where were you at ten?", "question2": "Who saw you?",
            "question3": "Why?", "target": "1", "reason": "their story changed",
            "trust": "1", "doubt": "2", "action": "ask"}


def play_seat(web: TestClient, invite: str, *, limit_s: float = 60,
              text: str = "I was at home all evening.") -> list[str]:
    """Answer every decision of the seat until the game ends; the decision kinds seen."""
    kinds: list[str] = []
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        page = web.get(invite).text
        found = DECISION.search(page)
        if found is None:
            if web.get(invite + "/live").json()["ended"]:
                return kinds
            time.sleep(0.01)
            continue
        kind = KIND.search(page).group(1)  # type: ignore[union-attr]
        investigate = kind == "turn" and "turn" not in kinds and 'value="investigate"' in page
        kinds.append(kind)
        data = {"decision": found.group(1), **answer_for(kind, text, investigate)}
        response = web.post(invite, data=data, follow_redirects=False)
        assert response.status_code == 303, response.text
    raise AssertionError(f"the game did not end within {limit_s} s")


