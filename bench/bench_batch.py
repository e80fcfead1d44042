"""Batch throughput: games per second at concurrency 1 and 4, measured in one run.

Two workloads on the three bundled mysteries (``demo`` procedure, no embedder):

- ``extractive``: the model-free agent, pure CPU in one Python thread, so concurrency can
  only add overhead (expect a ratio near 1);
- ``naive`` with the scripted fake answering after ``--latency`` seconds, standing in for a
  remote model whose calls wait on the network, which concurrency overlaps.

    python bench/bench_batch.py [--seeds 4] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from jubensha.runs.batch import Batch
from jubensha.runs.spec import load_spec
from jubensha.scripts.bundled import bundled_scripts


def write_spec(folder: Path, architecture: str, seeds: int, latency: float) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / f"{architecture}.yaml"
    path.write_text(
        f"scripts: [{', '.join(bundled_scripts())}]\narchitectures: [{architecture}]\n"
        f"models: scripted\nseeds: {{start: 0, count: {seeds}}}\nembedder: none\n"
        f"model_options: {{latency_s: {latency}}}\n", encoding="utf-8")
    return path


def games_per_second(spec: Path, out: Path, concurrency: int) -> tuple[int, float]:
    batch = Batch.open(load_spec(spec), out)
    try:
        started = time.perf_counter()
        summary = asyncio.run(batch.run(concurrency=concurrency))
        seconds = time.perf_counter() - started
    finally:
        batch.close()
    if summary.finished != summary.games:
        raise SystemExit(f"{summary.failed} game(s) failed in {out}")
    return summary.games, summary.games / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--latency", type=float, default=0.05,
                        help="Seconds the scripted fake waits per call (naive workload).")
    args = parser.parse_args()
    print(f"{'workload':<34} {'games':>5} {'c=1 games/s':>12} {'c=4 games/s':>12} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for architecture, latency in (("extractive", 0.0), ("naive", args.latency)):
            warm = write_spec(root / "warm", architecture, 1, 0.0)
            games_per_second(warm, root / f"{architecture}-warm", 1)  # imports, indexes, caches
            spec = write_spec(root, architecture, args.seeds, latency)
            games, one = games_per_second(spec, root / f"{architecture}-1", 1)
            _, four = games_per_second(spec, root / f"{architecture}-4", 4)
            label = architecture + (f" + scripted ({latency * 1000:.0f} ms/call)"
                                    if latency else "")
            print(f"{label:<34} {games:5d} {one:12.2f} {four:12.2f} {four / one:6.2f}")
    print(f"batch: naive c=4 / c=1 = {four / one:.2f}x")


if __name__ == "__main__":
    main()
