"""What each ThinkThrice module costs: model calls and tokens per game, per ablation row.

Every seat of the bundled English 4-player mystery plays the paper's full procedure
(``thinkthrice`` preset: introductions, initial questioning, 2 + 3 open rounds, clue
cards, the vote) with the scripted fake model, once per seed; the figures are means over
the seeds, with ratios to ``thinkthrice:none``. Tokens are the fake's estimates of the
real prompts, so the ratios show how much more each module sends a real model; the
scripted replies decide how often SR finds missing facts and how often SV retries, so the
absolute SR/SV counts are an upper-range picture, not a prediction for a given model.

    python bench/bench_thinkthrice.py [--script lighthouse-keeper] [--seeds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections import Counter

from jubensha.agents.registry import make_agent
from jubensha.agents.thinkthrice import ABLATIONS
from jubensha.engine.game import Game, Seat
from jubensha.engine.procedure import find_procedure
from jubensha.llm.calls import CallLog, CallRecord, MemorySink
from jubensha.llm.fake import ScriptedModel
from jubensha.scripts.bundled import find_script


async def play(script_id: str, ablation: str, seed: int) -> tuple[list[CallRecord], float]:
    """One game in which every seat plays ``thinkthrice:<ablation>``; its calls and seconds."""
    script = find_script(script_id)
    sink = MemorySink()
    log = CallLog(sink)
    model = ScriptedModel(seed=seed)
    seats = {name: Seat(agent=make_agent(f"thinkthrice:{ablation}"), model=log.seat(model, name))
             for name in script.names}
    game = Game(script, find_procedure("thinkthrice"), seats, seed=seed)
    start = time.perf_counter()
    result = await game.run()
    if result.failures:
        raise SystemExit(f"{ablation}, seed {seed}: {result.failures} failed decision(s)")
    return sink.records, time.perf_counter() - start


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", default="lighthouse-keeper")
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()

    rows = {}
    for ablation in ABLATIONS:
        games = [await play(args.script, ablation, seed) for seed in range(args.seeds)]
        calls = [records for records, _ in games]
        rows[ablation] = {
            "calls": statistics.mean(len(records) for records in calls),
            "prompt": statistics.mean(sum(r.usage.prompt_tokens for r in rs) for rs in calls),
            "completion": statistics.mean(sum(r.usage.completion_tokens for r in rs)
                                          for rs in calls),
            "seconds": statistics.mean(seconds for _, seconds in games),
            "purposes": sum((Counter(r.purpose for r in rs) for rs in calls), Counter()),
        }
    base = rows["none"]
    base_tokens = base["prompt"] + base["completion"]
    print(f"ThinkThrice ablations on {args.script} (thinkthrice preset, scripted model, "
          f"mean of {args.seeds} seed(s) per row)\n")
    print(f"{'ablation':<12}{'calls/game':>11}{'prompt tok':>12}{'compl tok':>11}"
          f"{'total tok':>11}{'calls x':>9}{'tokens x':>10}{'game s':>8}")
    for ablation, row in rows.items():
        total = row["prompt"] + row["completion"]
        print(f"{ablation:<12}{row['calls']:>11.1f}{row['prompt']:>12.0f}"
              f"{row['completion']:>11.0f}{total:>11.0f}{row['calls'] / base['calls']:>9.2f}"
              f"{total / base_tokens:>10.2f}{row['seconds']:>8.2f}")
    print("\ncalls per game by purpose:")
    purposes = sorted({p for row in rows.values() for p in row["purposes"]})
    print(f"{'purpose':<15}" + "".join(f"{a:>11}" for a in rows))
    for purpose in purposes:
        print(f"{purpose:<15}" + "".join(
            f"{row['purposes'][purpose] / args.seeds:>11.1f}" for row in rows.values()))
    full = rows[ABLATIONS[-1]]
    print(f"thinkthrice: {ABLATIONS[-1]} makes {full['calls'] / base['calls']:.2f}x the calls "
          f"of none")


if __name__ == "__main__":
    asyncio.run(main())
