"""Framework overhead of every architecture: what is not the model, per model call.

Each architecture plays each bundled mystery once, with its own procedure, the instant
scripted fake and the embedder a game gets by default (``local``), into a temporary run
folder (events, calls, transcript: the logs a real game writes). The seconds spent inside
the model are timed and taken out; what is left (engine, prompt building, memory and
embeddings, parsing, logs) is the overhead, an absolute time per call on this machine at its
load of the moment. Set against a model call of 1 s it reads as a share of the game,
``overhead / (overhead + calls x 1 s)``; that is no ratio of two times measured in the run
(the 1 s is assumed), so it moves with the machine's load. Target: < 1% for every
architecture. The last line is the worst architecture's share.

    python bench/overhead.py [--architectures naive,player,...] [--scripts ID,...]
        [--seed 0] [--embedder local] [--profile ARCH]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from common import TimedModel, figure, machine, table

from jubensha.engine.procedure import find_procedure
from jubensha.llm.fake import ScriptedModel
from jubensha.memory.text import tokenize
from jubensha.runs.play import PlayConfig, plan_seats, play_game
from jubensha.scripts.bundled import bundled_scripts, find_script

PROCEDURES = {
    "naive": "demo", "extractive": "demo",
    **{f"thinkthrice:{a}": "thinkthrice" for a in ("none", "mr", "mr+sr", "mr+sr+sv1",
                                                    "mr+sr+sv3")},
    "player": "player", "werewolf": "player", "ocot": "player",
    "mirage": "mirage", "whodunit": "whodunit",
}
"""Each architecture with the procedure of its paper (naive and extractive: demo)."""


@dataclass
class Game:
    seconds: float
    model_s: float
    calls: int

    @property
    def overhead(self) -> float:
        return self.seconds - self.model_s


async def play(architecture: str, script_id: str, seed: int, embedder: str, root: Path) -> Game:
    script = find_script(script_id)
    model = TimedModel(ScriptedModel(seed=seed))
    out = root / f"{architecture.replace(':', '-')}-{script_id}"
    started = time.perf_counter()
    await play_game(PlayConfig(script=script, procedure=find_procedure(PROCEDURES[architecture]),
                               plans=plan_seats(script, architecture, "scripted"), seed=seed,
                               embedder=embedder), out, models={"scripted": model})
    return Game(time.perf_counter() - started, model.seconds, model.calls)


def share(overhead: float, calls: int) -> float:
    """Overhead as a share of the game if every model call took one second."""
    return overhead / (overhead + calls) if calls else 0.0


def profile(architecture: str, scripts: list[str], seed: int, embedder: str) -> None:
    """Print where the overhead of ``architecture`` goes (cumulative, top 25)."""
    profiler = cProfile.Profile()
    tokenize("预热")
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(play(architecture, scripts[0], seed, embedder, Path(folder) / "warm"))
        profiler.enable()
        for script_id in scripts:
            asyncio.run(play(architecture, script_id, seed, embedder, Path(folder)))
        profiler.disable()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(25)
    print(text.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--architectures", default=",".join(PROCEDURES))
    parser.add_argument("--scripts", default=",".join(bundled_scripts()))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--embedder", default="local")
    parser.add_argument("--profile", default=None, help="cProfile this architecture instead.")
    args = parser.parse_args()
    scripts = args.scripts.split(",")
    if args.profile:
        profile(args.profile, scripts, args.seed, args.embedder)
        return
    print(f"{machine()} · embedder {args.embedder} · seed {args.seed}")
    rows, shares = [], {}
    tokenize("预热")  # jieba loads its dictionary once per process (~1 s): not per game
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(play("naive", scripts[0], args.seed, args.embedder, Path(folder) / "warm"))
        for architecture in args.architectures.split(","):
            games = [asyncio.run(play(architecture, s, args.seed, args.embedder, Path(folder)))
                     for s in scripts]
            calls = sum(g.calls for g in games)
            overhead = sum(g.overhead for g in games)
            worst = max(games, key=lambda g: share(g.overhead, g.calls))
            cells = [architecture, PROCEDURES.get(architecture, "?"), calls,
                     f"{sum(g.seconds for g in games):.2f}", f"{sum(g.model_s for g in games):.2f}"]
            if not calls:  # a model-free agent: its whole game is the framework
                rows.append([*cells, "no model calls", "-", "-"])
                continue
            shares[architecture] = share(overhead, calls)
            rows.append([*cells, f"{1000 * overhead / calls:.2f}",
                         f"{100 * shares[architecture]:.3f}%",
                         f"{100 * share(worst.overhead, worst.calls):.3f}%"])
    table(f"Overhead per architecture, {len(scripts)} bundled mysteries, instant scripted "
          "fake (model time taken out)",
          ["architecture", "procedure", "calls", "wall s", "model s", "overhead ms/call",
           "if calls took 1 s", "worst mystery"], rows)
    worst = max(shares, key=shares.__getitem__)
    figure("overhead", f"{100 * shares[worst]:.2f}% ({worst})")


if __name__ == "__main__":
    main()
