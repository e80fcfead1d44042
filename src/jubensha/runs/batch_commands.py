"""`jubensha runs batch|resume|reindex|report|leaderboard`: experiments of many games, and their reports.

Registered under ``jubensha runs`` (the commands merge into that group).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from jubensha.eval.report import print_table
from jubensha.jobs import Interrupted, run_job, stop_here, stop_unreachable
from jubensha.llm.calls import WATCHERS, CallRecord
from jubensha.llm.health import ModelUnreachable
from jubensha.outdir import OutError, prepare_out
from jubensha.runs.batch import Batch, BatchError, BatchSummary, Update
from jubensha.runs.index import INDEX_FILE, BatchIndex, GameRow
from jubensha.runs.loose import find_run_folders, rows_from_runs
from jubensha.runs.ratings import LeaderboardFormat, leaderboard_table, rate, render_leaderboard
from jubensha.runs.report import ReportFormat, batch_title, build_report, render
from jubensha.runs.spec import SPEC_FILE, SpecError, dump_spec, load_spec

app = typer.Typer()
console = Console()
errors = Console(stderr=True)

ConcurrencyOption = Annotated[int | None, typer.Option(
    min=1, help="Games played at once (default: the spec's concurrency).")]
ExecutorOption = Annotated[Literal["local", "ray"] | None, typer.Option(
    help="Where games play: this process, or a Ray cluster (pip install 'jubensha[ray]') "
         "(default: the spec's executor.kind).")]
AddressOption = Annotated[str | None, typer.Option(
    help="Ray cluster: auto, ray://HOST:10001 (default: the spec's executor.address, else "
         "a local cluster).")]


def fail(message: str) -> typer.Exit:
    errors.print(Text("error: ", style="bold red") + Text(message), soft_wrap=True)
    return typer.Exit(2)


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
            from jubensha.runs.spec import expand

            games = expand(loaded)
            typer.echo(f"{len(games)} games into {root}:")
            for game in games:
                typer.echo(f"  {game.id}  {game.name}")
            return
        prepare_root(root, spec, dump_spec(loaded), overwrite)
        opened = Batch.open(loaded, root, extend=extend)
    except (SpecError, BatchError, OutError) as exc:
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
    except (SpecError, BatchError) as exc:
        raise fail(str(exc)) from None
    play(place(opened, executor, address), concurrency)


def prepare_root(root: Path, spec: Path, resolved: str, overwrite: bool) -> None:
    """A batch folder is new, empty, or this batch's own (then the batch resumes); it never
    takes the place of another folder's content or of the input spec."""
    stored = root / SPEC_FILE
    if stored.is_file() and stored.resolve() == spec.resolve() and (
            overwrite or stored.read_text(encoding="utf-8") != resolved):
        raise OutError(f"--out {root}: the batch would write its resolved spec over the input "
                       f"{spec}; give the batch another folder (a batch's own folder is "
                       f"resumed with: jubensha runs resume {root})")
    if overwrite or not (root / INDEX_FILE).is_file():
        prepare_out(root, overwrite=overwrite, markers=(INDEX_FILE,), inputs=[spec])


def place(opened: Batch, kind: str | None, address: str | None) -> Batch:
    """The batch with the command line's executor (which is not part of any game)."""
    chosen = opened.spec.executor.model_copy(update={
        "kind": kind or opened.spec.executor.kind,
        "address": address or opened.spec.executor.address})
    if chosen.kind == "ray":
        try:
            import ray  # noqa: F401
        except ImportError:
            opened.close()
            raise fail("the ray executor needs Ray: pip install 'jubensha[ray]'") from None
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
    for table in build_report(rows, batch=batch_title(opened.root)).tables():
        print_table(console, table, "--format md")
    console.print(f"report: jubensha runs report {opened.root} [--format md|csv|json] "
                  f"[--plots DIR]")
    if summary.failed or summary.pending:
        raise typer.Exit(1)


async def _play_live(opened: Batch, concurrency: int | None) -> BatchSummary:
    rows = await opened.sync()
    finished = sum(row.status == "finished" for row in rows)
    failed = 0
    playing: set[str] = set()
    calls = 0
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("games"), TimeElapsedColumn(), TextColumn("ETA"),
               TimeRemainingColumn())
    with Progress(*columns, console=console, transient=False) as progress:
        task = progress.add_task("", total=len(rows), completed=finished)

        def describe() -> str:
            return (f"{finished} finished · {failed} failed · {len(playing)} playing · "
                    f"{calls} model calls")

        def on_call(record: CallRecord) -> None:
            nonlocal calls
            calls += 1
            progress.update(task, description=describe())

        def on_update(update: Update) -> None:
            nonlocal finished, failed
            row = update.row
            if row.status == "running":
                playing.add(row.name)
            else:
                playing.discard(row.name)
                finished += row.status == "finished"
                failed += row.status == "failed"
                mark = "[green]✓[/]" if row.status == "finished" else "[red]✗[/]"
                detail = (f"{row.winner} win · {row.usage.calls} calls · "
                          f"{row.duration_s or 0:.1f} s" if row.status == "finished"
                          else row.error or "")
                progress.console.print(f"{mark} {row.name}: {detail}", soft_wrap=True,
                                       highlight=False)
            progress.update(task, completed=finished, description=describe())

        WATCHERS.append(on_call)
        try:
            return await opened.run(concurrency=concurrency, on_update=on_update)
        finally:
            WATCHERS.remove(on_call)


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
    except (SpecError, BatchError) as exc:
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
) -> None:
    """Tables of a batch: win rate and identification with 95% intervals, failures, calls,
    tokens, cost, duration, and the post-game metrics."""
    rows = index_rows(batch_dir, loose=True)
    result = build_report(rows, by_script=by_script, batch=batch_title(batch_dir))
    if fmt == "table":
        for table in result.tables():
            print_table(console, table, "--format md")
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

        console.print(f"wrote {write_html(batch_dir, rows, html)}")


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
        return index.rows()


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
