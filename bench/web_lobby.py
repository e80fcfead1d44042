"""The web server while it parses a large ``--scripts`` folder: pages must keep being served.

A real server (uvicorn, as ``jubensha serve`` runs it) is started with N copies of the
bundled mysteries in a ``--scripts`` folder. The lobby is opened at once (it waits for the
scripts) while another client fetches a small page every 20 ms; the longest of those
fetches is how long the server stopped answering. Target: the longest stall stays under
10% of the parse (it was the whole parse, 6.2 s for one folder, when the lobby parsed on
the event loop). The last line is the longest stall as a share of the first lobby's time.

    python bench/web_lobby.py [--copies 100]
"""

from __future__ import annotations

import argparse
import shutil
import socket
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn
from common import figure, machine, table

from jubensha.scripts.bundled import bundled_scripts
from jubensha.web.app import Settings, create_app
from jubensha.web.commands import web_server
from jubensha.web.tables import TableHost


def scripts_folder(root: Path, copies: int) -> Path:
    folder = root / "scripts"
    folder.mkdir()
    sources = list(bundled_scripts().values())
    for number in range(copies):
        shutil.copytree(sources[number % len(sources)], folder / f"s{number}")
    return folder


def start(root: Path, folder: Path) -> tuple[uvicorn.Server, str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    tables = TableHost(root / "runs")
    app = create_app(Settings(runs=root / "runs", script_dirs=[folder], models=["scripted"]),
                     tables)
    server = web_server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                       log_level="warning"), tables)
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.01)
    return server, f"http://127.0.0.1:{port}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=100)
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        server, base = start(root, scripts_folder(root, args.copies))
        lobby: list[float] = []

        def open_lobby() -> None:
            began = time.perf_counter()
            httpx.get(base + "/", timeout=600).raise_for_status()
            lobby.append(time.perf_counter() - began)

        waiting = threading.Thread(target=open_lobby)
        waiting.start()
        stalls: list[float] = []
        with httpx.Client(timeout=600) as web:
            while waiting.is_alive():
                began = time.perf_counter()
                web.get(base + "/static/style.css").raise_for_status()
                stalls.append(time.perf_counter() - began)
                time.sleep(0.02)
        waiting.join()
        began = time.perf_counter()
        httpx.get(base + "/", timeout=60).raise_for_status()
        again = time.perf_counter() - began
        server.should_exit = True
    longest = max(stalls, default=0.0)
    table(f"The lobby with {args.copies} scripts in --scripts", ["measure", "seconds"], [
        ["first lobby (parsing every script)", f"{lobby[0]:.2f}"],
        ["second lobby (parsed once, cached)", f"{again:.3f}"],
        [f"longest small page while parsing ({len(stalls)} fetched)", f"{longest:.3f}"],
        ["median small page while parsing",
         f"{sorted(stalls)[len(stalls) // 2]:.3f}" if stalls else "-"]])
    figure("web_lobby", f"longest stall {longest / lobby[0]:.1%} of the first lobby's "
                        f"{lobby[0]:.1f} s (target < 10%)")


if __name__ == "__main__":
    main()
