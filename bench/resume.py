"""Resume: model calls a batch killed mid-game spends, against the same batch played
straight, measured in one run.

The batch (the bundled mysteries of ``--scripts`` x ``--seeds`` seeds, ``naive`` and ``thinkthrice``, the
scripted fake answering after ``--latency``) is played once uninterrupted; then again,
killed with SIGKILL ``--kills`` times (each time after a further share of the calls the
straight batch made had been written) and resumed with ``jubensha runs resume`` until it
finishes. Every call paid is counted from the run folders (``spent_calls`` of the index:
every attempt, calls answered from an earlier attempt's log not counted again). The last
line is ``resume: SPENT of NEEDED calls spent after K kills``; before mid-game resume a
killed game was played again from its start.

    python bench/resume.py [--seeds 3] [--kills 2] [--latency 0.02] [--scripts A,B,C]
"""

from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import figure, machine, table

SCRIPTS = "lighthouse-keeper,tingsong-tea-estate,halvard-observatory"
SPEC = """scripts: [{scripts}]
architectures: [naive, thinkthrice]
models: scripted
seeds: {{start: 0, count: {seeds}}}
embedder: none
concurrency: 4
model_options: {{latency_s: {latency}}}
"""


def jubensha(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "jubensha.cli", *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def logged_calls(root: Path) -> int:
    """Call records written under ``root`` so far (every attempt)."""
    total = 0
    for path in root.glob("*/calls.jsonl"):
        try:
            total += path.read_bytes().count(b"\n")
        except OSError:  # a folder set aside while we looked
            continue
    return total


def kill_at(process: subprocess.Popen[bytes], root: Path, calls: float) -> bool:
    """SIGKILL ``process`` once ``calls`` call records are written; False if it ended."""
    while process.poll() is None:
        if logged_calls(root) >= calls:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return True
        time.sleep(0.05)
    return False


def spent(root: Path) -> tuple[int, int, int]:
    """(calls the games used, calls paid over every attempt, attempts)."""
    with sqlite3.connect(f"file:{root / 'batch.sqlite'}?mode=ro", uri=True) as db:
        used, paid, attempts = db.execute(
            "SELECT SUM(calls), SUM(spent_calls), SUM(attempts) FROM games").fetchone()
    return used, paid, attempts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--kills", type=int, default=2)
    parser.add_argument("--latency", type=float, default=0.02)
    parser.add_argument("--scripts", default=SCRIPTS, help="Bundled mysteries, comma-separated.")
    args = parser.parse_args()
    scripts = args.scripts.split(",")
    print(f"{machine()} · {len(scripts)} mysteries × {args.seeds} seeds × naive, thinkthrice "
          f"· fake latency {1000 * args.latency:.0f} ms")
    with tempfile.TemporaryDirectory() as folder:
        spec = Path(folder) / "spec.yaml"
        spec.write_text(SPEC.format(scripts=", ".join(scripts), seeds=args.seeds,
                                    latency=args.latency), encoding="utf-8")
        straight = Path(folder) / "straight"
        started = time.perf_counter()
        assert jubensha("runs", "batch", str(spec), "--out", str(straight)).wait() == 0
        seconds = time.perf_counter() - started
        needed = spent(straight)[1]
        killed = Path(folder) / "killed"
        command = ["runs", "batch", str(spec), "--out", str(killed)]
        kills = 0
        while True:
            process = jubensha(*command)
            target = needed * (kills + 1) / (args.kills + 1)
            if kills < args.kills and kill_at(process, killed, target):
                kills += 1
            elif process.wait() == 0:
                break
            command = ["runs", "resume", str(killed)]
        used, paid, attempts = spent(killed)
    table("Calls of the batch played straight and killed", ["batch", "calls used",
          "calls paid", "attempts"], [["straight", str(needed), str(needed), "-"],
                                      [f"killed {kills}×, resumed", str(used), str(paid),
                                       str(attempts)]])
    print(f"straight batch: {seconds:.1f} s")
    figure("resume", f"{paid} of {needed} calls spent after {kills} kills")


if __name__ == "__main__":
    main()
