"""`jubensha scripts ...`: list, show, validate, import and export the schema of mysteries."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from jubensha.scripts.bundled import bundled_scripts
from jubensha.scripts.io import load_script

app = typer.Typer(help="List, show, validate and import mystery scripts.", no_args_is_help=True)
console = Console()


@app.command("list")
def list_scripts() -> None:
    """List the bundled mysteries."""
    table = Table("id", "title", "language", "players")
    for script_id, folder in bundled_scripts().items():
        script = load_script(folder)
        table.add_row(script_id, script.title, script.language, str(len(script.characters)))
    console.print(table)
