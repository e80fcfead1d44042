"""Generated mysteries: how fast they are written, how alike they read, how hard each level
is for the model-free extractive floor, and whether the solver agent wins every game.

    python bench/generated.py [--count 1000] [--per-level 100] [--solver-games 20] [--first-seed 1000]

- **rate**: ``--count`` mysteries (5 players, medium, English) generated, proved, checked
  by ``validate`` and written as YAML, in one process and in two;
- **overlap**: the largest and the mean Jaccard similarity of word 3-grams (Chinese:
  character 3-grams) between any two scripts of a batch of 100 per language, the shared
  rules text left out and counted in;
- **floor**: every seat extractive, the demo procedure with two rounds, ``--per-level``
  mysteries per level (5 players, 1 act): the identification as reports define it (each
  game's share of its counted ballots on the murderer, averaged over games; ballots are
  never pooled across games) with its 95% interval by the reports' method (a cluster
  bootstrap over the mysteries from 10 of them; ``runs.statistics``), and whether the
  levels' intervals are apart;
- **shortcuts**: on the same mysteries, each guess of ``shortcuts.py`` that counts names,
  flags or order instead of reasoning (most named on cards, fewest or most mentioned in
  timelines, motive and key, first or last listed, random among owners...): its hits
  against chance (1 over the characters), and whether every one stays within 0.1 of it;
- **solver**: every seat the solver agent on the same mysteries in every procedure; its
  wins. The difficulty knobs were tuned on seeds 0-99; the default seeds start at 1000.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import resource
import tempfile
import time
from itertools import combinations, pairwise
from pathlib import Path

from common import figure, machine, table
from extractive_floor import play
from shortcuts import SHORTCUTS, chance, score

from jubensha.agents.registry import make_agent
from jubensha.engine.game import Game, Seat
from jubensha.engine.procedure import find_procedure, presets
from jubensha.runs.statistics import Estimate, estimate
from jubensha.scripts.generate.batch import requests, scripts, write_all
from jubensha.scripts.generate.knobs import LEVELS
from jubensha.scripts.model import Script

WORD = re.compile(r"\w+")
HAN = re.compile(r"[\u4e00-\u9fff]")


def rate(count: int, first: int, jobs: int) -> tuple[float, float]:
    """Wall and CPU seconds (this process and its workers) to generate and write ``count``
    mysteries with ``jobs`` processes."""
    with tempfile.TemporaryDirectory() as folder:
        started, cpu = time.perf_counter(), _cpu()
        for _ in write_all(requests(first, count, 5, 1, "medium"), "en", Path(folder), jobs):
            pass
        return time.perf_counter() - started, _cpu() - cpu


def _cpu() -> float:
    return sum(usage.ru_utime + usage.ru_stime for usage in (
        resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)))


def texts(script: Script, rules: bool) -> str:
    parts = [script.title, script.background, *(c.text for c in script.clues)]
    parts += [script.rules] if rules else []
    for c in script.characters:
        parts += [c.description, c.story, *c.secrets, *(e.text for e in c.timeline)]
    return "\n".join(parts)


def shingles(text: str, lang: str) -> set[int]:
    units = HAN.findall(text) if lang == "zh" else WORD.findall(text.lower())
    return {hash(tuple(units[i:i + 3])) for i in range(len(units) - 2)}


def overlap(batch: list[Script], rules: bool) -> tuple[float, float]:
    """The largest and the mean pairwise Jaccard similarity of the batch's 3-grams."""
    sets = [shingles(texts(s, rules), s.language) for s in batch]
    values = [len(a & b) / len(a | b) for a, b in combinations(sets, 2)]
    return max(values), sum(values) / len(values)


def floor(batch: list[Script]) -> tuple[Estimate, float]:
    """The identification (each game's share of ballots on the murderer, averaged over the
    games, with its interval clustered by mystery) and random voting's, over one demo game
    of two rounds per mystery."""
    shares, chances, mysteries = [], [], []
    for script in batch:
        hits, cast, chance = play(script, "demo", 1)
        if cast:
            shares.append(hits / cast)
            chances.append(chance / cast)
            mysteries.append(script.id)
    return estimate(shares, mysteries), sum(chances) / len(chances)


def solver_wins(batch: list[Script], preset: str) -> int:
    wins = 0
    for seed, script in enumerate(batch):
        game = Game(script, find_procedure(preset),
                    {n: Seat(make_agent("solver")) for n in script.names}, seed=seed)
        wins += asyncio.run(game.run()).winner == "civilians"
    return wins


def overlaps(first: int) -> float:
    rows = []
    for lang in ("en", "zh"):
        batch = list(scripts(requests(first, 100, 5, 1, "medium"), lang))  # type: ignore[arg-type]
        for rules in (False, True):
            top, mean = overlap(batch, rules)
            rows.append([lang, "with rules" if rules else "without rules", top, mean])
    table("Overlap: Jaccard of 3-grams between two scripts of a batch of 100",
          ["language", "texts", "largest", "mean"],
          [[*r[:2], f"{r[2]:.3f}", f"{r[3]:.3f}"] for r in rows])
    return max(r[2] for r in rows if r[1] == "without rules")


def _above(easier: Estimate, harder: Estimate) -> bool:
    """Whether the easier level's interval lies wholly above the harder one's (never for a
    level without an interval)."""
    if easier.ci_low is None or harder.ci_high is None:
        return False
    return easier.ci_low > harder.ci_high


def shortcuts(batches: dict[str, list[Script]]) -> float:
    """Each shortcut's hits per level beside chance; the largest distance from it."""
    rows, worst = [], 0.0
    for name, guess in SHORTCUTS.items():
        row: list[object] = [name]
        for batch in batches.values():
            hits = sum(score(guess, s) for s in batch) / len(batch)
            base = sum(map(chance, batch)) / len(batch)
            worst = max(worst, abs(hits - base))
            row.append(f"{hits:.2f}")
        rows.append(row)
    rows.append(["chance", *(f"{sum(map(chance, b)) / len(b):.2f}" for b in batches.values())])
    table("Shortcuts: share of mysteries each guess gets right (ties split)",
          ["shortcut", *batches], rows)
    return worst


def levels(first: int, per_level: int, solver_games: int) -> tuple[bool, str, bool, float]:
    """The floor per level (are the intervals apart?), the shortcuts and the solver's
    games."""
    rows, intervals, wins, batches = [], {}, [], {}
    for level in LEVELS:
        batch = list(scripts(requests(first, per_level, 5, 1, level), "en"))
        batches[level] = batch
        found, chance_share = floor(batch)
        intervals[level] = found
        rows.append([level, str(found.n), found.render(), found.method,
                     f"{chance_share:.3f}"])
        wins += [[level, preset, solver_wins(batch[:solver_games], preset),
                  min(solver_games, len(batch))] for preset in presets()]
    table(f"Extractive floor, demo with 2 rounds, {per_level} mysteries per level",
          ["level", "games", "identification [95%]", "interval", "random"], rows)
    table("Solver agent: games the civilians won", ["level", "procedure", "won", "games"],
          wins)
    worst = shortcuts(batches)
    apart = all(_above(intervals[a], intervals[b]) for a, b in pairwise(LEVELS))
    shares = ", ".join(f"{level} {intervals[level].mean:.2f}" for level in LEVELS)
    return apart, shares, all(w[2] == w[3] for w in wins), worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--per-level", type=int, default=100)
    parser.add_argument("--solver-games", type=int, default=20,
                        help="Mysteries per level the solver plays in every procedure.")
    parser.add_argument("--first-seed", type=int, default=1000)
    args = parser.parse_args()
    print(machine())
    timed = {jobs: rate(args.count, args.first_seed, jobs) for jobs in (1, 2)}
    seconds = {jobs: wall for jobs, (wall, _) in timed.items()}
    table(f"Rate: {args.count} mysteries generated, proved, validated and written as YAML "
          f"(load average {os.getloadavg()[0]:.1f})",
          ["processes", "wall s", "CPU s", "mysteries/s"],
          [[jobs, f"{wall:.1f}", f"{cpu:.1f}", f"{args.count / wall:.0f}"]
           for jobs, (wall, cpu) in timed.items()])
    largest = overlaps(args.first_seed)
    apart, shares, won, worst = levels(args.first_seed, args.per_level, args.solver_games)
    figure("generated", f"{args.count} mysteries in {min(seconds.values()):.1f} s; floor "
           f"{shares} ({'apart' if apart else 'OVERLAPPING'}); shortcuts within "
           f"{worst:.2f} of chance; solver won {'every' if won else 'NOT every'} game; "
           f"largest overlap {largest:.2f}")


if __name__ == "__main__":
    main()
