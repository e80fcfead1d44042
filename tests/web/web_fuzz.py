"""Fuzzing ``jubensha serve``'s web API: schemathesis draws requests from the app's own
OpenAPI schema (every path, method, path and query parameter), each sent as drawn and
again with its token replaced by a real one of a running table (a host's, a seat's, a
spectator's), and forms that the schema cannot describe are drawn by hypothesis from the
fields the pages post. The server is the real one (uvicorn with ``serve``'s limits, on a
loopback port); what counts is every answer's status and every log record with a
traceback. Used by ``tests/web/test_web_fuzz.py`` (a few cases) and
``bench/fuzz_web.py`` (thousands)."""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jubensha.web import streams
from jubensha.web.app import Settings, create_app
from jubensha.web.tables import TableHost
from tests.web.live_server import live_server
from tests.web.web_helpers import seat_form

FIELDS = ["script", "procedure", "seed", "spectators", "language", "arch0", "arch1", "arch2",
          "arch3", "model0", "model1", "model2", "model3", "decision", "text", "target",
          "reason", "trust", "doubt", "action", "location", "remark", "method", "motive",
          "question1", "rating", "password", "seat", "after", "victim"]
TEXT = st.one_of(st.text(max_size=40), st.integers(-10, 10_000).map(str),
                 st.sampled_from(["lighthouse-keeper", "demo", "naive", "human", "scripted",
                                  "on", "0", "1", "-1", "", "\x00", "../../etc/passwd"]))
FORMS = st.dictionaries(st.one_of(st.sampled_from(FIELDS), st.text(max_size=12)), TEXT,
                        max_size=12)


@dataclass
class Tally:
    """What the fuzzing saw: answers by status class, and log records with a traceback."""

    cases: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    server_errors: list[str] = field(default_factory=list)
    tracebacks: list[str] = field(default_factory=list)
    transport_errors: Counter[str] = field(default_factory=Counter)

    def saw(self, method: str, url: str, status: int) -> None:
        self.cases += 1
        self.statuses[status // 100 * 100] += 1
        if status >= 500:
            self.server_errors.append(f"{status} {method} {url}"[:300])


class Tracebacks(logging.Handler):
    def __init__(self, tally: Tally) -> None:
        super().__init__(logging.WARNING)
        self.tally = tally

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info or "Traceback" in record.getMessage():
            self.tally.tracebacks.append(f"{record.name}: {record.getMessage()}"[:300])


@contextmanager
def fuzzed_server(runs: Path) -> Iterator[tuple[str, dict[str, str], TableHost]]:
    """A served app with two tables (one waiting for its person, one ended): its base URL,
    real tokens by kind, and the tables."""
    streams_idle, streams_max = streams.IDLE_S, streams.MAX_S
    streams.IDLE_S, streams.MAX_S = 0.2, 0.5  # a stream answers in well under a second
    try:
        with live_server(runs) as (port, server):
            base = f"http://127.0.0.1:{port}"
            tokens = _tables(base)
            yield base, tokens, server.config.app.state.tables  # type: ignore[attr-defined]
    finally:
        streams.IDLE_S, streams.MAX_S = streams_idle, streams_max


def _tables(base: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for form in (seat_form("lighthouse-keeper", "demo", {0: "human"}, 4, spectators="on"),
                 seat_form("lighthouse-keeper", "demo", {}, 4, spectators="on")):
        started = httpx.post(f"{base}/tables", data=form, headers={"Origin": base},
                             follow_redirects=False, timeout=30)
        host = started.headers["location"]
        page = httpx.get(base + host, timeout=30).text
        found.setdefault("host", host.rsplit("/", 1)[1])
        for kind in ("seat", "watch"):
            match = re.search(rf'href="/{kind}/([^"/]+)"', page)
            if match:
                found.setdefault(kind, match.group(1))
    return found


def fuzz(runs: Path, per_operation: int, seed: int = 0) -> Tally:
    """``per_operation`` drawn requests for each operation of the schema (each sent twice:
    as drawn, and with a real token), and as many drawn forms to each form's path."""
    tally = Tally()
    handler = Tracebacks(tally)
    logging.getLogger().addHandler(handler)
    try:
        with fuzzed_server(runs) as (base, tokens, _), httpx.Client(timeout=10) as client:
            app = create_app(Settings(runs=runs, models=["scripted"]), TableHost(runs))
            schema = schemathesis.openapi.from_dict(app.openapi())
            for result in schema.get_all_operations():
                operation = result.ok()
                _drive(operation.as_strategy(), per_operation, seed,
                       lambda case: _send_case(client, base, tokens, case, tally))
            for path in ("/tables", "/login", f"/seat/{tokens.get('seat', 'x')}",
                         f"/host/{tokens['host']}/remove"):
                _drive(FORMS, per_operation, seed,
                       lambda form, path=path: _send_form(client, base, path, form, tally))
    finally:
        logging.getLogger().removeHandler(handler)
    return tally


def _drive(strategy: st.SearchStrategy, examples: int, seed: int, send) -> None:  # type: ignore[no-untyped-def,type-arg]
    @settings(max_examples=examples, database=None, deadline=None, derandomize=seed == 0,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(value) -> None:  # type: ignore[no-untyped-def]
        send(value)

    run()


def _send_case(client: httpx.Client, base: str, tokens: dict[str, str], case, tally: Tally) -> None:  # type: ignore[no-untyped-def]
    path = case.formatted_path
    query = case.query if isinstance(case.query, dict) else None
    _request(client, case.method.upper(), base + path, tally, params=query)
    area = case.path.strip("/").split("/")[0]
    if "{token}" in case.path and area in tokens:
        real = case.path.replace("{token}", tokens[area])
        _request(client, case.method.upper(), base + real, tally, params=query)


def _send_form(client: httpx.Client, base: str, path: str, form: dict[str, str],
               tally: Tally) -> None:
    _request(client, "POST", base + path, tally, data=form, headers={"Origin": base})


def _request(client: httpx.Client, method: str, url: str, tally: Tally, **options) -> None:  # type: ignore[no-untyped-def]
    try:
        answer = client.request(method, url, follow_redirects=False, **options)
    except httpx.HTTPError as exc:
        tally.transport_errors[type(exc).__name__] += 1
        return
    tally.saw(method, url, answer.status_code)
