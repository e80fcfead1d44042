"""How long the demo game takes on the embedded model, and what decoding the seats' calls
together in llama.cpp's parallel slots buys.

``--settings parallel,serial`` plays the same game (seed, language, seats) once per
setting in this process, each on the model loaded afresh: ``parallel`` lets calls made at
the same time (the votes) be decoded together, the default; ``serial`` makes them one at
a time, as before. The ratio of the two is measured in one run; on a busy machine compare
the CPU seconds, which the neighbours' load moves less than the wall time. ``--command`` times
``jubensha play`` itself, as a user runs it (model loading included): the demo game's time.
Every time is printed with the load average beside it and the CPU seconds the game used
(on a shared machine these are closer to what an idle one takes than the wall time).

    python bench/play_speed.py [--model local:qwen2.5-coder-1.5b] [--languages en,zh]
        [--settings parallel,serial] [--seed 0]
    python bench/play_speed.py --command [--languages en,zh]   # the demo game, timed

Ends with one line ``play_speed: …``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from common import figure, machine, table

from jubensha.engine.procedure import find_procedure
from jubensha.llm.local import LocalModel, unload_all
from jubensha.llm.registry import ModelOptions, parse_model_spec
from jubensha.runs.play import PlayConfig, plan_seats, play_game
from jubensha.scripts.bundled import find_script

SCRIPTS = {"en": "lighthouse-keeper", "zh": "tingsong-tea-estate"}
TARGET_S = 360
"""The demo game's time on an idle 2-core machine, in either language."""


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def cpu(who: int = resource.RUSAGE_SELF) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


async def game(spec: str, language: str, seed: int, parallel: bool, agents: str,
               folder: Path) -> tuple[float, float, str, int]:
    """(wall s, CPU s, load before → after, calls) of one game on a model loaded afresh
    (no setting finds the prompts of another's game in the KV cache)."""
    unload_all()
    model = parse_model_spec(spec, ModelOptions())
    if isinstance(model, LocalModel):
        model.parallel = parallel and not model.exact
    script = find_script(SCRIPTS[language])
    plans = plan_seats(script, agents, spec)
    before, started, used = load(), time.perf_counter(), cpu()
    try:
        result = await play_game(PlayConfig(script=script, procedure=find_procedure("demo"),
                                            plans=plans, seed=seed, embedder="local"), folder,
                                 models={spec: model})
    finally:
        await model.aclose()
    return (time.perf_counter() - started, cpu() - used, f"{before} → {load()}",
            result.usage.calls)


def command(spec: str, language: str, seed: int, folder: Path) -> tuple[float, float, str]:
    """(wall s, CPU s, load) of ``jubensha play`` as a user types it."""
    before, started, used = load(), time.perf_counter(), cpu(resource.RUSAGE_CHILDREN)
    subprocess.run(["jubensha", "play", SCRIPTS[language], "--model", spec, "--seed",
                    str(seed), "--out", str(folder)], check=True,
                   stdout=subprocess.DEVNULL)
    return (time.perf_counter() - started, cpu(resource.RUSAGE_CHILDREN) - used,
            f"{before} → {load()}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="local:qwen2.5-coder-1.5b")
    parser.add_argument("--languages", default="en,zh", type=lambda t: t.split(","))
    parser.add_argument("--settings", default="parallel,serial", type=lambda t: t.split(","))
    parser.add_argument("--agents", default="detective:guard",
                        help="The seats' architecture (what jubensha play seats).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--command", action="store_true",
                        help="Time `jubensha play` itself instead.")
    args = parser.parse_args(argv)
    print(machine(), f"· load {load()} · {args.model}")
    rows, figures = [], []
    with tempfile.TemporaryDirectory(prefix="play-speed-") as root:
        for language in args.languages:
            if args.command:
                wall, used, during = command(args.model, language, args.seed,
                                             Path(root) / language)
                rows.append([f"{language} · jubensha play", f"{wall:.0f}", f"{used:.0f}",
                             during, ""])
                figures.append(f"demo {language} {wall:.0f} s (CPU {used:.0f} s, load "
                               f"{during}; target {TARGET_S} s on an idle machine, where "
                               "wall time is about the CPU time of its one model thread)")
                continue
            found = {}
            for setting in args.settings:
                found[setting] = asyncio.run(game(
                    args.model, language, args.seed, setting == "parallel", args.agents,
                    Path(root) / f"{language}-{setting}"))
                wall, used, during, calls = found[setting]
                rows.append([f"{language} · {setting}", f"{wall:.0f}", f"{used:.0f}",
                             during, str(calls)])
            if {"parallel", "serial"} <= set(found):
                ratio = found["serial"][0] / found["parallel"][0]
                figures.append(f"{language} parallel {ratio:.2f}x faster than serial "
                               f"({found['parallel'][0]:.0f} vs {found['serial'][0]:.0f} s)")
            else:
                figures += [f"{language} {s} {v[0]:.0f} s (CPU {v[1]:.0f} s, load {v[2]})"
                            for s, v in found.items()]
    table("The demo game", ["game · setting", "wall s", "CPU s", "load before → after",
                            "calls"], rows)
    figure("play_speed", "; ".join(figures))


if __name__ == "__main__":
    sys.exit(main())
