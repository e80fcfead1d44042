"""`jubensha play` and `jubensha replay`: play a game live into a run folder, show one again."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from jubensha.commandline import options_command
from jubensha.engine.events import Event, Failure
from jubensha.engine.game import share_was_the_rule
from jubensha.engine.narration import labels, outcome_text, purpose_label, winner_key
from jubensha.engine.procedure import presets
from jubensha.engine.table import EventSink
from jubensha.jobs import (
    CallBar,
    Interrupted,
    estimate_line,
    run_job,
    stop_here,
    stop_unreachable,
)
from jubensha.llm.base import Model
from jubensha.llm.catalog import tiny_model_notice
from jubensha.llm.environment import MODEL_ENV
from jubensha.llm.health import ModelUnreachable
from jubensha.outdir import OutError, prepare_out
from jubensha.prompts import message, render
from jubensha.runlog.attempts import set_aside
from jubensha.runlog.folder import RunError, RunResult, read_run
from jubensha.runlog.resume import ResumeDiverged, ResumeError
from jubensha.runs.batch_commands import app as batch_app
from jubensha.runs.estimate import count_game_calls, worth_estimating
from jubensha.runs.importers.commands import import_app
from jubensha.runs.people import record_people
from jubensha.runs.play import PlayError, build_models, play_game
from jubensha.runs.prepare import RUN_MARKERS, PlayOptions, PreparedGame, prepare_game
from jubensha.runs.presets import paper_presets
from jubensha.runs.progress import Progress
from jubensha.runs.transcript import LiveTranscript
from jubensha.scripts.bundled import DEFAULT_SCRIPT
from jubensha.terminal import Terminal, fail

console = Terminal()
errors = Terminal(stderr=True)
runs_app = typer.Typer(help="Run folders: batches of games, resume, reports, and games "
                            "imported from elsewhere.", no_args_is_help=True)
runs_app.add_typer(batch_app)
runs_app.add_typer(import_app, name="import")

EXIT_DEGRADED = 4
"""The game ended but too many decisions fell back to defaults to count as a result."""


ScriptArgument = Annotated[str | None, typer.Argument(
    help=f"Bundled script id or script file/folder (default: {DEFAULT_SCRIPT})")]
ProcedureOption = Annotated[str | None, typer.Option(
    "--procedure", "-p", help=f"Preset ({', '.join(presets())}) or procedure YAML "
    "(default: demo, or the --preset paper's).")]
PresetOption = Annotated[str | None, typer.Option(
    "--preset", help="A paper's settings: procedure and the agents' budgets "
    f"({', '.join(paper_presets())}; docs/presets.md). Options given by hand win.")]
AgentsOption = Annotated[str | None, typer.Option(
    "--agents", "-a", help="Default architecture of every seat, e.g. naive (default: "
    "detective, or the --preset paper's agent).")]
ModelOption = Annotated[str | None, typer.Option(
    "--model", "-m", envvar=MODEL_ENV,
    help="Default model: local, local:qwen2.5-coder-1.5b, local:<file.gguf>, "
    "openai:<model>, scripted, replay:<file> ($JUBENSHA_MODEL). Default: "
    "local:qwen2.5-coder-1.5b when installed, else local (SmolLM2).")]
SeatOption = Annotated[list[str] | None, typer.Option(
    "--seat", help='One seat: "NAME=MODEL", "NAME=ARCH@MODEL" or "NAME=ARCH@" '
    "(repeatable).")]
MurdererAgentsOption = Annotated[str | None, typer.Option(
    "--murderer-agents", help="Fixed-murderer protocol: the murderers' architecture, "
    "whatever --agents the civilians play.")]
MurdererModelOption = Annotated[str | None, typer.Option(
    "--murderer-model", help="The murderers' model (fixed-murderer protocol).")]
GuardOption = Annotated[bool | None, typer.Option(
    "--guard/--no-guard", help="Check what each model seat says before it is said "
    "(own secrets, confessions, echoes; docs/agents/guard.md). Default: on for naive "
    "and detective seats on the embedded local models, off for the papers' "
    "architectures.")]
RoundsOption = Annotated[int | None, typer.Option(
    min=1, help="Rounds of every open questioning stage.")]
QuestionsOption = Annotated[int | None, typer.Option(
    min=1, help="Questions per questioning turn.")]
SeedOption = Annotated[int, typer.Option(help="Turn order, tie breaks and sampling.")]
OutOption = Annotated[Path | None, typer.Option(
    help="Run folder, new or empty (default: runs/<timestamp>-<script>).")]
OverwriteOption = Annotated[bool, typer.Option(
    "--overwrite", help="Empty the --out run folder first if it holds a run.")]
LangOption = Annotated[str | None, typer.Option(
    help="Language of the host and prompts: en or zh (default: the script's).")]
BaseUrlOption = Annotated[str | None, typer.Option(
    help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL).")]
TemperatureOption = Annotated[float | None, typer.Option(
    min=0, help="Temperature of the model calls that set none. Every architecture sets "
    "its own: change a seat's with its option, e.g. --agents naive:temperature=0.")]
TimeoutOption = Annotated[float | None, typer.Option(
    min=0.1, help="Seconds one request to an openai: model may take (default: 120).")]
RetriesOption = Annotated[int | None, typer.Option(
    min=0, help="Retries of a request on rate limits, server errors and timeouts "
    "(default: 4).")]
EmbedderOption = Annotated[str, typer.Option(
    help="Embeddings for agents' memory: local, openai:<model>, scripted, none.")]
RecordOption = Annotated[Path | None, typer.Option(
    help="Append every model call to this cassette (play it back with "
    "--model replay:<file>).")]
VerboseOption = Annotated[bool, typer.Option(
    "--verbose", "-v", help="Also show log-only events (votes, failures), and the cost "
    "as MPIRD-LLMA counts it.")]
HotSeatOption = Annotated[bool, typer.Option(
    "--hot-seat", help="Let several human seats share this terminal, taking turns "
    "behind a hand-over screen.")]
MaxFailuresOption = Annotated[int, typer.Option(
    min=0, help="Stop the game when this many model calls in a row of one seat fail "
    "(0: never). A first call that cannot reach the model stops it at once.")]
DegradedShareOption = Annotated[float, typer.Option(
    min=0, max=1, help="A game in which this share of decisions or more fell back to "
    "the table's defaults, or whose vote fell back for most seats, is no result "
    "(exit code 4).")]
ResumeOption = Annotated[Path | None, typer.Option(
    "--resume", help="Continue the interrupted game in this run folder: the calls its "
    "log holds are answered from it, then the game goes on live. Its script, procedure, "
    "seats, seed, language and embedder are the run's (meta.json).")]


PLAY_PARAMETERS = {
    "script": ScriptArgument, "procedure": ProcedureOption, "preset": PresetOption,
    "agents": AgentsOption, "model": ModelOption, "seats": SeatOption,
    "murderer_agents": MurdererAgentsOption, "murderer_model": MurdererModelOption,
    "guard": GuardOption, "rounds": RoundsOption, "questions": QuestionsOption,
    "seed": SeedOption, "out": OutOption, "overwrite": OverwriteOption, "lang": LangOption,
    "base_url": BaseUrlOption, "temperature": TemperatureOption, "timeout": TimeoutOption,
    "retries": RetriesOption, "embedder": EmbedderOption, "record": RecordOption,
    "verbose": VerboseOption, "hot_seat": HotSeatOption, "max_failures": MaxFailuresOption,
    "degraded_share": DegradedShareOption, "resume": ResumeOption}
"""`jubensha play`'s option of each field of ``PlayOptions``, in the order its help lists."""


def play_game_command(options: PlayOptions) -> None:
    """Play a murder mystery with LLM agents (and you: --seat "NAME=human") and write its
    run folder."""
    try:
        game = prepare_game(options)
    except PlayError as exc:
        raise fail(str(exc)) from None
    clients = open_game(game, options.overwrite)
    result, played = play_live(game, clients, options.verbose)
    show_ending(game, result, played, options.verbose)


play = options_command(play_game_command, PlayOptions, PLAY_PARAMETERS)


def open_game(game: PreparedGame, overwrite: bool) -> dict[str, Model]:
    """The run folder made ready and the model clients built before anything is shown, so
    that a bad folder or model is one line (and leaves no empty folder behind)."""
    try:
        if not game.resumed:
            prepare_out(game.out, overwrite=overwrite, markers=RUN_MARKERS, inputs=game.inputs)
        return build_models(game.config.plans, game.config.model_options)
    except (OutError, PlayError) as exc:
        if game.out.is_dir() and not any(game.out.iterdir()):
            game.out.rmdir()  # made just now, for nothing
        raise fail(exc, game.config.game_language) from None


def play_live(game: PreparedGame, clients: dict[str, Model], verbose: bool
              ) -> tuple[RunResult, list[Event]]:
    """Play the game with its transcript and progress line on the terminal; the result and
    the game's events (for the summary, without reading the log again)."""
    config, language, target = game.config, game.config.game_language, game.out
    console.print(Text(message(language, "header", title=config.script.title,
                               procedure=config.procedure.name, seed=config.seed,
                               folder=target), style="bold"))
    if any(plan.architecture.partition(":")[0] == "detective"
           for plan in config.plans.values()):
        console.print(Text(message(language, "detective_seats"), style="dim"))
    live = LiveTranscript(console, language, verbose)
    expected = estimate(game, clients)
    if game.resumed:
        set_aside_attempt(game)
    resumed = game.config.resume
    try:
        moves = record_people(game.agents, target, resumed.source if resumed else None)
    except RunError as exc:  # the people's moves file of the run resumed
        raise fail(str(exc), language) from None
    if moves:
        console.print(Text(message(language, "resuming_moves", moves=moves), style="dim"))
    # A human seat's own console shows what that seat sees; the omniscient live transcript
    # and the spinner (which would also overwrite the person's typing) stay off.
    bar = CallBar(console, message(language, "playing"), expected,
                  message(language, "calls"), eta=message(language, "eta"))
    played: list[Event] = []
    with nullcontext() if game.humans else bar.shown():
        progress = None if game.humans else Progress(
            bar, config.procedure.stage_count(config.script), language)
        shown: list[EventSink] = [progress.on_event, live] if progress else []
        sinks: list[EventSink] = [played.append, *shown]
        try:
            result = run_job(lambda: _game(game, clients, sinks, progress, bar))
        except (PlayError, ResumeError, ResumeDiverged) as exc:
            raise fail(str(exc), language) from None
        except ModelUnreachable as exc:
            stop_unreachable(errors, exc, message(language, "game_unplayed", folder=target),
                             language)
        except Interrupted:
            stop_here(errors, message(language, "game_kept", folder=target),
                      message(language, "game_again", folder=target), language)
    return result, played


async def _game(game: PreparedGame, clients: dict[str, Model], sinks: list[EventSink],
                progress: Progress | None, bar: CallBar) -> RunResult:
    try:
        return await play_game(game.config, game.out, models=clients, agents=game.agents,
                               sinks=sinks, on_ask=progress.on_ask if progress else None,
                               on_draft=progress.on_draft if progress and console.is_terminal
                               else None,
                               on_call=None if game.humans else bar.on_call)
    finally:
        for client in clients.values():
            await client.aclose()


def estimate(game: PreparedGame, clients: dict[str, Model]) -> int | None:
    """The model calls the game will make, said before it starts; None when it is not
    worth counting (a person at the table, or only instant models)."""
    config = game.config
    if game.humans or not worth_estimating(config.plans):
        return None
    expected = run_job(lambda: count_game_calls(config))
    console.print(Text(estimate_line(expected, [c.name for c in clients.values()],
                                     config.game_language, bar=console.is_terminal),
                       style="dim"))
    return expected


def set_aside_attempt(game: PreparedGame) -> None:
    """The interrupted attempt moved aside as ``<folder>.partial-<n>`` before the game
    goes on in its folder (its log, if it is the one resumed, is read from there)."""
    resume = game.config.resume
    assert resume is not None
    kept = set_aside(game.out)
    if resume.source == game.out:
        resume.source = kept
    console.print(Text(message(game.config.game_language, "resuming",
                               calls=len(resume.records), source=resume.source, kept=kept),
                       style="dim"))


def show_ending(game: PreparedGame, result: RunResult, played: list[Event],
                verbose: bool = False) -> None:
    """The summary, why a game is no result (exit code 4), and hints about the model."""
    language, plans = game.config.game_language, game.config.plans
    if game.humans:
        console.print(Text(render("human", "over", language, folder=game.out,
                                  transcript=game.out / "transcript.md"), style="bold"))
    summarise(result, game.out, played, verbose)
    if result.degraded:
        share = game.config.health.degraded_share
        why = "degraded_share" if share_was_the_rule(result, share) else "degraded_decisive"
        errors.print(Text(message(language, "degraded"), style="bold red") + Text(message(
            language, why, fallbacks=result.fallbacks, decisions=result.decisions,
            share=share, reason=result.no_result)))
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
