"""2,000 slow clients against `jubensha serve`'s limits: how many connections the server
holds, how long until it has closed every one, and whether a person's page is served
meanwhile.

Half the clients send a request head that never ends, half a head and part of a body;
they come from 40 loopback addresses (127.0.1.1-40, 50 each), so both the cap per address
(64) and the overall cap (500 open) come into play. Before the limits, all 2,000 stayed
open for as long as the clients liked (60 s and more) and a client that left mid-body
logged a traceback. Prints a table and ``slow_clients: ...``.

    python bench/slow_clients.py [--clients 2000] [--addresses 40]
"""

from __future__ import annotations

import argparse
import socket
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jubensha.web import serverlimits
from tests.web.live_server import head, live_server


def open_clients(port: int, count: int, addresses: int) -> list[socket.socket]:
    clients = []
    for number in range(count):
        client = socket.socket()
        client.bind((f"127.0.1.{number % addresses + 1}", 0))
        client.settimeout(5)
        try:
            client.connect(("127.0.0.1", port))
            client.sendall(head(port)[:30] if number % 2 else head(port) + b"script=x")
        except OSError:
            pass  # refused before it could send: counted as closed below
        clients.append(client)
    return clients


def still_open(clients: list[socket.socket]) -> int:
    """Clients whose connection the server has not closed (checked without waiting)."""
    count = 0
    for client in clients:
        client.setblocking(False)
        try:
            count += client.recv(1) != b""
        except BlockingIOError:
            count += 1
        except OSError:
            pass
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=2000)
    parser.add_argument("--addresses", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as runs, live_server(Path(runs)) as (port, server):
        started = time.monotonic()
        clients = open_clients(port, args.clients, args.addresses)
        opened = time.monotonic() - started
        held = 0
        for _ in range(10):  # the most connections the server holds open (not closing)
            held = max(held, sum(not connection.transport.is_closing()
                                 for connection in list(server.server_state.connections)))
            time.sleep(0.1)
        page = time.monotonic()
        status = httpx.get(f"http://127.0.0.1:{port}/", timeout=30).status_code
        page_s = time.monotonic() - page
        while still_open(clients) and time.monotonic() - started < 60:
            time.sleep(0.25)
        all_closed = time.monotonic() - started
        left = still_open(clients)
        for client in clients:
            client.close()
    caps = f"cap {serverlimits.MAX_CONNECTIONS}, {serverlimits.MAX_PER_ADDRESS} per address"
    timeout = f"read timeout {serverlimits.READ_TIMEOUT_S:.0f} s"
    rows = [("clients (half a head, half a head and part of a body)", f"{args.clients:,}"),
            ("opened in", f"{opened:.1f} s"),
            ("most connections the server held open in the first second", f"{held:,} ({caps})"),
            ("a page fetched meanwhile", f"{status} in {page_s:.2f} s"),
            ("every connection closed after", f"{all_closed:.1f} s ({timeout})"),
            ("still open at the end", str(left))]
    for name, value in rows:
        print(f"{name:<60} {value}")
    print(f"slow_clients: {held:,} of {args.clients:,} held, all closed after "
          f"{all_closed:.1f} s, a page served in {page_s:.2f} s")


if __name__ == "__main__":
    main()
