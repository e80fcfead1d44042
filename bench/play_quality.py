"""Are the offline games worth watching? N games per script on a model, guard off and on.

Each game is what ``jubensha play`` plays: the demo procedure, every seat the given
architecture (``detective`` by default, as play) with its defaults, seeds first..first+N-1.
Scripts are bundled ids or script files/folders (imported ones included): by default the
English ``lighthouse-keeper`` and the Chinese ``tingsong-tea-estate``; ``--languages``
keeps the scripts of those languages. Every game is scored by the ``self-disclosure``
metric and its votes:

- the seats that recited their sheet, the murderers who confessed, the degenerate speeches
  (a prompt or transcript label echoed, a copy of other seats, loops, empty or cut off);
- valid votes (the seat's own choice, not the table's fallback); the identification as
  reports define it (each game's share of its counted ballots on a culprit, averaged over
  games; ballots are never pooled across games), with its 95% interval by the reports'
  method (``runs.statistics``: none for a few games, saying so); and the games whose
  murderers were caught, a trial per game, with its 95% Wilson interval;
- what the public talk covered: the share of the script's clues whose words it took up,
  and of the other characters it named;
- the guard's cost (rewrites, safe lines) and the model calls of a game.

Timings are wall seconds and CPU seconds of this process per game with the load average
beside them: on a shared machine only CPU seconds approach what an idle one takes.
``--concurrency K`` plays K games at once on the one model (a local model decodes their
calls together: more games per hour on a busy machine, and no per-game timings).

    python bench/play_quality.py [--model local:qwen2.5-coder-1.5b] [--games 5]
        [--scripts lighthouse-keeper,tingsong-tea-estate,PATH] [--languages en,zh]
        [--guard on] [--architecture detective] [--out DIR] [--concurrency 1]
        [--first-seed 0]
    python bench/play_quality.py --score DIR...   # score games played before, play none

Games already finished in ``--out`` are scored again, not replayed, so an interrupted
bench resumes. Ends with one line ``quality: …``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import time
from collections.abc import Awaitable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

from common import figure, machine, table, wilson

from jubensha.agents.detective.knowledge import name_forms
from jubensha.engine import CharacterSheet, Spoke
from jubensha.engine.events import Failure
from jubensha.engine.procedure import find_procedure
from jubensha.eval.registry import MetricContext
from jubensha.eval.report import MetricResult
from jubensha.eval.self_disclosure import SelfDisclosure, disclosure
from jubensha.eval.vote_metrics import final_ballots, identification_metric
from jubensha.llm.base import Model
from jubensha.llm.calls import NOT_A_CALL
from jubensha.llm.local import LocalModel
from jubensha.llm.registry import ModelOptions, parse_model_spec
from jubensha.memory.text import TokenizerOptions
from jubensha.runlog.folder import RunLog, read_run
from jubensha.runs.play import PlayConfig, plan_seats, play_game
from jubensha.runs.statistics import estimate
from jubensha.scripts import Script, load_script
from jubensha.scripts.bundled import bundled_scripts, find_script

T = TypeVar("T")
DEFAULT_SCRIPTS = "lighthouse-keeper,tingsong-tea-estate"
POOL_PER_GAME = 12_288
"""KV-cache tokens per game under way: five seats' prompts of ~2,000 tokens, and room."""
TOUCH_WORDS = 3
"""Content words a clue must share with the public talk to count as taken up."""


@dataclass
class Game:
    """One scored game."""

    script: str
    language: str
    guard: bool
    seconds: float | None
    cpu: float | None
    load: str
    disclosure: SelfDisclosure
    votes: int
    valid: int
    share: float | None
    """The game's identification: its counted ballots on a culprit over those counted."""
    caught: bool
    rewrites: int
    safe: int
    calls: int
    clues: float
    characters: float


@dataclass
class Row:
    games: list[Game] = field(default_factory=list)

    def cells(self) -> list[str]:
        g = self.games
        seats = sum(len(x.disclosure.seats) for x in g)
        murderers = sum(sum(s.murderer for s in x.disclosure.seats.values()) for x in g)
        speeches = sum(x.disclosure.speeches for x in g)
        votes = sum(x.votes for x in g)
        timed = [x for x in g if x.seconds is not None]
        return [str(len(g)), f"{sum(x.disclosure.reciting for x in g)}/{seats}",
                f"{sum(x.disclosure.confessions for x in g)}/{murderers}",
                f"{sum(x.disclosure.degenerate for x in g)}/{speeches}",
                f"{sum(x.valid for x in g)}/{votes}",
                _identification(g),
                f"{sum(x.caught for x in g)}/{len(g)} {wilson(sum(x.caught for x in g), len(g))}",
                f"{sum(x.clues for x in g) / len(g):.2f}",
                f"{sum(x.characters for x in g) / len(g):.2f}",
                (f"{sum(x.rewrites for x in g)}+{sum(x.safe for x in g)}"
                 f"/{sum(x.calls for x in g)}"),
                f"{sum(x.seconds or 0 for x in timed) / len(timed):.0f}" if timed else "–",
                f"{sum(x.cpu or 0 for x in timed) / len(timed):.0f}" if timed else "–"]

    def summary(self) -> str:
        c = self.cells()
        return (f"recite {c[1]} seats, confess {c[2]}, degenerate {c[3]} speeches, "
                f"valid votes {c[4]}, identification {c[5]}, caught {c[6]}")


def _at_once(step: Awaitable[T]) -> T:
    """A coroutine that never waits (a metric that only counts), run without an event loop
    (``score`` is called from inside one)."""
    try:
        cast(Coroutine[Any, Any, T], step).send(None)
    except StopIteration as done:
        return cast(T, done.value)
    raise RuntimeError("the metric waited")


def _identification(games: list[Game]) -> str:
    """The mean of the games' identification shares with the reports' interval (scripts as
    clusters); – when no game counted a ballot."""
    scored = [(x.share, x.script) for x in games if x.share is not None]
    if not scored:
        return "–"
    return estimate([s for s, _ in scored], [c for _, c in scored]).render(2)


def open_script(source: str) -> Script:
    return find_script(source) if source in bundled_scripts() else load_script(source)


def coverage(script: Script, run: RunLog) -> tuple[float, float]:
    """The share of the script's clues whose words the public talk took up (at least
    ``TOUCH_WORDS`` content words of one speech), and of the characters it named (other
    than the speaker)."""
    talk = [e for e in run.events if isinstance(e, Spoke) and e.audience == "public"]
    sheet = CharacterSheet.for_seat(script, script.names[0])
    names = name_forms(sheet)
    tokens = TokenizerOptions(stopwords=True, keep_words=names.keep_words)
    spoken = [set(tokens.tokenize(names.strip(e.text, names.forms))) for e in talk]
    touched = sum(any(len(set(tokens.tokenize(names.strip(c.text, names.forms))) & words)
                      >= TOUCH_WORDS for words in spoken) for c in script.clues)
    named = {n for e in talk for n in names.mentioned(e.text, script.names) if n != e.speaker}
    return (touched / len(script.clues) if script.clues else 0.0,
            len(named) / len(script.names))


def score(folder: Path, seconds: float | None = None, cpu: float | None = None,
          load: str = "") -> Game:
    """A finished run folder's figures."""
    run = read_run(folder)
    meta = run.meta
    assert meta is not None and run.result is not None, f"{folder}: not a finished game"
    script = open_script(meta.script_source or meta.script_id)
    ballots = [b for found in final_ballots(run).values() for b in found]
    failed = sum(isinstance(e, Failure) and e.purpose == "vote" for e in run.events)
    counted: MetricResult = _at_once(identification_metric(MetricContext(script=script,
                                                                          run=run)))
    pairs = list(getattr(counted, "victims", {}).values())
    on, counted_ballots = sum(k for k, _ in pairs), sum(c for _, c in pairs)
    calls = run.calls
    clues, characters = coverage(script, run)
    return Game(script=script.id, language=meta.language,
                guard=any(s.guard for s in meta.seats.values()),
                seconds=seconds, cpu=cpu, load=load, disclosure=disclosure(script, run),
                votes=len(ballots), valid=len(ballots) - failed,
                share=on / counted_ballots if counted_ballots else None,
                caught=all(o.caught for o in run.result.outcomes) if run.result.outcomes
                else False,
                rewrites=sum(c.purpose == "guard" for c in calls),
                safe=sum(c.purpose == "guard.safe" for c in calls),
                calls=sum(c.model != NOT_A_CALL and not c.purpose.startswith("guard")
                          for c in calls),
                clues=clues, characters=characters)


def load_average() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def play(model: Model, spec: str, architecture: str, source: str, seed: int,
               guard: bool, folder: Path, timed: bool = True) -> Game:
    if (folder / "result.json").is_file():
        return score(folder)
    script = open_script(source)
    plans = plan_seats(script, f"{architecture}:guard" if guard else architecture, spec)
    before, started, cpu = load_average(), time.perf_counter(), cpu_seconds()
    await play_game(PlayConfig(script=script, procedure=find_procedure("demo"), plans=plans,
                               seed=seed, embedder="local", script_source=source),
                    folder, models={spec: model})
    seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu
    game = score(folder, seconds if timed else None, cpu if timed else None,
                 f"{before} → {load_average()}")
    print(f"{folder.name}: {seconds:.0f} s wall, {cpu:.0f} s CPU, load {game.load}; "
          f"{game.disclosure.reciting} reciting, {game.disclosure.confessions} confessed, "
          f"{game.disclosure.degenerate} degenerate, {game.valid}/{game.votes} valid votes, "
          f"identification {game.share if game.share is not None else '–'}, "
          f"caught: {game.caught}", flush=True)
    return game


async def play_all(args: argparse.Namespace) -> list[Game]:
    """Every game, ``--concurrency`` at a time on one model (a local model decodes the
    calls of games under way together, in its parallel slots)."""
    model = build_model(args.model, args.concurrency)
    gate = asyncio.Semaphore(args.concurrency)
    sources = [s for s in args.scripts if open_script(s).language in args.languages]

    async def one(seed: int, source: str, guard: bool) -> Game:
        name = open_script(source).id
        folder = args.out / f"{name}-{'guard' if guard else 'plain'}-s{seed}"
        async with gate:
            return await play(model, args.model, args.architecture, source, seed, guard,
                              folder, timed=args.concurrency == 1)
    try:
        return list(await asyncio.gather(*(
            one(seed, source, guard)
            for seed in range(args.first_seed, args.first_seed + args.games)
            for source in sources for guard in args.guard)))
    finally:
        await model.aclose()


def build_model(spec: str, games: int) -> Model:
    """The model; a local one gets KV cache for ``games`` games' seats at once."""
    model = parse_model_spec(spec, ModelOptions())
    if isinstance(model, LocalModel):
        model.pool_tokens = max(model.pool_tokens, games * POOL_PER_GAME)
    return model


def report(games: Sequence[Game], title: str) -> str:
    rows: dict[tuple[str, str, bool], Row] = {}
    for game in games:
        rows.setdefault((game.script, game.language, game.guard), Row()).games.append(game)
    table(title, ["script / language / guard", "games", "recited (seats)",
                  "confessed (murderers)", "degenerate (speeches)", "valid votes",
                  "identification [95%]", "caught [95%]", "clues taken up",
                  "characters named", "guard calls (rewrites+safe/game calls)", "wall s",
                  "CPU s"],
          [[f"{script} / {lang} / {'on' if guard else 'off'}", *row.cells()]
           for (script, lang, guard), row in sorted(rows.items())])
    return "; ".join(f"{script} ({lang}) guard {'on' if guard else 'off'}: {row.summary()}"
                     for (script, lang, guard), row in sorted(rows.items()))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="local:qwen2.5-coder-1.5b")
    parser.add_argument("--architecture", default="detective")
    parser.add_argument("--games", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0,
                        help="Seeds first..first+games-1 (to share games among processes).")
    parser.add_argument("--scripts", default=DEFAULT_SCRIPTS,
                        type=lambda text: [x.strip() for x in text.split(",") if x.strip()])
    parser.add_argument("--languages", default="en,zh",
                        type=lambda text: [x.strip() for x in text.split(",") if x.strip()])
    parser.add_argument("--guard", default="on",
                        type=lambda text: [x.strip() == "on" for x in text.split(",")])
    parser.add_argument("--out", type=Path, default=Path("runs/play-quality"))
    parser.add_argument("--concurrency", type=int, default=1,
                        help="Games at once on the one model (timings only at 1).")
    parser.add_argument("--score", type=Path, nargs="+",
                        help="Score these finished run folders; play nothing.")
    args = parser.parse_args(argv)
    print(machine(), f"· load {load_average()}")
    if args.score:
        games = [score(folder) for folder in args.score]
        title = f"{len(games)} games scored"
    else:
        games = asyncio.run(play_all(args))
        title = (f"{args.model} · {args.architecture} · demo · {args.games} game(s) per "
                 "script and setting")
    figure("quality", f"{title}: {report(games, title)}")


if __name__ == "__main__":
    sys.exit(main())
