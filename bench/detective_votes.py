"""Do the detectives find the murderer? Votes on the murderer by entrant, with baselines.

Plays the demo game (as ``jubensha play``) on generated mysteries (fresh seeds, every
level, English and Chinese) and on given scripts (bundled ids, script files or folders),
every seat the same entrant, and reports the share of ballots on the murderer (the
identification of docs/experiments.md: each game's share, their mean with the reports'
interval) and the murderers caught (95% Wilson interval). Entrants:

- any agent spec on ``--model`` (``detective``: readings by the model, speech by the model;
  ``detective:phrase=false``: readings by the model, the chosen facts said as they are);
- ``ledger:phrase=false``: the model-free evidence ledger (the old default's votes);
- ``truth``: the detective with its readings replaced by the true facts (generated
  mysteries only: their texts are written in a fact language the proof's reader reads
  whole), an upper bound for the adding-up, so the model's share is visible;
- the random ballot: each ballot on any other seat with equal chance (computed).

    python bench/detective_votes.py [--model local:qwen2.5-coder-1.5b]
        [--entrants detective:phrase=false,ledger:phrase=false,truth]
        [--levels easy,medium,hard] [--languages en,zh] [--seeds 7000-7001]
        [--scripts lighthouse-keeper,...] [--out runs/detective-votes]

Games already finished in ``--out`` are scored again, not replayed. Ends with one line
``detective_votes: …``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
from collections import defaultdict
from pathlib import Path

from common import figure, machine, table, wilson
from play_quality import Game, build_model, open_script, play

from jubensha.llm import Request, Response, ScriptedModel
from jubensha.llm.base import Model
from jubensha.runs.statistics import estimate
from jubensha.scripts import Script
from jubensha.scripts.proof.phrases import Reader as FactReader
from jubensha.scripts.proof.phrases import Said

TRUTH = "truth"
_ASKED = re.compile(r"^(?:Evidence: |证据：)(?P<text>.*?)\n\n(?:What does this evidence show "
                    r"about (?P<person>.+?)\?|这条证据表明了(?P<person_zh>.+?)的什么？|Where was "
                    r"(?P<where>.+?) \(|(?P<where_zh>.+?)在什么地方)?", re.DOTALL)
_VOICED = re.compile(r"(?:At \d{1,2}:\d{2} \([^)]*\): |\d{1,2}:\d{2}（[^）]*）：)")
"""The mark a seat puts before an entry of its day when it tells it (``timeline.j2``)."""


class TruthReadings(Model):
    """Answers the detective's readings from the facts the text states (the proof's own
    reader), everything else from the scripted model."""

    name = "truth-readings"

    def __init__(self, script: Script) -> None:
        proof = script.truth.proof if script.truth else None
        if proof is None:
            raise ValueError(f"{script.id}: truth readings need a generated mystery")
        self.reader = FactReader(script.language, script.names, [proof.world.victim],
                                 proof.world.places, proof.world.items)
        self.inner = ScriptedModel()

    async def generate(self, request: Request) -> Response:
        found = _ASKED.match(request.messages[-1].text)
        if not request.purpose.startswith("detective.") or found is None:
            return await self.inner.generate(request)
        person = next((found.group(g) for g in ("person", "person_zh", "where", "where_zh")
                       if found.group(g)), "").strip()
        text = _VOICED.sub("", found.group("text"))
        said = self.reader.read(text, owner=person or request.seat)
        reply = (death(said) if request.purpose == "detective.death"
                 else place(said, person) if request.purpose == "detective.place"
                 else {"fact": reading(said, person)})
        return Response(text=json.dumps(reply, ensure_ascii=False), model=self.name)

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return await self.inner.embed(texts)


def reading(said: list[Said], person: str) -> str:
    """The fact the text states of ``person``."""
    for fact in said:
        if fact.kind in ("at", "alone") and fact.who == person:
            return "whereabouts"
    for fact in said:
        if fact.kind == "motive" and fact.who == person:
            return "motive"
        if fact.kind == "access" and person in fact.people:
            return "weapon"
    return "none"


def place(said: list[Said], person: str) -> dict[str, str]:
    """Where the text puts ``person``, from when to when."""
    for fact in said:
        if fact.kind in ("at", "alone") and fact.who == person:
            return {"place": fact.place or "", "start": fact.start or "", "end": fact.end or ""}
    return {"place": ""}


def death(said: list[Said]) -> dict[str, str]:
    dead = [f for f in said if f.kind in ("dead", "scene")]
    if dead:
        return {"state": "dead", "time": next((f.start for f in dead if f.start), ""),
                "place": next((f.place for f in dead if f.place), "")}
    alive = [f for f in said if f.kind == "alive"]
    return {"state": "alive", "time": alive[0].start or ""} if alive else {"state": "none"}


def generated(out: Path, levels: list[str], languages: list[str], seeds: list[int]
              ) -> list[str]:
    """Paths of fresh generated mysteries (written once into ``out``)."""
    paths: list[str] = []
    for level in levels:
        for seed in seeds:
            folder = out / "scripts" / f"{level}-s{seed}"
            if not folder.exists():
                subprocess.run(["jubensha", "scripts", "generate",
                                "--difficulty", level, "--seed", str(seed), "--lang", "both",
                                "--out", str(folder)], check=True, capture_output=True)
            paths += [str(p.parent) for p in sorted(folder.glob("*/script.yaml"))
                      if p.parent.name.endswith(tuple(f"-{lang}" for lang in languages))]
    return paths


def chance(source: str) -> float:
    """A random ballot's chance of the murderer: one of the other seats."""
    script = open_script(source)
    return 1 / max(1, len(script.names) - 1)


async def play_all(args: argparse.Namespace, sources: list[str]) -> list[tuple[str, str, Game]]:
    model = build_model(args.model, 1) if any(not e.startswith((TRUTH, "ledger"))
                                               for e in args.entrants) else ScriptedModel()
    played: list[tuple[str, str, Game]] = []
    try:
        for source in sources:
            for entrant in args.entrants:
                for seed in range(args.games):
                    played.append((source, entrant, await one(args, model, source, entrant,
                                                              seed)))
    finally:
        await model.aclose()
    return played


async def one(args: argparse.Namespace, model: Model, source: str, entrant: str, seed: int
              ) -> Game:
    script = open_script(source)
    slug = re.sub(r"[^\w.-]+", "_", f"{script.id}-{entrant}-s{seed}")
    folder = args.out / "games" / slug
    if entrant.partition(":")[0] == TRUTH:  # truth:OPTIONS sets the detective's options
        options = "+".join(["phrase=false", *filter(None, [entrant.partition(":")[2]])])
        return await play(TruthReadings(script), "scripted", f"detective:{options}",
                          source, seed, False, folder)
    spec = "scripted" if entrant.startswith("ledger") else args.model
    guard = "phrase=false" not in entrant  # the guard is for the model's speech
    return await play(model if spec == args.model else ScriptedModel(), spec, entrant,
                      source, seed, guard, folder)


def report(played: list[tuple[str, str, Game]], groups: dict[str, str]) -> str:
    cells: dict[tuple[str, str], list[tuple[str, Game]]] = defaultdict(list)
    for source, entrant, game in played:
        cells[(groups[source], entrant)].append((source, game))
    rows = []
    for (group, entrant), games in sorted(cells.items()):
        scored = [(g.share, source) for source, g in games if g.share is not None]
        shares = (estimate([s for s, _ in scored], [c for _, c in scored]).render(2)
                  if scored else "-")
        caught = sum(g.caught for _, g in games)
        odds = sum(chance(source) for source, _ in games) / len(games)
        rows.append([group, entrant, len(games), shares,
                     f"{caught}/{len(games)} {wilson(caught, len(games))}", f"{odds:.2f}",
                     f"{sum(g.cpu or 0 for _, g in games) / len(games):.0f}"])
    table("votes on the murderer (identification: each game's share, scripts as clusters)",
          ["set", "entrant", "games", "on the murderer", "caught [95%]", "random ballot",
           "CPU-s a game"], rows)
    return "; ".join(f"{r[0]} {r[1]} {r[3]}" for r in rows)


def group_of(source: str) -> str:
    script = open_script(source)
    level = script.truth.proof.knobs.level if script.truth and script.truth.proof else None
    return f"generated {level} {script.language}" if level else f"{script.id} {script.language}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="local:qwen2.5-coder-1.5b")
    parser.add_argument("--entrants", default="detective:phrase=false,ledger:phrase=false,truth",
                        type=lambda text: [x.strip() for x in text.split(",") if x.strip()])
    parser.add_argument("--levels", default="easy,medium,hard")
    parser.add_argument("--languages", default="en,zh")
    parser.add_argument("--seeds", default="7000-7001", help="generated mysteries' seeds")
    parser.add_argument("--games", type=int, default=1, help="games per script and entrant")
    parser.add_argument("--scripts", default="",
                        type=lambda text: [x.strip() for x in text.split(",") if x.strip()])
    parser.add_argument("--out", type=Path, default=Path("runs/detective-votes"))
    args = parser.parse_args()
    first, _, last = args.seeds.partition("-")
    seeds = list(range(int(first), int(last or first) + 1)) if args.seeds else []
    sources = [*(generated(args.out, args.levels.split(","), args.languages.split(","), seeds)
                 if args.levels and seeds else []), *args.scripts]
    print(machine(), flush=True)
    played = asyncio.run(play_all(args, sources))
    figure("detective_votes", report(played, {s: group_of(s) for s in sources}))


if __name__ == "__main__":
    main()
