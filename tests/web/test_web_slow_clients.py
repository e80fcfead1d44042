"""Attacks on the connections of ``jubensha serve``: slow clients (a head or a body sent a
little at a time, for ever) are closed after the read timeout; clients that leave
mid-body are one quiet log line, not a traceback each; connections beyond the caps are
closed as they open; and ``X-Forwarded-For`` counts only from a configured proxy, so
rotating it from loopback does not get round the password throttle. The run with 2,000
clients is ``bench/slow_clients.py``."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import httpx
import pytest

from jubensha.web import serverlimits
from tests.web.live_server import closed_by_server, connect, head, live_server

CLIENTS = 25
"""Of each kind: 50 slow clients in all, under the cap of one address."""


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    """A read timeout of 1 s (10 s when served) and a fresh quiet log."""
    monkeypatch.setattr(serverlimits, "READ_TIMEOUT_S", 1.0)
    monkeypatch.setattr(serverlimits, "quiet", serverlimits.QuietLog())


def lobby(port: int) -> int:
    return httpx.get(f"http://127.0.0.1:{port}/", timeout=5).status_code


def test_attack_slow_clients_are_closed_after_the_read_timeout(tmp_path: Path,
                                                              quick: None) -> None:
    with live_server(tmp_path / "runs") as (port, _):
        started = time.monotonic()
        heads = [connect(port, head(port)[:30]) for _ in range(CLIENTS)]  # head never ends
        bodies = [connect(port, head(port) + b"script=light") for _ in range(CLIENTS)]
        assert lobby(port) == 200  # served meanwhile
        closed = [closed_by_server(client, 5) for client in heads + bodies]
        took = time.monotonic() - started
        assert lobby(port) == 200
    assert all(closed) and took < 6, (sum(closed), took)
    for client in heads + bodies:
        client.close()


def test_attack_clients_that_leave_mid_body_are_one_quiet_line_not_tracebacks(
        tmp_path: Path, quick: None, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    with live_server(tmp_path / "runs") as (port, _):
        for _ in range(2 * CLIENTS):
            connect(port, head(port) + b"script=lighthouse").close()  # leaves mid-body
        time.sleep(1.0)
        assert lobby(port) == 200
    tracebacks = [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
    assert tracebacks == []
    assert not [r for r in caplog.records if "ClientDisconnect" in r.getMessage()]
    quiet = [r.getMessage() for r in caplog.records if "left before" in r.getMessage()]
    assert len(quiet) == 1 and "POST /tables from 127.0.0.1" in quiet[0]


def test_connections_beyond_the_per_address_cap_are_closed_as_they_open(
        tmp_path: Path, quick: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(serverlimits, "MAX_PER_ADDRESS", 10)
    monkeypatch.setattr(serverlimits, "READ_TIMEOUT_S", 10.0)  # the kept ones stay
    with live_server(tmp_path / "runs") as (port, _):
        clients = [connect(port, b"GET / HTTP/1.1\r\n") for _ in range(20)]
        time.sleep(0.3)
        refused = sum(closed_by_server(client, 0.2) for client in clients)
    assert refused == 10
    for client in clients:
        client.close()


def test_a_body_over_the_limit_is_refused(tmp_path: Path, quick: None) -> None:
    with live_server(tmp_path / "runs") as (port, _):
        reply = httpx.post(f"http://127.0.0.1:{port}/tables",
                           headers={"Origin": f"http://127.0.0.1:{port}"},
                           content=b"x" * (serverlimits.MAX_BODY_BYTES + 1))
    assert reply.status_code == 413
    assert "frame-ancestors 'none'" in reply.headers["content-security-policy"]


def guesses(port: int, count: int) -> list[int]:
    """``count`` wrong passwords, each claiming another address in X-Forwarded-For."""
    return [httpx.post(f"http://127.0.0.1:{port}/login", data={"password": "wrong"},
                       headers={"Origin": f"http://127.0.0.1:{port}",
                                "X-Forwarded-For": f"10.0.{n // 250}.{n % 250 + 1}"},
                       timeout=5).status_code for n in range(count)]


def test_attack_rotating_x_forwarded_for_from_loopback_does_not_get_round_the_throttle(
        tmp_path: Path) -> None:
    with live_server(tmp_path / "runs", password="secret") as (port, _):
        answered = guesses(port, 15)
    assert answered[:10] == [401] * 10 and answered[10:] == [429] * 5


def test_behind_a_configured_proxy_each_forwarded_address_is_counted_apart(
        tmp_path: Path) -> None:
    with live_server(tmp_path / "runs", proxies=["127.0.0.1"], password="secret") as (port, _):
        answered = guesses(port, 15)
    assert answered == [401] * 15
