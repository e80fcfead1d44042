"""Cost of each agent architecture: model calls, prompt and completion tokens and dollars
per game, per phase, as ratios to PLAYER*, beside the paper's table.

Every architecture plays the same script with the same procedure and model (the scripted
fake by default: deterministic and instant, so the figures count what each architecture
asks of a model). ``--preset paper:player`` gives every architecture the paper's settings
(its retrieval budgets) and procedure, as PLAYER* compared them. Two phases, as the paper's
table A5: ``gameplay`` (the game) and ``evaluation`` (each seat answering its WellPlay
questions after it, ``--samples`` passes; ``--no-evaluation`` skips it). Dollars are at the
prices of the paper's model (``PAPER_PRICES``). The ratios to ``player`` are printed next
to the gameplay cost the PLAYER* paper reports over its 12 scripts; docs/agents/baselines.md
explains where and why they differ. The extractive agent, which calls no model, is timed
instead: games per second.

    python bench/bench_agent_cost.py [--preset paper:player] [--model scripted|local]
        [--script lighthouse-keeper|WELLPLAY_FOLDER] [--procedure player] [--seeds 3]
        [--samples 3]
        [--murderer-agents ARCH] [--architectures player,thinkthrice,...] [--no-evaluation]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from jubensha.agents.registry import AgentSpecError, make_agent, split_spec
from jubensha.engine.game import Game, Seat
from jubensha.engine.procedure import Procedure, find_procedure
from jubensha.eval.registry import MetricContext
from jubensha.eval.wellplay_game import WellPlayOptions, questions_by_seat, wellplay
from jubensha.llm.base import Model
from jubensha.llm.calls import NOT_A_CALL, CallLog, CallRecord
from jubensha.llm.fake import ScriptedModel
from jubensha.llm.registry import parse_model_spec
from jubensha.runlog.folder import read_run
from jubensha.runs.play import PlayConfig, plan_seats, play_game
from jubensha.runs.presets import PaperPreset, find_preset
from jubensha.scripts.bundled import find_script
from jubensha.scripts.importers.wellplay import import_wellplay
from jubensha.scripts.model import Script

PAPER_GAMEPLAY_USD = {"player": 33.702, "thinkthrice": 40.464, "werewolf": 38.329,
                      "ocot": 46.162}
"""PLAYER* paper, table A5 'Overall / Gameplay': one game on each of 12 scripts, GPT-3.5."""
PAPER_PRICES = (0.003, 0.004)
"""US dollars per 1,000 prompt and completion tokens of the paper's model: GPT-3.5 on Azure
(the paper, "Efficiency and Cost Comparison", bills Azure's price list; its prompts of up
to 4,000 + 4,000 tokens need the 16k-context GPT-3.5 Turbo, $0.003 / $0.004 in 2023)."""
ARCHITECTURES = ["player", "thinkthrice", "werewolf", "ocot", "naive"]
PHASES = ("gameplay", "evaluation")


@dataclass
class Use:
    """One phase's model use, summed over games."""

    calls: int = 0
    prompt: int = 0
    completion: int = 0

    def add(self, records: list[CallRecord]) -> None:
        self.calls += len(records)
        self.prompt += sum(r.usage.prompt_tokens for r in records)
        self.completion += sum(r.usage.completion_tokens for r in records)

    @property
    def dollars(self) -> float:
        return (self.prompt * PAPER_PRICES[0] + self.completion * PAPER_PRICES[1]) / 1000


@dataclass
class Cost:
    games: int = 0
    phases: dict[str, Use] = field(default_factory=lambda: {p: Use() for p in PHASES})
    failures: list[int] = field(default_factory=list)
    purposes: dict[str, Use] = field(default_factory=dict)
    """Gameplay calls by their purpose's first word (sensor, pruner, question...)."""

    def add_gameplay(self, records: list[CallRecord]) -> None:
        self.phases["gameplay"].add(records)
        for record in records:
            name = record.purpose.split(".")[0] or "-"
            self.purposes.setdefault(name, Use()).add([record])

    def per_game(self, phase: str) -> tuple[float, float, float, float]:
        use, n = self.phases[phase], max(1, self.games)
        return use.calls / n, use.prompt / n, use.completion / n, use.dollars / n

    def dollars(self) -> float:
        return sum(self.per_game(p)[3] for p in PHASES)


def with_preset(spec: str, preset: PaperPreset | None) -> str:
    return preset.architecture(spec)[0] if preset else spec


def client(spec: str, seed: int) -> Model:
    return ScriptedModel(seed=seed) if spec == "scripted" else parse_model_spec(spec)


async def evaluation(script: Script, folder: Path, model: Model, samples: int) -> list[CallRecord]:
    """The seats' WellPlay answers after the game, ``samples`` passes: its calls."""
    log = CallLog()
    context = MetricContext(script=script, run=read_run(folder), answerer=model,
                            samples=samples, calls=log)
    await wellplay(context, WellPlayOptions())
    return log.sink.records


async def cost(script: Script, procedure: Procedure, architecture: str, murderers: str | None,
               args: argparse.Namespace, preset: PaperPreset | None) -> Cost:
    """Model use per phase over ``args.seeds`` games of ``architecture``."""
    found = Cost()
    spec = with_preset(architecture, preset)
    fixed = with_preset(murderers, preset) if murderers else None
    evaluate = args.evaluation and bool(questions_by_seat(script, "wellplay"))
    for seed in range(args.seeds):
        model = client(args.model, seed)
        with tempfile.TemporaryDirectory(prefix="jubensha-cost-") as tmp:
            out = Path(tmp) / "run"
            plans = plan_seats(script, spec, args.model, murderer_architecture=fixed)
            result = await play_game(PlayConfig(script=script, procedure=procedure,
                                                plans=plans, seed=seed),
                                     out, models={args.model: model})
            found.add_gameplay([c for c in read_run(out).calls if c.model != NOT_A_CALL])
            if evaluate:
                found.phases["evaluation"].add(await evaluation(script, out, model,
                                                                args.samples))
        found.games += 1
        found.failures.append(result.failures)
        await model.aclose()
    return found


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


def print_purposes(costs: dict[str, Cost]) -> None:
    """Each architecture's gameplay calls per game by purpose, the costliest first."""
    for architecture, c in costs.items():
        n = max(1, c.games)
        parts = sorted(c.purposes.items(), key=lambda item: -item[1].dollars)
        print(f"  {split_spec(architecture)[0]}: " + ", ".join(
            f"{name} {use.calls / n:.0f} calls {(use.prompt + use.completion) / n / 1000:.0f}k tok"
            for name, use in parts))


def print_table(costs: dict[str, Cost], reference: str) -> None:
    base = costs[reference]
    paper_base = PAPER_GAMEPLAY_USD.get(split_spec(reference)[0])
    print(f"{'architecture':<13}{'phase':<11}{'calls':>8}{'prompt tok':>12}{'compl tok':>11}"
          f"{'$ (paper)':>11}{'tokens ratio':>14}{'$ ratio':>9}{'paper $':>9}"
          f"{'paper ratio':>13}")
    for architecture, c in costs.items():
        name = split_spec(architecture)[0]
        paper = PAPER_GAMEPLAY_USD.get(name)
        for phase in PHASES:
            calls, prompt, completion, dollars = c.per_game(phase)
            if not calls and phase == "evaluation":
                continue
            base_phase = base.per_game(phase)
            tokens_ratio = ((prompt + completion) / sum(base_phase[1:3])
                            if sum(base_phase[1:3]) else float("nan"))
            dollars_ratio = dollars / base_phase[3] if base_phase[3] else float("nan")
            shown = phase == "gameplay" and paper and paper_base
            print(f"{name:<13}{phase:<11}{calls:>8.1f}{prompt:>12.0f}{completion:>11.0f}"
                  f"{dollars:>11.4f}{tokens_ratio:>14.2f}{dollars_ratio:>9.2f}"
                  f"{paper if shown else '-':>9}"
                  f"{f'{paper / paper_base:.2f}' if shown else '-':>13}")
    print("failures per game: " + ", ".join(f"{split_spec(a)[0]} "
                                             f"{statistics.mean(c.failures):.1f}"
                                             for a, c in costs.items()))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default=None, help="A paper preset, e.g. paper:player.")
    parser.add_argument("--model", default="scripted",
                        help="scripted (default) or local (SmolLM2); any model spec.")
    parser.add_argument("--script", default="lighthouse-keeper")
    parser.add_argument("--procedure", default=None,
                        help="Default: the preset's procedure, else player.")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--samples", type=int, default=3,
                        help="WellPlay evaluation passes (the paper's three).")
    parser.add_argument("--no-evaluation", dest="evaluation", action="store_false")
    parser.add_argument("--games", type=int, default=50, help="Extractive games timed.")
    parser.add_argument("--murderer-agents", default=None,
                        help="Fixed-murderer protocol: the murderers' architecture.")
    parser.add_argument("--architectures", default=",".join(ARCHITECTURES))
    args = parser.parse_args()
    preset = find_preset(args.preset) if args.preset else None
    script = (import_wellplay(Path(args.script))
              if (Path(args.script) / "json" / "script_info.json").is_file()
              else find_script(args.script))
    procedure = find_procedure(args.procedure or (preset.procedure.value if preset
                                                  else "player"))
    fixed = f", murderers fixed to {args.murderer_agents}" if args.murderer_agents else ""
    print(f"{script.title} ({len(script.names)} players) · procedure {procedure.name} · "
          f"model {args.model} · preset {preset.name if preset else 'none'} · mean of "
          f"{args.seeds} seeds{fixed} · $ at ${PAPER_PRICES[0]}/${PAPER_PRICES[1]} per 1K "
          "prompt/completion tokens (the paper's GPT-3.5)")
    costs: dict[str, Cost] = {}
    for architecture in filter(None, args.architectures.split(",")):
        problem = registered(with_preset(architecture, preset))
        if problem:
            print(f"skipped {architecture}: not registered yet ({problem})")
            continue
        started = time.process_time()
        costs[architecture] = await cost(script, procedure, architecture,
                                         args.murderer_agents, args, preset)
        print(f"  {split_spec(architecture)[0]}: {time.process_time() - started:.1f} "
              "CPU-seconds", flush=True)
    reference = next((a for a in costs if split_spec(a)[0] == "player"), None)
    if reference is None:
        reference = next(iter(costs), None)
        if reference is None:
            return
        print(f"player is not among the architectures: ratios are to {reference} instead")
    print_table(costs, reference)
    print("gameplay per game by purpose:")
    print_purposes(costs)
    rate = await games_per_second(script, procedure, args.games)
    print(f"extractive (no model): {rate:.1f} games/s on {script.id} ({procedure.name}, "
          f"every seat extractive)")
    base = costs[reference]
    print(f"agent_cost: {split_spec(reference)[0]} {base.per_game('gameplay')[0]:.0f} "
          f"calls/game, ${base.dollars():.4f}/game at the paper's prices; extractive "
          f"{rate:.1f} games/s")


if __name__ == "__main__":
    asyncio.run(main())
