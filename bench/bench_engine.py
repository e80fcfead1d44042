"""Engine overhead: whole games with naive agents and the instant scripted fake, so the
figures measure the engine, the agent's prompt building and the run log, not a model.

For each preset and bundled mystery it plays one game into a temporary run folder and
prints the wall time, model calls, events, and the milliseconds of overhead per call.

    python bench/bench_engine.py [--presets demo,player,thinkthrice] [--seed 0]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from jubensha.engine.procedure import find_procedure
from jubensha.llm.fake import ScriptedModel
from jubensha.runs.play import plan_seats, play_game
from jubensha.scripts.bundled import bundled_scripts, find_script


def bench(preset: str, script_id: str, seed: int, root: Path) -> tuple[float, int, int]:
    script = find_script(script_id)
    plans = plan_seats(script, "naive", "scripted")
    started = time.perf_counter()
    result = asyncio.run(play_game(script, find_procedure(preset), plans, seed=seed,
                                   out=root / f"{preset}-{script_id}",
                                   models={"scripted": ScriptedModel(seed=seed)}))
    return time.perf_counter() - started, result.usage.calls, result.events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", default="demo,player,thinkthrice")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"{'preset':<12} {'script':<22} {'seconds':>8} {'calls':>6} {'events':>7} "
          f"{'ms/call':>8}")
    with tempfile.TemporaryDirectory() as folder:
        for preset in args.presets.split(","):
            for script_id in bundled_scripts():
                seconds, calls, events = bench(preset, script_id, args.seed, Path(folder))
                print(f"{preset:<12} {script_id:<22} {seconds:8.2f} {calls:6d} {events:7d} "
                      f"{1000 * seconds / max(calls, 1):8.1f}")


if __name__ == "__main__":
    main()
