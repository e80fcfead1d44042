"""1,000 live streams that are never read, against `jubensha serve`'s stream caps: how many
the server holds, how fast a fresh client gets the lobby and a table's ``/live`` meanwhile,
and whether every held stream is let go once its time without news is up.

Four tables wait for their person (so their streams stay open); 1,000 clients from 50
loopback addresses (127.0.3.1-50, 20 each) ask for their spectators' streams and never
read a byte. Before the caps, 64 such streams from each of 10 addresses filled the 500
connections and a fresh address got connection errors. Loopback only; every loop is
bounded. Prints a table and ``stalled_streams: ...``.

    python bench/stalled_streams.py [--clients 1000] [--addresses 50] [--tables 4] [--idle 5]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import socket
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jubensha.web import serverlimits, streams
from tests.web.live_server import live_server
from tests.web.web_helpers import seat_form

FORM = seat_form("lighthouse-keeper", "demo", {0: "human"}, 4, spectators="on")


def watch_path(port: int) -> str:
    base = f"http://127.0.0.1:{port}"
    started = httpx.post(f"{base}/tables", data=FORM, headers={"Origin": base},
                         follow_redirects=False, timeout=30)
    page = httpx.get(base + started.headers["location"], timeout=30).text
    found = re.search(r'href="(/watch/[^"]+)"', page)
    assert found is not None, "the host page shows no spectators' link"
    return found.group(1)


def stall(port: int, paths: list[str], count: int, addresses: int) -> list[socket.socket]:
    clients = []
    for number in range(count):
        path = paths[number % len(paths)]
        client = socket.socket()
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        client.bind((f"127.0.3.{number % addresses + 1}", 0))
        client.settimeout(5)
        try:
            client.connect(("127.0.0.1", port))
            client.sendall(f"GET {path}/stream HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
                           .encode())
        except OSError:
            pass  # refused as it opened: counted as not held
        clients.append(client)
    return clients


def timed(client: httpx.Client, url: str) -> tuple[int, float]:
    started = time.monotonic()
    try:
        status = client.get(url).status_code
    except httpx.HTTPError:
        status = 0
    return status, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--addresses", type=int, default=50)
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--idle", type=float, default=5.0,
                        help="Seconds a stream without news is held (served: 60).")
    args = parser.parse_args()
    streams.IDLE_S = args.idle
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    wall = time.monotonic()
    with TemporaryDirectory() as runs, live_server(Path(runs)) as (port, server):
        paths = [watch_path(port) for _ in range(args.tables)]
        path = paths[0]
        slots = server.config.app.state.tables.streams  # type: ignore[attr-defined]
        burst = time.monotonic()
        clients = stall(port, paths, args.clients, args.addresses)
        while (len(server.server_state.tasks) > slots.total
               and time.monotonic() - burst < 30):  # every request answered or held
            time.sleep(0.1)
        settled = time.monotonic() - burst
        held = slots.total
        connections = sum(not c.transport.is_closing()
                          for c in list(server.server_state.connections))
        transport = httpx.HTTPTransport(local_address="127.0.4.1")
        with httpx.Client(transport=transport, timeout=30) as fresh:
            lobby, lobby_s = timed(fresh, f"http://127.0.0.1:{port}/")
            live, live_s = timed(fresh, f"http://127.0.0.1:{port}{path}/live")
        waited = time.monotonic()
        while slots.total and time.monotonic() - waited < args.idle + 30:
            time.sleep(0.1)
        let_go = time.monotonic() - waited
        left = slots.total
        for client in clients:
            client.close()
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu_s = used.ru_utime + used.ru_stime - cpu.ru_utime - cpu.ru_stime
    caps = (f"{streams.MAX_STREAMS} overall, {streams.MAX_PER_ADDRESS} per address, "
            f"{streams.MAX_PER_TABLE} per table; {serverlimits.MAX_CONNECTIONS} connections")
    rows = [("stalled stream requests", (f"{args.clients:,} from {args.addresses} addresses "
                                         f"to {args.tables} tables")),
            ("all answered or held after", f"{settled:.1f} s"),
            ("streams held", f"{held:,} ({caps})"),
            ("connections open", f"{connections:,}"),
            ("a fresh client's lobby", f"{lobby} in {lobby_s:.2f} s"),
            ("a fresh client's /live", f"{live} in {live_s:.2f} s"),
            ("every held stream let go after", f"{let_go:.1f} s (idle bound {args.idle:.0f} s)"),
            ("streams still held", str(left)),
            ("time", (f"{time.monotonic() - wall:.1f} s wall, {cpu_s:.1f} CPU-s, load "
                      f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"))]
    for name, value in rows:
        print(f"{name:<34} {value}")
    print(f"stalled_streams: {held:,} of {args.clients:,} held after {settled:.1f} s, lobby {lobby} in "
          f"{lobby_s:.2f} s, /live {live} in {live_s:.2f} s, all let go after {let_go:.1f} s")


if __name__ == "__main__":
    main()
