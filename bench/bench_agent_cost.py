"""Gameplay cost of each agent architecture: model calls and tokens per game, as ratios.

Every architecture plays the same script with the same procedure and the scripted model
(deterministic, instant), so the figures count what each architecture asks of a model, not
how fast a model is. They are printed as ratios to ``player`` (PLAYER*), next to the
gameplay cost the PLAYER* paper reports over its 12 scripts (table 2 / A5, US dollars)
as ratios to PLAYER*. An architecture that is not registered yet is skipped with a line
saying so. The extractive agent, which calls no model, is timed instead: games per second.

    python bench/bench_agent_cost.py [--script lighthouse-keeper] [--procedure player]
        [--seeds 3] [--murderer-agents ARCH] [--architectures player,thinkthrice,...]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from dataclasses import dataclass

from jubensha.agents.registry import AgentSpecError, make_agent
from jubensha.engine.game import Game, Seat
from jubensha.engine.procedure import Procedure, find_procedure
from jubensha.llm.calls import CallLog
from jubensha.llm.fake import ScriptedModel
from jubensha.scripts.bundled import find_script
from jubensha.scripts.model import Script

PAPER_GAMEPLAY_USD = {"player": 33.702, "thinkthrice": 40.464, "werewolf": 38.329,
                      "ocot": 46.162}
"""PLAYER* paper, table A5 'Overall / Gameplay': one game on each of 12 scripts, GPT-3.5."""
ARCHITECTURES = ["player", "thinkthrice", "werewolf", "ocot", "naive"]


@dataclass
class Cost:
    calls: float
    tokens: float
    failures: float


def seats(script: Script, architecture: str, murderers: str | None,
          model: ScriptedModel, log: CallLog) -> dict[str, Seat]:
    fixed = set(script.murderers) if murderers else set()
    return {name: Seat(make_agent(murderers if name in fixed and murderers else architecture),
                       model=log.seat(model, name)) for name in script.names}


async def cost(script: Script, procedure: Procedure, architecture: str, murderers: str | None,
               seeds: int) -> Cost:
    """Mean calls, tokens and failures per game over ``seeds`` games."""
    calls, tokens, failures = [], [], []
    for seed in range(seeds):
        log = CallLog()
        model = ScriptedModel(seed=seed)
        game = Game(script, procedure, seats(script, architecture, murderers, model, log),
                    seed=seed)
        result = await game.run()
        calls.append(len(log.sink.records))
        tokens.append(sum(r.usage.total_tokens for r in log.sink.records))
        failures.append(result.failures)
    return Cost(statistics.mean(calls), statistics.mean(tokens), statistics.mean(failures))


async def games_per_second(script: Script, procedure: Procedure, games: int) -> float:
    """Extractive games (every seat) per second of wall time, after one warm-up game."""
    await Game(script, procedure, {n: Seat(make_agent("extractive")) for n in script.names},
               seed=0).run()
    started = time.perf_counter()
    for seed in range(games):
        await Game(script, procedure, {n: Seat(make_agent("extractive")) for n in script.names},
                   seed=seed).run()
    return games / (time.perf_counter() - started)


def registered(architecture: str) -> str | None:
    """None when ``architecture`` can be built, else why not."""
    try:
        make_agent(architecture)
    except (AgentSpecError, ImportError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", default="lighthouse-keeper")
    parser.add_argument("--procedure", default="player")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--games", type=int, default=50, help="Extractive games timed.")
    parser.add_argument("--murderer-agents", default=None,
                        help="Fixed-murderer protocol: the murderers' architecture.")
    parser.add_argument("--architectures", default=",".join(ARCHITECTURES))
    args = parser.parse_args()
    script = find_script(args.script)
    procedure = find_procedure(args.procedure)
    fixed = f", murderers fixed to {args.murderer_agents}" if args.murderer_agents else ""
    print(f"{script.title} ({len(script.names)} players) · procedure {procedure.name} · "
          f"scripted model · mean of {args.seeds} seeds{fixed}")

    costs: dict[str, Cost] = {}
    for architecture in filter(None, args.architectures.split(",")):
        problem = registered(architecture)
        if problem:
            print(f"skipped {architecture}: not registered yet ({problem})")
            continue
        costs[architecture] = await cost(script, procedure, architecture, args.murderer_agents,
                                         args.seeds)
    reference = "player" if "player" in costs else next(iter(costs), None)
    if reference is None:
        return
    if reference != "player":
        print(f"player is not registered: ratios are to {reference} instead")
    base = costs[reference]
    paper_base = PAPER_GAMEPLAY_USD.get(reference)
    print(f"{'architecture':<14}{'calls/game':>12}{'tokens/game':>13}{'calls ratio':>13}"
          f"{'tokens ratio':>14}{'paper $':>9}{'paper ratio':>13}{'failures':>10}")
    for architecture, c in costs.items():
        paper = PAPER_GAMEPLAY_USD.get(architecture)
        paper_ratio = f"{paper / paper_base:.2f}" if paper and paper_base else "-"
        print(f"{architecture:<14}{c.calls:>12.1f}{c.tokens:>13.0f}{c.calls / base.calls:>13.2f}"
              f"{c.tokens / base.tokens:>14.2f}{paper if paper else '-':>9}{paper_ratio:>13}"
              f"{c.failures:>10.1f}")
    rate = await games_per_second(script, procedure, args.games)
    print(f"extractive (no model): {rate:.1f} games/s on {script.id} ({procedure.name}, "
          f"every seat extractive)")
    print(f"agent_cost: {reference} {base.calls:.0f} calls/game; extractive {rate:.1f} games/s")


if __name__ == "__main__":
    asyncio.run(main())
