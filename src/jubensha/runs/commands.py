"""`jubensha play` and `jubensha replay`: play a game live into a run folder, show one again."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, cast, get_args

import typer
from rich.table import Table
from rich.text import Text

from jubensha.agents.human import HumanAgent
from jubensha.agents.registry import AgentSpecError, make_agent
from jubensha.engine.decisions import Decision
from jubensha.engine.events import Event, Failure, StageStarted
from jubensha.engine.game import DEGRADED_SHARE
from jubensha.engine.narration import labels, outcome_text, purpose_label, winner_key
from jubensha.engine.procedure import ProcedureError, find_procedure, presets
from jubensha.engine.table import EventSink, purpose_of
from jubensha.jobs import (
    CallBar,
    Interrupted,
    estimate_line,
    run_job,
    stop_here,
    stop_unreachable,
)
from jubensha.llm.catalog import default_play_model, tiny_model_notice
from jubensha.llm.environment import MODEL_ENV
from jubensha.llm.health import DEFAULT_MAX_CONSECUTIVE, ModelUnreachable
from jubensha.llm.registry import ModelOptions
from jubensha.outdir import OutError, prepare_out
from jubensha.prompts import message, render
from jubensha.runlog.attempts import set_aside
from jubensha.runlog.folder import EVENTS, META, RunError, RunResult, read_run
from jubensha.runlog.resume import ResumeDiverged, ResumeError
from jubensha.runs.attempt import ERROR_FILE
from jubensha.runs.batch_commands import app as batch_app
from jubensha.runs.estimate import count_game_calls, worth_estimating
from jubensha.runs.importers.commands import import_app
from jubensha.runs.people import record_people
from jubensha.runs.play import (
    Continuation,
    GameHealth,
    PlayError,
    SeatPlan,
    build_models,
    continuation,
    default_out,
    guard_seats,
    plan_seats,
    play_game,
)
from jubensha.runs.presets import (
    Applied,
    PaperPreset,
    PresetError,
    find_preset,
    paper_presets,
    preset_overrides,
    seat_specs,
)
from jubensha.runs.transcript import LiveTranscript
from jubensha.scripts.bundled import DEFAULT_SCRIPT, find_script
from jubensha.scripts.io import ScriptError
from jubensha.scripts.model import Language
from jubensha.terminal import Terminal, fail

console = Terminal()
errors = Terminal(stderr=True)
runs_app = typer.Typer(help="Run folders: batches of games, resume, reports, and games "
                            "imported from elsewhere.", no_args_is_help=True)
runs_app.add_typer(batch_app)
runs_app.add_typer(import_app, name="import")

EXIT_DEGRADED = 4
"""The game ended but too many decisions fell back to defaults to count as a result."""


RUN_MARKERS = (META, EVENTS, ERROR_FILE)
"""Files that show a folder holds a run (``--overwrite`` empties only such a folder)."""


def play_inputs(script: str | None, record: Path | None,
                plans: dict[str, SeatPlan]) -> list[Path]:
    """The files a game reads or appends to, which ``--overwrite`` must never delete."""
    found = [Path(script)] if script and Path(script).exists() else []
    found += [record] if record else []
    found += [Path(plan.model.partition(":")[2]) for plan in plans.values()
              if plan.model.startswith("replay:")]
    return found


def with_preset(paper: PaperPreset, plans: dict[str, SeatPlan], procedure: str | None
                ) -> tuple[dict[str, SeatPlan], Applied]:
    """The seats with the paper's agent settings, and what the command line overrode."""
    specs, overridden = seat_specs(paper, {n: p.architecture for n, p in plans.items()})
    plans = {n: p.model_copy(update={"architecture": specs[n]}) for n, p in plans.items()}
    return plans, Applied(name=paper.name,
                          overridden={**preset_overrides(paper, procedure, None), **overridden})


class Progress:
    """The progress line: model calls so far, which stage of how many, whose turn it is,
    in the game's language."""

    def __init__(self, bar: CallBar, stages: int, lang: str):
        self.bar = bar
        self.stages = stages
        self.stage = 0
        self.title = ""
        self.lang = lang

    def on_event(self, event: Event) -> None:
        if isinstance(event, StageStarted):
            self.stage += 1
            self.title = event.title
            self.bar.note(message(self.lang, "stage_note", stage=self.stage,
                                  stages=self.stages, title=self.title))

    def on_ask(self, seat: str, decision: Decision) -> None:
        self.bar.note(message(self.lang, "turn_note", stage=self.stage, stages=self.stages,
                              title=self.title, seat=seat, purpose=purpose_label(
                                  purpose_of(decision), labels(self.lang))))


def play(
    script: Annotated[str | None, typer.Argument(
        help=f"Bundled script id or script file/folder (default: {DEFAULT_SCRIPT})")] = None,
    procedure: Annotated[str | None, typer.Option(
        "--procedure", "-p", help=f"Preset ({', '.join(presets())}) or procedure YAML "
        "(default: demo, or the --preset paper's).")] = None,
    preset: Annotated[str | None, typer.Option(
        "--preset", help="A paper's settings: procedure and the agents' budgets "
        f"({', '.join(paper_presets())}; docs/presets.md). Options given by hand win.")
    ] = None,
    agents: Annotated[str, typer.Option(
        "--agents", "-a", help="Default architecture of every seat, e.g. naive.")] = "naive",
    model: Annotated[str | None, typer.Option(
        "--model", "-m", envvar=MODEL_ENV,
        help="Default model: local, local:qwen2.5-coder-1.5b, local:<file.gguf>, "
        "openai:<model>, scripted, replay:<file> ($JUBENSHA_MODEL). Default: "
        "local:qwen2.5-coder-1.5b when installed, else local (SmolLM2).")
    ] = None,
    seat: Annotated[list[str] | None, typer.Option(
        "--seat", help='One seat: "NAME=MODEL", "NAME=ARCH@MODEL" or "NAME=ARCH@" '
        "(repeatable).")] = None,
    murderer_agents: Annotated[str | None, typer.Option(
        "--murderer-agents", help="Fixed-murderer protocol: the murderers' architecture, "
        "whatever --agents the civilians play.")] = None,
    murderer_model: Annotated[str | None, typer.Option(
        "--murderer-model", help="The murderers' model (fixed-murderer protocol).")] = None,
    guard: Annotated[bool | None, typer.Option(
        "--guard/--no-guard", help="Check what each model seat says before it is said "
        "(own secrets, confessions, echoes; docs/agents/guard.md). Default: on for naive "
        "seats on the embedded local models, off for the papers' architectures.")] = None,
    rounds: Annotated[int | None, typer.Option(
        min=1, help="Rounds of every open questioning stage.")] = None,
    questions: Annotated[int | None, typer.Option(
        min=1, help="Questions per questioning turn.")] = None,
    seed: Annotated[int, typer.Option(help="Turn order, tie breaks and sampling.")] = 0,
    out: Annotated[Path | None, typer.Option(
        help="Run folder, new or empty (default: runs/<timestamp>-<script>).")] = None,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Empty the --out run folder first if it holds a run.")] = False,
    lang: Annotated[str | None, typer.Option(
        help="Language of the host and prompts: en or zh (default: the script's).")] = None,
    base_url: Annotated[str | None, typer.Option(
        help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL).")] = None,
    temperature: Annotated[float | None, typer.Option(
        min=0, help="Temperature of the model calls that set none. Every architecture sets "
        "its own: change a seat's with its option, e.g. --agents naive:temperature=0.")
    ] = None,
    timeout: Annotated[float | None, typer.Option(
        min=0.1, help="Seconds one request to an openai: model may take (default: 120).")
    ] = None,
    retries: Annotated[int | None, typer.Option(
        min=0, help="Retries of a request on rate limits, server errors and timeouts "
        "(default: 4).")] = None,
    embedder: Annotated[str, typer.Option(
        help="Embeddings for agents' memory: local, openai:<model>, scripted, none.")
    ] = "local",
    record: Annotated[Path | None, typer.Option(
        help="Append every model call to this cassette (play it back with "
        "--model replay:<file>).")] = None,
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="Also show log-only events (votes, failures), and the cost "
        "as MPIRD-LLMA counts it.")] = False,
    hot_seat: Annotated[bool, typer.Option(
        "--hot-seat", help="Let several human seats share this terminal, taking turns "
        "behind a hand-over screen.")] = False,
    max_failures: Annotated[int, typer.Option(
        min=0, help="Stop the game when this many model calls in a row of one seat fail "
        "(0: never). A first call that cannot reach the model stops it at once.")
    ] = DEFAULT_MAX_CONSECUTIVE,
    degraded_share: Annotated[float, typer.Option(
        min=0, max=1, help="A game in which this share of decisions or more fell back to "
        "the table's defaults, or whose vote fell back for most seats, is no result "
        "(exit code 4).")] = DEGRADED_SHARE,
    resume: Annotated[Path | None, typer.Option(
        "--resume", help="Continue the interrupted game in this run folder: the calls its "
        "log holds are answered from it, then the game goes on live. Its script, procedure, "
        "seats, seed, language and embedder are the run's (meta.json).")] = None,
) -> None:
    """Play a murder mystery with LLM agents (and you: --seat "NAME=human") and write its
    run folder."""
    again: Continuation | None = None
    applied: Applied | None = None
    try:
        if resume is not None:
            if script is not None:
                raise PlayError("--resume continues the run's own game; give no script")
            again = continuation(resume, people=None)  # the people's moves: runs.people
            loaded, chosen, plans = again.script, again.procedure, again.plans
            seed, lang, embedder = again.seed, again.language, again.embedder
            script, out = again.script_source, resume
        else:
            paper = find_preset(preset) if preset else None
            loaded = find_script(script or DEFAULT_SCRIPT)
            named = procedure or (paper.procedure.value if paper else "demo")
            chosen = find_procedure(named).with_options(rounds=rounds, questions=questions)
            chosen.check_acts(loaded)
            plans = plan_seats(loaded, agents, model or default_play_model(), seat or [],
                               murderer_architecture=murderer_agents,
                               murderer_model=murderer_model, hot_seat=hot_seat)
            if paper is not None:
                plans, applied = with_preset(paper, plans, procedure)
            plans = guard_seats(plans, guard)
        seated = {name: make_agent(plan.architecture) for name, plan in plans.items()}
    except (ScriptError, ProcedureError, PlayError, PresetError, AgentSpecError) as exc:
        raise fail(str(exc)) from None
    humans = [name for name, agent in seated.items() if isinstance(agent, HumanAgent)]
    if humans and verbose:
        raise fail("--verbose shows log-only events (votes before the reveal, ratings, "
                   "failures) that a player at a human seat may not see")
    if lang is not None and lang not in get_args(Language):
        raise fail(f"--lang {lang!r}: use one of {', '.join(get_args(Language))}")
    language = cast(Language, lang or loaded.language)  # checked just above
    given: dict[str, object] = {"base_url": base_url, "temperature": temperature, "timeout_s": timeout,
             "max_retries": retries}
    options = ModelOptions.model_validate({key: value for key, value in given.items()
                                           if value is not None})
    target = out or default_out(loaded)
    try:
        if again is None:
            prepare_out(target, overwrite=overwrite, markers=RUN_MARKERS,
                        inputs=play_inputs(script, record, plans))
        clients = build_models(plans, options)  # before the header: a bad model is one line
    except (OutError, PlayError) as exc:
        if target.is_dir() and not any(target.iterdir()):
            target.rmdir()  # made just now, for nothing
        raise fail(str(exc)) from None

    played: list[Event] = []  # the game's events, for the summary (no re-reading the log)

    async def game() -> RunResult:
        shown: list[EventSink] = [progress.on_event, live] if progress else []
        try:
            return await play_game(
                loaded, chosen, plans, out=target, seed=seed, language=language,
                model_options=options, embedder=embedder, record=record,
                script_source=script or DEFAULT_SCRIPT, models=clients, agents=seated,
                sinks=[played.append, *shown],
                on_ask=progress.on_ask if progress else None,
                health=GameHealth(max_consecutive_failures=max_failures,
                                  degraded_share=degraded_share),
                resume=again.resume if again else None,
                preset=applied.model_dump() if applied else None,
                on_call=None if humans else bar.on_call)
        finally:
            for client in clients.values():
                await client.aclose()

    console.print(Text(message(language, "header", title=loaded.title, procedure=chosen.name,
                               seed=seed, folder=target), style="bold"))
    live = LiveTranscript(console, language, verbose)
    expected = None
    if not humans and worth_estimating(plans):
        expected = run_job(lambda: count_game_calls(loaded, chosen, plans, seed=seed,
                                                    language=language))
        console.print(Text(estimate_line(expected, [c.name for c in clients.values()],
                                         language, bar=console.is_terminal), style="dim"))
    if again is not None:
        kept = set_aside(target)
        if again.resume.source == target:
            again.resume.source = kept
        console.print(Text(message(language, "resuming", calls=len(again.resume.records),
                                   source=again.resume.source, kept=kept), style="dim"))
    moves = record_people(seated, target, again.resume.source if again else None)
    if moves:
        console.print(Text(message(language, "resuming_moves", moves=moves), style="dim"))
    # A human seat's own console shows what that seat sees; the omniscient live transcript
    # and the spinner (which would also overwrite the person's typing) stay off.
    bar = CallBar(console, message(language, "playing"), expected,
                  message(language, "calls"), eta=message(language, "eta"))
    with nullcontext() if humans else bar.shown():
        progress = None if humans else Progress(bar, chosen.stage_count(loaded), language)
        try:
            result = run_job(game)
        except PlayError as exc:
            raise fail(str(exc)) from None
        except ModelUnreachable as exc:
            stop_unreachable(errors, exc, message(language, "game_unplayed", folder=target),
                             language)
        except (ResumeError, ResumeDiverged) as exc:
            raise fail(str(exc)) from None
        except Interrupted:
            stop_here(errors, message(language, "game_kept", folder=target),
                      message(language, "game_again", folder=target), language)
    if humans:
        console.print(Text(render("human", "over", language, folder=target,
                                  transcript=target / "transcript.md"), style="bold"))
    summarise(result, target, played, verbose)
    if result.degraded:
        why = ("degraded_share" if result.fallbacks >= degraded_share * result.decisions
               else "degraded_decisive")
        errors.print(Text(message(language, "degraded"), style="bold red") + Text(message(
            language, why, fallbacks=result.fallbacks, decisions=result.decisions,
            share=degraded_share, reason=result.no_result)))
        raise typer.Exit(EXIT_DEGRADED)
    if any(plan.model.split(":")[0] == "local" for plan in plans.values()):
        console.print(message(language, "real_model_hint"))
    if any(plan.model == "local" for plan in plans.values()):
        console.print(Text(tiny_model_notice(language), style="bold yellow"))


def summarise(result: RunResult, folder: Path, events: Iterable[Event],
              verbose: bool = False) -> None:
    """Votes, outcome and token usage after a game, in the game's language; ``verbose``
    adds the run's cost as MPIRD-LLMA's table 2 counts it (a paper's accounting, not
    players' words)."""
    words = labels(result.language)
    for record in result.votes:
        title = (words["votes_for"].format(victim=record.victim) if record.victim
                 else words["votes"])
        table = Table(words["voter"], words["ballot"],
                      title=title + (words["revote"] if record.round > 1 else ""))
        for voter, target in record.ballots.items():
            table.add_row(voter, target or words["abstains"])
        console.print(table)
    for outcome in result.outcomes:
        console.print(Text(f"{outcome.victim or words['murderer']}{words['colon']}"
                           f"{outcome_text(outcome, words)}"))
    if not result.solution:
        console.print(Text(words["no_solution"], style="bold"))
    elif not result.degraded:  # a game nobody really played has no winner (see `play`)
        side = winner_key(result.winner, [m for o in result.outcomes for m in o.murderers])
        console.print(Text(words["winner"].format(side=words[f"side_{side}"]), style="bold"))
    usage = Table(words["seat"], words["prompt_tokens"], words["completion_tokens"],
                  words["model_seconds"], title=words["usage"])
    rows = {**result.usage.seats, words["total"]: result.usage.total}
    for name, used in rows.items():
        usage.add_row(name, str(used.prompt_tokens), str(used.completion_tokens),
                      f"{used.latency_s:.1f}")
    console.print(usage)
    console.print(Text(words["usage_note"], style="dim"))
    console.print(words["decisions"].format(decisions=result.decisions,
                                            fallbacks=result.fallbacks))
    console.print(Text(words["counts"].format(
        calls=result.usage.calls, failures=result.failures, events=result.events,
        seconds=result.duration_s, folder=folder, what=failed_what(events, words))))
    if verbose:
        console.print(Text(words["mirage_counts"].format(**result.usage.counts.model_dump()),
                           style="dim"))


def failed_what(events: Iterable[Event], words: dict[str, str]) -> str:
    """What failed, by seat and purpose in the game's language: " (Ann vote ×2, Bob answers)";
    "" when nothing did."""
    failures = [e for e in events if isinstance(e, Failure)]
    counted = Counter(f"{f.seat} {purpose_label(f.purpose, words)}" for f in failures)
    parts = [f"{what} ×{n}" if n > 1 else what for what, n in counted.most_common()]
    return words["paren"].format(words["sep"].join(parts)) if parts else ""


def replay(
    run_dir: Annotated[Path, typer.Argument(help="A run folder written by `jubensha play`.")],
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="Also show log-only events (votes, failures), and the cost "
        "as MPIRD-LLMA counts it.")] = False,
) -> None:
    """Show a finished or partial run's transcript again, as it was shown live."""
    try:
        run = read_run(run_dir)
    except RunError as exc:
        raise fail(str(exc)) from None
    lang = run.meta.language if run.meta else "en"
    live = LiveTranscript(console, lang, verbose)
    if run.meta is not None:
        console.print(Text(message(lang, "replay_header",
                                   title=run.meta.script_title or run.meta.script_id,
                                   procedure=run.meta.procedure.get("name", ""),
                                   seed=run.meta.seed), style="bold"))
    for event in run.events:
        live(event)
    if run.result is not None:
        summarise(run.result, run_dir, run.events, verbose)
    else:
        console.print(Text(message(lang, "not_finished"), style="bold yellow"))
