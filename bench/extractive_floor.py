"""The model-free extractive agent as a floor: its murderer identification against random
voting on the same ballots, every seat extractive, on every bundled mystery with every
preset over several seeds; with ``--held-out`` also on the imported WellPlay and MIRAGE
scripts of ``../shared/datasets``, which its evidence weights were never fitted on.

    python bench/extractive_floor.py [--seeds 5] [--held-out]

Random voting is the expectation of a voter that picks uniformly among the candidates its
ballot offers. The closing line gives the smallest margin over random of a bundled mystery.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from common import figure, machine, table

from jubensha.agents.registry import make_agent
from jubensha.engine.game import Game, Seat
from jubensha.engine.procedure import find_procedure
from jubensha.eval.vote_metrics import against_chance
from jubensha.scripts import Script, bundled_scripts, load_script
from jubensha.scripts.importers import discover, import_script

PRESETS = ("demo", "player", "thinkthrice", "whodunit", "mirage")
DATASETS = Path(__file__).parents[1].parent / "shared" / "datasets"
HELD_OUT = (("wellplay", "wellplay/english", "player"), ("wellplay", "wellplay/chinese", "player"),
            ("mirage", "mirage", "mirage"))


def play(script: Script, preset: str, seeds: int) -> tuple[int, int, float]:
    """Ballots on a culprit, ballots, and random voting's expectation, over ``seeds`` games
    (the demo with two rounds, as the experiments page's example spec plays it)."""
    procedure = find_procedure(preset).with_options(rounds=2 if preset == "demo" else None)
    total = (0, 0, 0.0)
    for seed in range(seeds):
        game = Game(script, procedure, {n: Seat(make_agent("extractive")) for n in script.names},
                    seed=seed)
        result = asyncio.run(game.run())
        hits, cast, chance = against_chance(script, procedure.voting, game.table.seats,
                                            result.votes)
        total = (total[0] + hits, total[1] + cast, total[2] + chance)
    return total


def row(name: str, preset: str, counts: tuple[int, int, float]) -> list[object]:
    hits, cast, chance = counts
    return [name, preset, f"{hits}/{cast}", f"{hits / cast:.2f}", f"{chance / cast:.2f}",
            f"{(hits - chance) / cast:+.2f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--held-out", action="store_true")
    args = parser.parse_args()
    print(machine())
    rows, margins = [], {}
    for script_id, path in bundled_scripts().items():
        script = load_script(path)
        per_preset = {preset: play(script, preset, args.seeds) for preset in PRESETS}
        rows += [row(script_id, preset, counts) for preset, counts in per_preset.items()]
        total = tuple(sum(c[i] for c in per_preset.values()) for i in range(3))
        rows.append(row(script_id, "all", total))  # type: ignore[arg-type]
        margins[script_id] = (total[0] - total[2]) / total[1]
    columns = ["mystery", "procedure", "on culprit", "extractive", "random", "margin"]
    table(f"Identification, every seat extractive, seeds 0-{args.seeds - 1}", columns, rows)
    if args.held_out:
        held = []
        for fmt, folder, preset in HELD_OUT:
            scripts = [import_script(fmt, f) for f in discover(fmt, DATASETS / folder)]
            counts = [play(s, preset, args.seeds) for s in scripts if s.murderers]
            total = tuple(sum(c[i] for c in counts) for i in range(3))
            held.append(row(f"{folder} ({len(counts)} scripts)", preset, total))  # type: ignore[arg-type]
        table("Held out: imported scripts never used to choose the weights", columns, held)
    worst = min(margins, key=margins.__getitem__)
    figure("extractive_floor", f"worst margin over random {margins[worst]:+.2f} ({worst})")


if __name__ == "__main__":
    main()
