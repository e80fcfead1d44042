"""`jubensha runs batch|resume|reindex|report|compare|leaderboard`: experiments of many
games, and their reports.

Registered under ``jubensha runs`` (the commands merge into that group).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from jubensha.eval.report import markdown_table, print_table
from jubensha.jobs import (
    Interrupted,
    duration,
    estimate_line,
    run_job,
    stop_here,
    stop_unreachable,
    takes_time,
)
from jubensha.llm.calls import CallRecord
from jubensha.llm.health import ModelUnreachable
from jubensha.outdir import OutError, prepare_out
from jubensha.runs.batch import Batch, BatchError, BatchSummary, Update
from jubensha.runs.batch_folders import checked
from jubensha.runs.compare import (
    CompareError,
    CompareFormat,
    Comparison,
    adjusted_together,
    comparison_table,
    entrant,
    render_comparison,
)
from jubensha.runs.compare import compare as compare_entrants
from jubensha.runs.estimate import batch_calls, worth_estimating
from jubensha.runs.index import INDEX_FILE, BatchIndex, GameRow
from jubensha.runs.loose import find_run_folders, rows_from_runs
from jubensha.runs.provenance import MixedProvenance, served_apart
from jubensha.runs.ratings import LeaderboardFormat, leaderboard_table, rate, render_leaderboard
from jubensha.runs.report import ReportFormat, batch_title, build_report, render
from jubensha.runs.spec import dump_spec, load_spec
from jubensha.runs.spec_schema import SPEC_FILE, SpecError
from jubensha.runs.spec_trust import unsigned
from jubensha.signing import KeyFileError
from jubensha.terminal import Terminal, fail

app = typer.Typer()
console = Terminal()
errors = Terminal(stderr=True)

ConcurrencyOption = Annotated[int | None, typer.Option(
    min=1, help="Games played at once (default: the spec's concurrency).")]
ExecutorOption = Annotated[Literal["local", "processes", "ray"] | None, typer.Option(
    help="Where games play: this process, this machine's processes, or a Ray cluster "
         "(processes and ray: pip install 'jubensha[ray]') (default: the spec's "
         "executor.kind).")]
AllowMixedOption = Annotated[bool, typer.Option(
    "--allow-mixed", help="Pool games of different code, prompts or models (by default "
    "refused, saying what differs; docs/experiments.md).")]
AddressOption = Annotated[str | None, typer.Option(
    help="Ray cluster: auto, ray://HOST:10001 (default: the spec's executor.address, else "
         "a local cluster).")]


def warn(warning: str | None) -> None:
    """The fake-model warning, before any table."""
    if warning:
        console.print(Text(warning, style="bold yellow"), soft_wrap=True)


@app.command()
def batch(
    spec: Annotated[Path, typer.Argument(help="Experiment spec (YAML); see docs/experiments.md.")],
    out: Annotated[Path | None, typer.Option(
        help="Batch folder: new, empty, or this batch's (resumed) (default: the spec's "
             "`out`, else runs/<spec name>).")] = None,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Empty the batch folder first and play every game again.")
    ] = False,
    concurrency: ConcurrencyOption = None,
    extend: Annotated[bool, typer.Option(
        help="Accept a spec that adds games to an existing batch.")] = False,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="List the games and their folders; play nothing.")] = False,
    executor: ExecutorOption = None,
    address: AddressOption = None,
) -> None:
    """Play every game of an experiment spec, or the ones not finished yet (a second run of
    the same spec resumes the batch)."""
    try:
        loaded = load_spec(spec)
        root = out or Path(loaded.out or Path("runs") / loaded.name)
        if dry_run:
            from jubensha.runs.spec_expand import expand

            games = expand(loaded)
            typer.echo(f"{len(games)} games into {root}:")
            for game in games:
                typer.echo(f"  {game.id}  {game.name}")
            return
        prepare_root(root, spec, dump_spec(loaded), overwrite)
        opened = Batch.open(loaded, root, extend=extend)
    except (SpecError, BatchError, OutError, KeyFileError) as exc:
        raise fail(str(exc)) from None
    play(place(opened, executor, address), concurrency)


@app.command()
def resume(
    batch_dir: Annotated[Path, typer.Argument(help="A batch folder (holds spec.yaml).")],
    concurrency: ConcurrencyOption = None,
    executor: ExecutorOption = None,
    address: AddressOption = None,
) -> None:
    """Play the games of a batch that have not finished, with the spec it was started with."""
    try:
        opened = Batch.resume(batch_dir)
    except (SpecError, BatchError, KeyFileError) as exc:
        raise fail(str(exc)) from None
    play(place(opened, executor, address), concurrency)


def prepare_root(root: Path, spec: Path, resolved: str, overwrite: bool) -> None:
    """A batch folder is new, empty, or this batch's own (then the batch resumes); it never
    takes the place of another folder's content or of the input spec."""
    stored = root / SPEC_FILE
    if stored.is_file() and stored.resolve() == spec.resolve() and (
            overwrite or unsigned(stored.read_text(encoding="utf-8"))[0] != resolved):
        raise OutError(f"--out {root}: the batch would write its resolved spec over the input "
                       f"{spec}; give the batch another folder (a batch's own folder is "
                       f"resumed with: jubensha runs resume {root})")
    if overwrite or not (root / INDEX_FILE).is_file():
        prepare_out(root, overwrite=overwrite, markers=(INDEX_FILE,), inputs=[spec])


LOCAL_CLUSTERS = (None, "auto", "local")
"""Ray addresses that stay on this machine or its own cluster."""


def place(opened: Batch, kind: str | None, address: str | None) -> Batch:
    """The batch with the command line's executor (which is not part of any game). Keys
    go to a remote cluster only when the user names it: a spec's ``executor.address``
    that leaves this machine must be given again as ``--address``."""
    chosen = opened.spec.executor.model_copy(update={
        "kind": kind or opened.spec.executor.kind,
        "address": address or opened.spec.executor.address})
    if chosen.kind == "ray" and address is None and chosen.address not in LOCAL_CLUSTERS:
        opened.close()
        raise fail(f"executor.address {chosen.address} comes from the spec, and a spec does "
                   "not choose where your keys are sent: if you trust that cluster, pass "
                   f"--address {chosen.address}")
    if chosen.kind in ("ray", "processes"):
        try:
            import ray  # noqa: F401
        except ImportError:
            opened.close()
            raise fail(f"the {chosen.kind} executor needs Ray: pip install 'jubensha[ray]'"
                       ) from None
    opened.spec = opened.spec.model_copy(update={"executor": chosen})
    return opened


def play(opened: Batch, concurrency: int | None) -> None:
    """Run the batch with a live progress bar, then print the summary and the report."""
    try:
        summary = run_job(lambda: _play_live(opened, concurrency))
    except BatchError as exc:
        raise fail(str(exc)) from None
    except Interrupted:
        stop_here(errors, "finished games are kept.", f"jubensha runs resume {opened.root}")
    except ModelUnreachable as exc:
        stop_unreachable(errors, exc, f"finished games are kept; when the model answers "
                                      f"again: jubensha runs resume {opened.root}")
    finally:
        rows = opened.index.rows()
        opened.close()
    _summarise(summary, opened)
    result = build_report(rows, batch=batch_title(opened.root), allow_mixed=True)
    warn(result.warning)
    for table in result.tables():
        print_table(console, table, "--format md")
    console.print(f"report: jubensha runs report {opened.root} [--format md|csv|json] "
                  f"[--plots DIR]")
    if summary.failed or summary.pending:
        raise typer.Exit(1)


HEARTBEAT_S = 60.0
"""Seconds between the progress lines written where no bar is drawn (a log file, CI)."""


async def _play_live(opened: Batch, concurrency: int | None) -> BatchSummary:
    rows = await opened.sync()
    todo = [g for g, r in zip(opened.games, rows, strict=True) if r.status != "finished"]
    parallel = concurrency or opened.spec.concurrency
    if todo and any(worth_estimating(g.plans) for g in todo):
        expected = await batch_calls(todo)
        models = sorted({p.model for g in todo for p in g.plans.values() if takes_time(p.model)})
        console.print(Text(f"{len(todo)} game(s) to play: " + estimate_line(
            expected, models, bar=console.is_terminal, parallel=parallel), style="dim"),
            soft_wrap=True)
    state = _Progress(finished=sum(row.status == "finished" for row in rows), total=len(rows),
                      todo=len(todo))
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("games"), TimeElapsedColumn(), TextColumn("ETA"),
               TimeRemainingColumn())
    with Progress(*columns, console=console, transient=False) as progress:
        task = progress.add_task("", total=len(rows), completed=state.finished)

        def on_call(record: CallRecord) -> None:
            state.calls += 1
            progress.update(task, description=state.describe())

        def on_update(update: Update) -> None:
            row = update.row
            state.calls += update.unwatched_calls
            if row.status == "running":
                state.playing.add(row.name)
            else:
                state.playing.discard(row.name)
                state.finished += row.status == "finished"
                state.failed += row.status == "failed"
                mark = "[green]✓[/]" if row.status == "finished" else "[red]✗[/]"
                detail = (f"{row.winner} win · {row.usage.calls} calls · "
                          f"{row.duration_s or 0:.1f} s" if row.status == "finished"
                          else row.error or "")
                progress.console.print(f"{mark} {row.name}: {detail}", soft_wrap=True,
                                       highlight=False)
            progress.update(task, completed=state.finished, description=state.describe())

        beat = None if console.is_terminal else asyncio.create_task(_heartbeat(state))
        try:
            return await opened.run(concurrency=concurrency, on_update=on_update,
                                    on_call=on_call)
        finally:
            if beat is not None:
                beat.cancel()


@dataclass
class _Progress:
    """What the bar and the heartbeat lines say."""

    finished: int
    total: int
    todo: int
    failed: int = 0
    calls: int = 0
    playing: set[str] = field(default_factory=set)
    started: float = field(default_factory=time.monotonic)

    def describe(self) -> str:
        return (f"{self.finished} finished · {self.failed} failed · {len(self.playing)} "
                f"playing · {self.calls} model calls")

    def line(self) -> str:
        """One line for a log: games done, calls, and the time left at the pace so far."""
        done = self.finished + self.failed - (self.total - self.todo)
        elapsed = time.monotonic() - self.started
        left = self.todo - done
        eta = (f"ETA {duration(elapsed / done * left)}" if done and left else
               "ETA unknown" if left else "ETA 0 s")
        return (f"{time.strftime('%H:%M:%S')} {self.finished + self.failed}/{self.total} "
                f"games done ({self.failed} failed, {len(self.playing)} playing) · "
                f"{self.calls} model calls · {eta}")


async def _heartbeat(state: _Progress) -> None:
    while True:
        await asyncio.sleep(HEARTBEAT_S)
        console.print(state.line(), soft_wrap=True, highlight=False)


def _summarise(summary: BatchSummary, opened: Batch) -> None:
    spent = summary.spent
    cost = f" · ${spent.cost_usd:.4f}" if spent.cost_usd is not None else ""
    console.print(Text(
        f"{summary.finished}/{summary.games} finished · {summary.failed} failed · "
        f"{summary.pending} pending · {summary.played} played now in {summary.seconds:.1f} s · "
        f"{spent.calls} calls · {spent.tokens} tokens{cost} (all attempts) → {opened.root}",
        style="bold"))
    if summary.skipped:
        console.print(f"the batch budget is spent: {summary.skipped} game(s) were not started")


@app.command()
def reindex(
    batch_dir: Annotated[Path, typer.Argument(help="A batch folder.")],
) -> None:
    """Rebuild batch.sqlite from the run folders (the folders are the source of truth)."""
    try:
        opened = Batch.rebuild(batch_dir)
    except (SpecError, BatchError, KeyFileError) as exc:
        raise fail(str(exc)) from None
    try:
        rows = asyncio.run(opened.reindex())
    finally:
        opened.close()
    counts = {status: sum(r.status == status for r in rows)
              for status in ("finished", "failed", "pending")}
    console.print(f"reindexed {len(rows)} games: " +
                  ", ".join(f"{n} {status}" for status, n in counts.items()))


@app.command()
def report(
    batch_dir: Annotated[Path, typer.Argument(help="A batch folder.")],
    fmt: Annotated[ReportFormat, typer.Option(
        "--format", help="table (terminal), md, csv or json.")] = "table",
    plots: Annotated[Path | None, typer.Option(
        help="Also write rates.png and tokens.png into this folder.")] = None,
    by_script: Annotated[bool, typer.Option(
        "--by-script", help="One row per architecture × model × script.")] = False,
    out: Annotated[Path | None, typer.Option(help="Write the report to this file.")] = None,
    html: Annotated[Path | None, typer.Option(
        help="Also write the whole report as one self-contained HTML page.")] = None,
    baseline: Annotated[str | None, typer.Option(
        help="Also compare every other method with this one (ARCH@MODEL) on paired games "
             "(table, md and HTML; `runs compare` gives CSV and JSON).")] = None,
    allow_mixed: AllowMixedOption = False,
) -> None:
    """Tables of a batch: win rate and identification with 95% intervals, failures, calls,
    tokens, cost, duration, and the post-game metrics with 95% bootstrap intervals."""
    rows = index_rows(batch_dir, loose=True)
    try:
        result = build_report(rows, by_script=by_script, batch=batch_title(batch_dir),
                              allow_mixed=allow_mixed)
    except MixedProvenance as exc:
        raise fail(f"{batch_dir}: {exc}") from None
    against = against_baseline(rows, baseline, allow_mixed) if baseline else []
    tables = [*result.tables(), *(comparison_table(c) for c in against)]
    if fmt == "table":
        warn(result.warning)
        for table in tables:
            print_table(console, table, "--format md")
    elif fmt == "md":
        typer.echo(render(result, fmt) + "".join(
            "\n" + markdown_table(comparison_table(c)) for c in against), nl=False)
    else:
        typer.echo(render(result, fmt), nl=False)
    if out is not None:
        out.write_text(render(result, "md" if fmt == "table" else fmt), encoding="utf-8")
    if plots is not None:
        from jubensha.runs.plots import write_plots

        for path in write_plots(rows, plots):
            console.print(f"wrote {path}")
    if html is not None:
        from jubensha.runs.html import write_html

        console.print(f"wrote {write_html(batch_dir, rows, html, against)}")


def against_baseline(rows: list[GameRow], baseline: str, allow_mixed: bool = False
                     ) -> list[Comparison]:
    """Every other method against ``baseline`` on their paired games (one line on error)."""
    methods = [m for m in dict.fromkeys(entrant(r) for r in served_apart(rows))
               if m != baseline]
    try:
        return adjusted_together([compare_entrants(rows, method, baseline,
                                                   allow_mixed=allow_mixed)
                                  for method in methods])
    except (CompareError, MixedProvenance) as exc:
        raise fail(f"--baseline: {exc}") from None


def index_rows(batch_dir: Path, loose: bool = False) -> list[GameRow]:
    """The rows of a batch folder's index, or (``loose``) of the run folders under a folder
    that is no batch (games played with ``play`` or in the browser); a one-line error
    otherwise."""
    if not (batch_dir / INDEX_FILE).is_file():
        if (batch_dir / SPEC_FILE).is_file():
            raise fail(f"{batch_dir}: no {INDEX_FILE}; run: jubensha runs reindex {batch_dir}")
        if not loose or not find_run_folders(batch_dir):
            raise fail(f"{batch_dir}: no {INDEX_FILE} and no run folders; not a batch folder")
        return asyncio.run(rows_from_runs(batch_dir))
    with BatchIndex.of(batch_dir) as index:
        return checked(batch_dir, index.rows())


@app.command()
def compare(
    batch_dir: Annotated[Path, typer.Argument(help="A batch folder.")],
    a: Annotated[str, typer.Argument(help="Entrant A: the civilians' ARCH@MODEL, as the "
                                          "report's rows name it.")],
    b: Annotated[str, typer.Argument(help="Entrant B, e.g. a baseline.")],
    metric: Annotated[list[str] | None, typer.Option(
        "--metric", help="Only metrics whose name starts with this (repeatable), e.g. "
        "'civilian win', identification, similarity.tfidf.")] = None,
    fmt: Annotated[CompareFormat, typer.Option(
        "--format", help="table (terminal), md, csv or json.")] = "table",
    allow_mixed: AllowMixedOption = False,
) -> None:
    """A against B on the games both played with the same script, procedure and seed:
    the mean paired difference of the civilian win, identification and every post-game
    metric, its 95% bootstrap interval, and a paired permutation test's p-value."""
    try:
        result = compare_entrants(index_rows(batch_dir, loose=True), a, b, metric,
                                  allow_mixed=allow_mixed)
    except (CompareError, MixedProvenance) as exc:
        raise fail(str(exc)) from None
    if fmt == "table":
        warn(result.warning)
        print_table(console, comparison_table(result), "--format md")
    else:
        typer.echo(render_comparison(result, fmt), nl=False)


@app.command()
def leaderboard(
    batch_dir: Annotated[Path, typer.Argument(help="A batch folder.")],
    fmt: Annotated[LeaderboardFormat, typer.Option(
        "--format", help="table (terminal), md, csv or json.")] = "table",
    plot: Annotated[Path | None, typer.Option(help="Also draw the ratings as a PNG file.")
                    ] = None,
    out: Annotated[Path | None, typer.Option(help="Write the leaderboard to this file.")] = None,
) -> None:
    """Ratings of every entrant (architecture @ model) as civilian, as murderer and
    combined, recomputed from the batch index's finished games (docs/experiments.md)."""
    board = rate(index_rows(batch_dir), batch=batch_title(batch_dir))
    if fmt == "table":
        warn(board.warning)
        print_table(console, leaderboard_table(board), "--format md")
    else:
        typer.echo(render_leaderboard(board, fmt), nl=False)
    if out is not None:
        out.write_text(render_leaderboard(board, "md" if fmt == "table" else fmt),
                       encoding="utf-8")
    if plot is not None:
        from jubensha.runs.plots import ratings_figure

        plot.parent.mkdir(parents=True, exist_ok=True)
        ratings_figure(board).savefig(plot, dpi=120)
        console.print(f"wrote {plot}")
