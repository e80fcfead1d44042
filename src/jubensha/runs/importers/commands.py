"""`jubensha runs import ...`: turn games played elsewhere into run folders of ours."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from jubensha.eval.playerlogs import PlayerLogError
from jubensha.outdir import OutError, prepare_out
from jubensha.runlog.folder import EVENTS, META
from jubensha.runs.importers.player_log import PlayerLogImportError, import_player_log
from jubensha.scripts.importers.wellplay import import_wellplay
from jubensha.scripts.io import ScriptError
from jubensha.terminal import Terminal

import_app = typer.Typer(help="Import a game played elsewhere into a run folder.",
                         no_args_is_help=True)
console = Terminal()
errors = Terminal(stderr=True)


@import_app.command("player-log")
def player_log(
    src: Annotated[Path, typer.Argument(help="A transcript <Title>.xlsx of the PLAYER* logs.")],
    dest: Annotated[Path, typer.Argument(help="The run folder to write (new or empty).")],
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Empty DEST first if it holds a run.")] = False,
    script: Annotated[Path | None, typer.Option(
        help="The WellPlay script folder the game was played on (names the script in "
             "meta.json, so `jubensha eval` finds it).")] = None,
    method: Annotated[str | None, typer.Option(help="Default: from the log's folder.")] = None,
    language: Annotated[str | None, typer.Option(help="zh or en; default: from the folder.")
                        ] = None,
) -> None:
    """Import one game transcript of the PLAYER* authors (a real GPT-3.5 game)."""
    try:
        prepare_out(dest, overwrite=overwrite, markers=(META, EVENTS),
                    inputs=[src, *([script] if script else [])], option="DEST")
        played_on = import_wellplay(script) if script else None
        summary = import_player_log(src, dest, method=method, language=language,
                                    script=played_on,
                                    script_source=str(script.resolve()) if script else "")
    except (PlayerLogError, PlayerLogImportError, ScriptError, OutError) as exc:
        errors.print(Text("error: ", style="bold red") + Text(str(exc)), soft_wrap=True)
        raise typer.Exit(2) from None
    console.print(f"imported {summary.method} game ({summary.language}): {summary.events} "
                  f"events, {summary.calls} calls, seats {', '.join(summary.seats)} -> {dest}")
