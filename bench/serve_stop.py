"""How long `jubensha serve` takes to stop on SIGTERM while two browsers hold a page's
event stream open, idle and with busy processes beside it (the load of a shared machine).

Starts the server with a table of agents and one person, opens the spectator's and the
host's event streams, sends SIGTERM and times the exit; ``--busy N`` runs N processes that
spin meanwhile. Prints each try and ``serve_stop: ...``.

    python bench/serve_stop.py [--tries 3] [--busy 0 8] [--model local]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.web.test_web_serve import free_port, start, wait_until_up
from tests.web.web_helpers import seat_form


def spin() -> None:
    while True:
        pass


def hold(url: str, opened: threading.Event) -> None:
    try:
        with httpx.stream("GET", url, timeout=120) as stream:
            for _ in stream.iter_lines():
                opened.set()
    except httpx.HTTPError:
        pass


def one_stop(folder: Path, model: str) -> float:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    process = start(folder, port, "--model", model)
    try:
        wait_until_up(base, process)
        form = seat_form("lighthouse-keeper", "demo", {0: "human"}, 4, spectators="on")
        form.update({key: model for key in form if key.startswith("model")})
        started = httpx.post(base + "/tables", data=form, headers={"Origin": base})
        host = started.headers["location"]
        page = httpx.get(base + host).text
        watch = page.split('id="spectator" href="', 1)[1].split('"', 1)[0]
        events = [threading.Event(), threading.Event()]
        for url, opened in zip((base + watch + "/stream", base + host + "/stream"), events,
                               strict=True):
            threading.Thread(target=hold, args=(url, opened), daemon=True).start()
        assert all(opened.wait(60) for opened in events), "an event stream did not open"
        time.sleep(1)  # the agents are thinking
        stopping = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
        return time.monotonic() - stopping
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=3)
    parser.add_argument("--busy", type=int, nargs="+", default=[0, 8])
    parser.add_argument("--model", default="scripted",
                        help="The agents' model: scripted, or local (SmolLM2), whose calls "
                             "run in a thread that cannot be cut off mid-call.")
    args = parser.parse_args()
    summary = []
    for busy in args.busy:
        spinners = [multiprocessing.Process(target=spin, daemon=True) for _ in range(busy)]
        for spinner in spinners:
            spinner.start()
        time.sleep(2 if busy else 0)
        times = []
        with tempfile.TemporaryDirectory() as folder:
            for number in range(args.tries):
                times.append(one_stop(Path(folder) / str(number), args.model))
                print(f"busy {busy}: stopped {times[-1]:.2f} s after SIGTERM "
                      f"(load {os.getloadavg()[0]:.1f})", flush=True)
        for spinner in spinners:
            spinner.terminate()
        summary.append(f"{statistics.median(times):.2f} s (max {max(times):.2f}) "
                       f"with {busy} busy")
    print(f"serve_stop: {args.model} agents, median " + "; ".join(summary))


if __name__ == "__main__":
    main()
