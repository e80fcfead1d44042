"""The counterfactual audit over the whole matrix: every architecture on every procedure,
and a mixed table of every architecture on each procedure, on the bundled mysteries, every
seat audited (``jubensha.runs.counterfactual``: the truth, the clues' flags and the other
seats' sheets replaced, the other seats replaying their moves; the seat's events and calls
before the reveal must be the same). The scripted model plays every seat.

    python bench/counterfactual.py [--scripts lighthouse-keeper,...]
        [--architectures naive,...] [--procedures demo,...] [--seed 3]

Prints one row per game (seats audited, events and calls compared, the first divergence)
and ends with one line ``counterfactual: N seats, D diverged, C CPU-s, W s wall``. A
procedure that cannot play a script (too few acts) is skipped and counted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time

from common import console, figure, table

from jubensha.agents.registry import architectures
from jubensha.engine.procedure import ProcedureError, find_procedure, presets
from jubensha.llm.fake import ScriptedModel
from jubensha.runs.counterfactual import SeatAudit, audit_game
from jubensha.scripts import bundled_scripts, find_script

PLAYED = [name for name in architectures() if name != "human"]
SPECS = {"thinkthrice": "thinkthrice:mr+sr+sv1", "detective": "detective:guard"}
"""The architecture as it plays by default in the matrix (ThinkThrice's full method, the
detective with its speech guard)."""


def plans(names: list[str], architecture: str) -> dict[str, str]:
    """Every seat ``architecture``, or (``mixed``) the architectures in turn."""
    specs = [SPECS.get(a, a) for a in PLAYED]
    if architecture == "mixed":
        return {name: specs[i % len(specs)] for i, name in enumerate(names)}
    return dict.fromkeys(names, SPECS.get(architecture, architecture))


async def main(args: argparse.Namespace) -> tuple[int, int, int]:
    rows, audited, skipped = [], 0, 0
    diverged: list[SeatAudit] = []
    for name in args.scripts.split(","):
        script = find_script(name)
        for procedure in args.procedures.split(","):
            for architecture in args.architectures.split(","):
                try:
                    found = await audit_game(script, find_procedure(procedure),
                                             plans(script.names, architecture),
                                             seed=args.seed, embedder=ScriptedModel())
                except ProcedureError:
                    skipped += 1
                    continue
                audited += len(found)
                bad = [a for a in found if a.divergence is not None]
                diverged += bad
                first = bad[0].divergence if bad else None
                rows.append([name, procedure, architecture, str(len(found)),
                             str(sum(a.events for a in found)),
                             str(sum(a.calls for a in found)),
                             f"{bad[0].seat}: {first.what} {first.position}" if first
                             else "-"])
    table("counterfactual audit", ["script", "procedure", "architecture", "seats",
                                    "events", "calls", "first divergence"], rows)
    for audit in diverged:
        console.print(audit.model_dump_json(indent=1))
    return audited, len(diverged), skipped


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scripts", default=",".join(sorted(bundled_scripts())))
    parser.add_argument("--architectures", default=",".join([*PLAYED, "mixed"]))
    parser.add_argument("--procedures", default=",".join(presets()))
    parser.add_argument("--seed", type=int, default=3)
    arguments = parser.parse_args()
    wall, cpu = time.perf_counter(), time.process_time()
    seats, bad, skipped = asyncio.run(main(arguments))
    load = os.getloadavg()[0]
    figure("counterfactual", f"{seats} seats, {bad} diverged, {skipped} games skipped, "
           f"{time.process_time() - cpu:.0f} CPU-s, {time.perf_counter() - wall:.0f} s "
           f"wall, load {load:.1f}")
