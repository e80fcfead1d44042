"""Are the offline games worth watching? N games per script on a model, guard off and on.

Each game is what ``jubensha play`` plays: the demo procedure, every seat the given
architecture (``detective`` by default, as play) with its defaults, seeds first..first+N-1.
Scripts are bundled ids or script files/folders (imported ones included): by default the
English ``lighthouse-keeper`` and the Chinese ``tingsong-tea-estate``; ``--languages``
keeps the scripts of those languages. Every game is scored by the ``self-disclosure``
metric and its votes:

- the seats that recited their sheet, the murderers who confessed, the degenerate speeches
  (a question, a prompt or a transcript label echoed, a copy of other seats, an assistant's
  reply, loops, empty or cut off, the guard's fallbacks) and their share, and the share of
  speeches that fell back to the guard's fallback line;
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
    python bench/play_quality.py --reguard DIR... # the same drafts through today's guard

``--reguard`` takes games played with the guard on and judges, for every speech of a
guarded seat, the draft its agent wrote (from the guard's records in ``calls.jsonl``) as
the guard of this checkout would: the sentences that fail removed, the game's own rewrite
when every sentence failed and the game had asked for one, else a fallback line. It
prints the degenerate and fallback shares as played (before) and as this guard leaves the
same drafts (after), and where this guard would have asked for a rewrite that the game
never made (those count as fallbacks after: no model is called).

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
from jubensha.agents.disclosure import DisclosureSettings, screen_speech, window_set
from jubensha.agents.fallback import Fallback, kept_facts
from jubensha.agents.guard import tidy
from jubensha.agents.sentences import Verdict, judge, kept_text, removed
from jubensha.engine import CharacterSheet, Spoke
from jubensha.engine.events import Failure
from jubensha.engine.procedure import find_procedure
from jubensha.eval.registry import MetricContext
from jubensha.eval.report import MetricResult
from jubensha.eval.self_disclosure import (
    SelfDisclosure,
    Turn,
    canned_lines,
    disclosure,
    fallbacks,
    speaking_call,
    speech_check,
    turns,
)
from jubensha.eval.vote_metrics import final_ballots, identification_metric
from jubensha.llm.base import Message, Model, ModelError, Request
from jubensha.llm.calls import NOT_A_CALL, CallRecord
from jubensha.llm.local import LocalModel
from jubensha.llm.registry import ModelOptions, parse_model_spec
from jubensha.memory.text import TokenizerOptions
from jubensha.prompts import render
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

    @property
    def fallbacks(self) -> int:
        return self.disclosure.fallbacks


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
        degenerate = sum(x.disclosure.degenerate for x in g)
        fallbacks = sum(x.fallbacks for x in g)
        return [str(len(g)), f"{sum(x.disclosure.reciting for x in g)}/{seats}",
                f"{sum(x.disclosure.confessions for x in g)}/{murderers}",
                f"{degenerate}/{speeches}", share(degenerate, speeches),
                share(fallbacks, speeches),
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
        return (f"recite {c[1]} seats, confess {c[2]}, degenerate {c[3]} speeches ({c[4]}), "
                f"fell back {c[5]}, valid votes {c[6]}, identification {c[7]}, caught {c[8]}")


def share(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "–"


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


@dataclass
class Reguard:
    """One guarded game's speeches as played and as this guard leaves the same drafts."""

    language: str
    speeches: int = 0
    before_degenerate: int = 0
    before_fallbacks: int = 0
    after_degenerate: int = 0
    after_fallbacks: int = 0
    unasked: int = 0
    """Speeches whose every sentence this guard removes, with no rewrite in the game."""
    examples: list[tuple[str, str, str]] = field(default_factory=list)
    """(kind, draft, after) of speeches this guard changed."""


GUARD_KINDS = {"question": "ask"}


def draft_of(run: RunLog, event: Spoke) -> tuple[str, str]:
    """(the agent's draft, the game's rewrite or "") of a speech: the guard's records
    name what they replaced; a speech with none was said as drafted."""
    mine = [c for c in run.calls if c.seat == event.speaker and c.purpose.startswith("guard")
            and c.seen is not None and c.seen < event.index]
    said = event.text.strip()
    record = next((c for c in reversed(mine) if c.purpose != "guard"
                   and (c.raw or "").strip() == said), None)
    rejected = record.messages[0].text if record is not None else said
    asked = next((c for c in reversed(mine) if c.purpose == "guard"
                  and tidy(c.raw or "", event.speaker) in (rejected, said)), None)
    if asked is None:
        return rejected, ""
    return _rewritten(asked), tidy(asked.raw or "", event.speaker)


def _rewritten(call: CallRecord) -> str:
    """The draft a rewrite call was shown (its assistant message before the reason)."""
    return call.messages[-2].text if len(call.messages) >= 2 else ""


async def reguard(folder: Path, model: Model | None = None) -> Reguard:
    run = read_run(folder)
    assert run.meta is not None, f"{folder}: not a run folder"
    script = open_script(run.meta.script_source or run.meta.script_id)
    settings = DisclosureSettings()
    found = Reguard(run.meta.language)
    fell_back, canned = fallbacks(run), canned_lines(script, run.meta.language)
    spares: dict[str, Fallback] = {}
    for turn in turns(script, run, settings):
        event = turn.event
        text = event.text.strip()
        was_fallback = (event.speaker, text) in fell_back or text in canned
        found.speeches += 1
        found.before_fallbacks += was_fallback
        found.before_degenerate += was_fallback or bool(
            speech_check(text, turn, settings).degenerate)
        plan = run.meta.seats.get(event.speaker)
        if plan is None or not plan.guard:
            found.after_fallbacks += was_fallback
            found.after_degenerate += bool(speech_check(text, turn, settings).degenerate)
            continue
        sheet = CharacterSheet.for_seat(script, event.speaker)
        spare = spares.setdefault(event.speaker, Fallback(sheet))
        draft, rewrite = draft_of(run, event)
        if model is not None and not rewrite:
            rewrite = await _rewrite(model, run, turn, draft, sheet, settings)
        after, fell = _guarded(turn, draft, rewrite, spare, sheet, found, settings)
        found.after_fallbacks += fell
        found.after_degenerate += fell or bool(speech_check(after, turn, settings).degenerate)
        if after != text and len(found.examples) < 12:
            found.examples.append(("fallback" if fell else "kept", text, after))
    return found


async def _rewrite(model: Model, run: RunLog, turn: Turn, draft: str, sheet: CharacterSheet,
                   settings: DisclosureSettings) -> str:
    """The rewrite this guard would ask for, when every sentence of ``draft`` fails: the
    draft's own prompt, the draft and the reasons (as ``GuardedAgent.rewrite``)."""
    hearing = turn.hearing
    verdicts = judge(draft, hearing, asked=turn.asked, asking=turn.event.kind == "question",
                     cut=turn.cut, recites=screen_speech(draft, hearing.seat).recites(settings))
    call = speaking_call(run.calls, turn.event)
    if kept_text(verdicts, sheet.language) or call is None:
        return ""
    problems = list(dict.fromkeys(
        render("guard", "reason", sheet.language, kind=kind, evidence=evidence[:120])
        for v in removed(verdicts) for kind, evidence in v.faults))[:3]
    kind = GUARD_KINDS.get(turn.event.kind, turn.event.kind)
    asked = render("guard", "rewrite", sheet.language, me=sheet.me.name, kind=kind,
                   problems=problems, murderer=sheet.is_murderer)
    messages = [*call.messages, Message(role="assistant", content=draft),
                Message(role="user", content=asked)]
    try:
        response = await model.generate(Request(messages=messages, purpose="guard",
                                                seat=sheet.me.name, config=call.config))
    except ModelError:
        return ""
    return tidy(response.text, sheet.me.name)


def _guarded(turn: Turn, draft: str, rewrite: str, spare: Fallback, sheet: CharacterSheet,
             found: Reguard, settings: DisclosureSettings) -> tuple[str, bool]:
    """What this guard says for ``draft`` (see the module docstring), and whether it is a
    fallback."""
    hearing = turn.hearing
    if sheet.is_murderer:
        hearing.crime = window_set(kept_facts(sheet), hearing.seat.n)
    asking = turn.event.kind == "question"

    def verdicts(text: str, cut: bool) -> list[Verdict]:
        recites = screen_speech(text, hearing.seat).recites(settings)
        return judge(text, hearing, asked=turn.asked, asking=asking, cut=cut, recites=recites)
    if kept := kept_text(verdicts(draft, turn.cut), sheet.language):
        return kept, False
    if rewrite and (kept := kept_text(verdicts(rewrite, False), sheet.language)):
        return kept, False
    found.unasked += not rewrite
    kind = GUARD_KINDS.get(turn.event.kind, turn.event.kind)
    line = spare.line(kind, turn.asked or "", passes=lambda t: not removed(verdicts(t, False)))
    return line, True


async def reguard_all(folders: Sequence[Path], model: Model | None) -> list[Reguard]:
    try:
        return [await reguard(folder, model) for folder in folders]
    finally:
        if model is not None:
            await model.aclose()


def reguard_report(games: Sequence[Reguard]) -> str:
    rows = []
    for lang in sorted({g.language for g in games}):
        mine = [g for g in games if g.language == lang]
        n = sum(g.speeches for g in mine)
        rows.append([lang, len(mine), n,
                     share(sum(g.before_degenerate for g in mine), n),
                     share(sum(g.after_degenerate for g in mine), n),
                     share(sum(g.before_fallbacks for g in mine), n),
                     share(sum(g.after_fallbacks for g in mine), n),
                     sum(g.unasked for g in mine)])
    table("The same drafts: as played (before) and through this guard (after)",
          ["language", "games", "speeches", "degenerate before", "degenerate after",
           "fallback before", "fallback after", "rewrites not in the game"], rows)
    for game in games:
        for kind, before, after in game.examples:
            print(f"[{game.language} {kind}] {before[:100]!r} → {after[:100]!r}")
    return "; ".join(f"{r[0]}: {r[1]} games, {r[2]} speeches, degenerate {r[3]} → {r[4]}, "
                     f"fallback {r[5]} → {r[6]}" for r in rows)


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
                  "confessed (murderers)", "degenerate (speeches)", "degenerate share",
                  "fallback share", "valid votes",
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
    parser.add_argument("--reguard", type=Path, nargs="+",
                        help="Judge the drafts of these guarded games with this guard.")
    parser.add_argument("--rewrite-model", default="",
                        help="With --reguard: ask this model for the rewrites the games "
                             "never asked for (else those fall back).")
    args = parser.parse_args(argv)
    print(machine(), f"· load {load_average()}")
    if args.reguard:
        model = parse_model_spec(args.rewrite_model, ModelOptions()) if args.rewrite_model \
            else None
        figure("reguard", reguard_report(asyncio.run(reguard_all(args.reguard, model))))
        return
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
