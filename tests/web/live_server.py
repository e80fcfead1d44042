"""The web app served by uvicorn on a loopback port in a thread, with the limits and
options ``jubensha serve`` gives it (``serverlimits.uvicorn_options``), and raw sockets
that play slow or vanishing clients (tests and ``bench/slow_clients.py``)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import uvicorn

from jubensha.web.app import Settings, create_app
from jubensha.web.serverlimits import uvicorn_options
from jubensha.web.tables import TableHost


@contextmanager
def live_server(runs: Path, proxies: list[str] | None = None,
                password: str | None = None) -> Iterator[tuple[int, uvicorn.Server]]:
    """The port of a running server over ``runs``, and the server; stopped on leaving."""
    app = create_app(Settings(runs=runs, models=["scripted"], password=password),
                     TableHost(runs))
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                            timeout_graceful_shutdown=1, **uvicorn_options(proxies or []))
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not (server.started and server.servers) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started, "the server did not start"
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield port, server
    finally:
        server.should_exit = True
        thread.join(10)


def head(port: int, method: str = "POST", path: str = "/tables", length: int = 1000,
         extra: str = "") -> bytes:
    origin = f"http://127.0.0.1:{port}"
    return (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: {origin}\r\n"
            f"Content-Type: application/x-www-form-urlencoded\r\n"
            f"Content-Length: {length}\r\n{extra}\r\n").encode()


def connect(port: int, data: bytes) -> socket.socket:
    """A client that sent ``data`` and then nothing more."""
    client = socket.create_connection(("127.0.0.1", port), timeout=5)
    client.sendall(data)
    return client


def closed_by_server(client: socket.socket, wait_s: float) -> bool:
    """Whether the server closed ``client``'s connection within ``wait_s``."""
    client.settimeout(wait_s)
    try:
        while client.recv(4096):
            pass
    except TimeoutError:
        return False
    except OSError:
        return True
    return True
