"""Batch throughput on a local Ray cluster against the local executor, measured in one run.

The workload: ``naive`` on the three bundled mysteries (``demo``, no embedder) with the
scripted fake answering after ``--latency`` seconds (a remote model's wait). The local
executor plays ``c`` games at once in one asyncio loop; the Ray executor sends each game to
a local cluster of ``--workers`` CPUs, one game per CPU (``cpus_per_game: 1``) or several
(``cpus_per_game`` below 1). Games per second exclude starting the cluster; a warm-up batch
starts the worker processes first. Ray keeps about one idle worker process per CPU and
starts (and imports jubensha in) a new one for each task beyond that, which costs several
games' worth of time when games wait on a model; the cluster is started with its pool's
soft limit raised to the games in flight (``RAY_num_workers_soft_limit``; ``--soft-limit 0``
keeps Ray's default). Needs ``pip install -e '.[ray]'``.

    python bench/bench_ray.py [--seeds 4] [--latency 0.2] [--workers 2] [--soft-limit N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

try:
    import ray
except ImportError:
    raise SystemExit("bench_ray: Ray is not installed (pip install -e '.[ray]')") from None

from jubensha.runs.batch import Batch
from jubensha.runs.spec import load_spec
from jubensha.scripts.bundled import bundled_scripts


def write_spec(folder: Path, name: str, seeds: int, latency: float, executor: str) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(
        f"scripts: [{', '.join(bundled_scripts())}]\narchitectures: [naive]\n"
        f"models: scripted\nseeds: {{start: 0, count: {seeds}}}\nembedder: none\n"
        f"model_options: {{latency_s: {latency}}}\nexecutor: {executor}\n", encoding="utf-8")
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
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--workers", type=int, default=2, help="CPUs of the Ray cluster.")
    parser.add_argument("--soft-limit", type=int, default=None,
                        help="Worker processes Ray keeps (default: 4 x workers; 0: Ray's).")
    args = parser.parse_args()
    soft = 4 * args.workers if args.soft_limit is None else args.soft_limit
    if soft:
        os.environ["RAY_num_workers_soft_limit"] = str(soft)
    started = time.perf_counter()
    ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    print(f"local Ray cluster of {args.workers} CPUs (worker soft limit "
          f"{soft or 'default'}) started in {time.perf_counter() - started:.1f} s")
    n = args.workers
    runs = [  # label, executor, concurrency
        (f"local, c={n}", "{kind: local}", n),
        (f"ray, {n} workers, 1 game each", "{kind: ray, cpus_per_game: 1}", 4 * n),
        (f"local, c={4 * n}", "{kind: local}", 4 * n),
        (f"ray, {n} workers, 4 games each", "{kind: ray, cpus_per_game: 0.25}", 4 * n),
    ]
    print(f"{'executor':<32} {'games':>5} {'games/s':>8}")
    rates: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        warm = write_spec(root, "warm", 3, 0.5, "{kind: ray, cpus_per_game: 0.25}")
        games_per_second(warm, root / "warm", 4 * n)  # start (and import in) 4n workers
        for i, (label, executor, concurrency) in enumerate(runs):
            spec = write_spec(root, f"run{i}", args.seeds, args.latency, executor)
            games, rate = games_per_second(spec, root / f"run{i}", concurrency)
            print(f"{label:<32} {games:>5} {rate:>8.3f}")
            rates.append(rate)
    ray.shutdown()
    print(f"ray: {rates[3] / rates[2]:.2f}x the local executor at c={4 * n}")


if __name__ == "__main__":
    main()
