"""Internal.

`jubensha models`: the local models jubensha knows, which are installed, their sizes,
and what each still needs."""

from __future__ import annotations

import importlib.util
import json
from typing import Annotated, Literal

import typer
from rich.table import Table

from jubensha.extras import install_line
from jubensha.llm.catalog import KNOWN, cache_folder, default_play_model, status
from jubensha.llm.environment import MODEL_ENV
from jubensha.terminal import Terminal

console = Terminal()


def models(
    output: Annotated[Literal["table", "json"], typer.Option(
        "--format", help="table or json.")] = "table",
) -> None:
    """List the local models: installed or not, file size, languages, memory, what each
    needs (also: any OpenAI-compatible endpoint with --model openai:<name>)."""
    rows = [status(model) for model in KNOWN.values()]
    if output == "json":
        console.print_json(json.dumps([{
            "spec": row.spec, "title": row.model.title, "ready": row.ready, "state": row.state,
            "bytes": row.size, "path": str(row.path) if row.path else None,
            "languages": list(row.model.languages), "ram_gb": row.model.ram_gb,
            "needs": row.needs} for row in rows]))
        return
    # The spec is what a person types: its column is never cut or folded; the rest wraps.
    table = Table(show_lines=True)
    table.add_column("spec", no_wrap=True, style="bold")
    table.add_column("model")
    for row in rows:
        size = f"{row.size / 1e9:.2f} GB" if row.size else "–"
        facts = " · ".join([row.state, size, ", ".join(row.model.languages),
                            f"{row.model.ram_gb:g} GB RAM"])
        table.add_row(row.spec, f"{row.model.title}\n{facts}\n{row.needs or row.model.note}")
    console.print(table)
    if importlib.util.find_spec("xllamacpp") is None:
        console.print("Every local model runs on xllamacpp, not installed: "
                      f"{install_line('local')}")
    console.print(f"default model of jubensha play: {default_play_model()} (set {MODEL_ENV} "
                  "to change it; without it, the 1.5B model when installed, else local); "
                  f"joined models live in {cache_folder()}; any GGUF file runs as "
                  "--model local:PATH.gguf.")
