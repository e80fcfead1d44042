"""Attack: spectator links lock everyone out. 64 never-read live streams from each of 10
loopback addresses filled the server's connection cap, and a fresh address then got
connection errors on the lobby and on ``/live`` for as long as the streams were held. Now
streams are capped per address, per table and overall, well below the connection cap, and
each ends after a while without news (the page connects again; a client that stopped
reading does not). ``bench/stalled_streams.py`` holds 1,000."""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from jubensha.web import serverlimits, streams
from tests.web.live_server import closed_by_server, live_server
from tests.web.web_helpers import seat_form

FORM = seat_form("lighthouse-keeper", "demo", {0: "human"}, 4, spectators="on")


@contextmanager
def table_server(runs: Path) -> Iterator[tuple[int, str, object]]:
    """A live server with one table that waits for its person: the port, the spectators'
    stream path, and the server."""
    with live_server(runs) as (port, server):
        base = f"http://127.0.0.1:{port}"
        started = httpx.post(f"{base}/tables", data=FORM, headers={"Origin": base},
                             follow_redirects=False, timeout=10)
        assert started.status_code == 303, started.text
        page = httpx.get(base + started.headers["location"], timeout=10).text
        watch = re.search(r'href="(/watch/[^"]+)"', page)
        assert watch is not None
        yield port, f"{watch.group(1)}/stream", server


def open_stream(port: int, path: str, address: str = "127.0.0.1") -> socket.socket:
    """A client that asks for the stream and then never reads a byte."""
    client = socket.socket()
    client.bind((address, 0))
    client.settimeout(5)
    client.connect(("127.0.0.1", port))
    client.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    return client


def status_of(client: socket.socket) -> int:
    client.settimeout(5)
    head = client.recv(64).decode("latin-1")
    return int(head.split()[1])


def test_streams_over_the_cap_of_one_address_are_refused_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streams, "MAX_PER_ADDRESS", 3)
    with table_server(tmp_path / "runs") as (port, path, _):
        clients = [open_stream(port, path) for _ in range(5)]
        answered = sorted(status_of(client) for client in clients)
        other = open_stream(port, path, "127.0.0.2")
        assert status_of(other) == 200
    assert answered == [200, 200, 200, 429, 429]
    for client in [*clients, other]:
        client.close()


def test_streams_over_the_cap_of_one_table_and_overall_are_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streams, "MAX_PER_TABLE", 4)
    with table_server(tmp_path / "runs") as (port, path, _):
        clients = [open_stream(port, path, f"127.0.0.{n + 2}") for n in range(6)]
        by_table = sorted(status_of(client) for client in clients)
        for client in clients:
            client.close()
        time.sleep(0.3)
        monkeypatch.setattr(streams, "MAX_PER_TABLE", 100)
        monkeypatch.setattr(streams, "MAX_STREAMS", 2)
        clients = [open_stream(port, path, f"127.0.0.{n + 2}") for n in range(3)]
        overall = sorted(status_of(client) for client in clients)
    assert by_table == [200] * 4 + [429] * 2
    assert overall == [200, 200, 429]
    for client in clients:
        client.close()


def test_a_stream_without_news_ends_and_gives_its_slot_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streams, "IDLE_S", 1.0)
    with table_server(tmp_path / "runs") as (port, path, server):
        client = open_stream(port, path)
        assert status_of(client) == 200
        app = server.config.app  # type: ignore[attr-defined]
        slots = app.state.tables.streams
        assert slots.total == 1
        started = time.monotonic()
        ended = _stream_ended(client, 10)
        took = time.monotonic() - started
        time.sleep(0.2)
        assert ended and took < 5, took
        assert slots.total == 0 and not slots.addresses and not slots.tables
    client.close()


def _stream_ended(client: socket.socket, wait_s: float) -> bool:
    """Whether the chunked answer's last chunk (or the connection's end) came."""
    client.settimeout(wait_s)
    seen = b""
    try:
        while chunk := client.recv(4096):
            seen += chunk
            if seen.endswith(b"0\r\n\r\n"):
                return True
    except TimeoutError:
        return False
    return True


def test_stalled_streams_from_many_addresses_leave_room_for_a_fresh_client(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's attack at a tenth of its size: a cap of 50 connections, 8 never-read
    streams from each of 10 addresses; a fresh address still gets the lobby and /live."""
    monkeypatch.setattr(serverlimits, "MAX_CONNECTIONS", 50)
    monkeypatch.setattr(streams, "MAX_STREAMS", 30, raising=False)
    with table_server(tmp_path / "runs") as (port, path, _):
        clients = [open_stream(port, path, f"127.0.0.{n % 10 + 2}") for n in range(80)]
        time.sleep(0.5)
        base = "http://127.0.0.1:" + str(port)
        fresh = httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.200"),
                             timeout=5)
        with fresh:
            lobby = fresh.get(base + "/")
            live = fresh.get(base + path.removesuffix("/stream") + "/live")
        held = sum(not closed_by_server(client, 0.05) for client in clients)
    assert lobby.status_code == 200 and live.status_code == 200
    assert held <= 50
    for client in clients:
        client.close()


def test_a_client_that_reads_nothing_of_a_long_answer_is_dropped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A review of 100 KB and more asked for and never read: the server's writes pause,
    and after ``STALL_S`` the connection is dropped (it used to be held for good)."""
    monkeypatch.setattr(serverlimits, "STALL_S", 1.0, raising=False)
    made = serverlimits.BoundedH11Protocol.connection_made

    def small_buffers(self, transport):  # type: ignore[no-untyped-def]
        sock = transport.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        made(self, transport)

    monkeypatch.setattr(serverlimits.BoundedH11Protocol, "connection_made", small_buffers)
    runs = tmp_path / "runs"
    with live_server(runs) as (port, _):
        base = f"http://127.0.0.1:{port}"
        form = seat_form("lighthouse-keeper", "demo", {}, 4)
        assert httpx.post(f"{base}/tables", data=form, headers={"Origin": base},
                          timeout=10).status_code in (200, 303)
        deadline = time.monotonic() + 60
        while not list(runs.glob("*/result.json")):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        game = next(runs.glob("*/result.json")).parent.name
        size = len(httpx.get(f"{base}/review/{game}", timeout=10).content)
        client = socket.socket()
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
        client.connect(("127.0.0.1", port))
        client.sendall(f"GET /review/{game} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
                       .encode())
        time.sleep(3.0)  # never reading, past STALL_S
        received, closed = 0, False
        client.settimeout(2)
        try:
            while chunk := client.recv(65536):
                received += len(chunk)
            closed = True
        except ConnectionResetError:
            closed = True
        except TimeoutError:
            pass
    assert size > 100_000
    assert closed and received < size, (closed, received, size)
    client.close()
