"""Growth with the table: model calls, tokens and framework time per game as players grow
(4 to 12) and as open rounds grow (1 to 8), per architecture, with fitted exponents.

No bundled mystery seats 12, so the players series uses synthetic scripts: the bundled
4-player ``lighthouse-keeper`` with its civilians cloned under new names (their stories,
sheets and clues unchanged) up to N seats; the rounds series plays the real script with
its procedure's open rounds set to R. Every game uses the instant scripted fake; framework
time is the game's wall time less the time inside the model. The exponent b is the slope
of log(quantity) against log(players or rounds) (quantity ~ x^b). PLAYER* reads its
sensors per (victim, suspect) pair, so its calls grow faster than naive's; the last line
says by how much.

    python bench/scaling.py [--architectures naive,player,...] [--players 4,6,8,12]
        [--rounds 1,2,4,8] [--seed 0]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import numpy as np
from common import TimedModel, figure, machine, table

from jubensha.engine.procedure import Procedure, find_procedure
from jubensha.llm.fake import ScriptedModel
from jubensha.runs.play import PlayConfig, plan_seats, play_game
from jubensha.scripts.bundled import find_script
from jubensha.scripts.model import Script

BASE = "lighthouse-keeper"
PROCEDURES = {"naive": "demo", "thinkthrice": "thinkthrice", "player": "player",
              "werewolf": "player", "ocot": "player", "mirage": "mirage",
              "whodunit": "whodunit"}


def synthetic(players: int) -> Script:
    """``BASE`` with its civilians cloned as ``<name> II``, ``III``... up to ``players``."""
    script = find_script(BASE)
    civilians = [c for c in script.characters if c.name not in script.murderers]
    characters = list(script.characters)
    for k in range(players - len(characters)):
        source = civilians[k % len(civilians)]
        suffix = " " + "I" * (2 + k // len(civilians))
        characters.append(source.model_copy(update={
            "name": source.name + suffix, "aliases": [], "relationships": []}))
    return script.model_copy(update={"id": f"synthetic-{players}", "characters": characters})


async def play(script: Script, procedure: Procedure, architecture: str, seed: int,
               out: Path) -> tuple[int, int, float]:
    """(calls, tokens, framework seconds) of one game."""
    model = TimedModel(ScriptedModel(seed=seed))
    started = time.perf_counter()
    result = await play_game(PlayConfig(script=script, procedure=procedure,
                                        plans=plan_seats(script, architecture, "scripted"),
                                        seed=seed), out, models={"scripted": model})
    framework = time.perf_counter() - started - model.seconds
    return result.usage.calls, result.usage.total.total_tokens, framework


def exponent(xs: list[int], ys: list[float]) -> float:
    return float(np.polyfit(np.log(xs), np.log(np.maximum(ys, 1e-9)), 1)[0])


def series(architecture: str, axis: str, values: list[int], seed: int, root: Path
           ) -> list[tuple[int, int, float]]:
    procedure = find_procedure(PROCEDURES[architecture])
    games = []
    for value in values:
        script = synthetic(value) if axis == "players" else find_script(BASE)
        scaled = procedure if axis == "players" else procedure.with_options(rounds=value)
        out = root / f"{architecture}-{axis}-{value}"
        games.append(asyncio.run(play(script, scaled, architecture, seed, out)))
    return games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--architectures", default=",".join(PROCEDURES))
    parser.add_argument("--players", default="4,6,8,12")
    parser.add_argument("--rounds", default="1,2,4,8")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    axes = {"players": [int(v) for v in args.players.split(",")],
            "rounds": [int(v) for v in args.rounds.split(",")]}
    print(f"{machine()} · instant scripted fake · players: synthetic clones of {BASE}; "
          f"rounds: {BASE} with R open rounds")
    slopes: dict[tuple[str, str], float] = {}
    with tempfile.TemporaryDirectory() as folder:
        for axis, values in axes.items():
            rows = []
            for architecture in args.architectures.split(","):
                games = series(architecture, axis, values, args.seed, Path(folder))
                calls, tokens, seconds = zip(*games, strict=True)
                slopes[architecture, axis] = exponent(values, calls)
                rows.append([architecture, PROCEDURES[architecture],
                             " / ".join(str(c) for c in calls),
                             " / ".join(f"{t / 1000:.0f}k" for t in tokens),
                             " / ".join(f"{s:.2f}" for s in seconds),
                             f"{slopes[architecture, axis]:.2f}",
                             f"{exponent(values, tokens):.2f}",
                             f"{exponent(values, seconds):.2f}"])
            table(f"Per game as {axis} grow ({' / '.join(map(str, values))}); exponent b of "
                  f"quantity ~ {axis}^b",
                  ["architecture", "procedure", "calls", "tokens", "framework s",
                   "b calls", "b tokens", "b framework"], rows)
    if ("player", "players") in slopes and ("naive", "players") in slopes:
        gap = slopes["player", "players"] - slopes["naive", "players"]
        figure("scaling", f"calls ~ players^{slopes['player', 'players']:.2f} (player) vs "
               f"^{slopes['naive', 'players']:.2f} (naive): {gap:+.2f}")
    else:
        worst = max(slopes, key=slopes.__getitem__)
        figure("scaling", f"steepest calls exponent {slopes[worst]:.2f} ({worst[0]}, {worst[1]})")


if __name__ == "__main__":
    main()
