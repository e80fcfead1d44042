"""The `jubensha` command. Each package owns its sub-commands in its own `commands.py`."""

from __future__ import annotations

import typer

from jubensha.eval.commands import app as eval_app
from jubensha.llm.commands import models
from jubensha.runs.audit_command import audit
from jubensha.runs.commands import play, replay, runs_app
from jubensha.scripts.commands import app as scripts_app
from jubensha.web.commands import serve

app = typer.Typer(
    name="jubensha",
    help="LLM agents that play murder-mystery games (剧本杀), and benchmarks that measure them.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(scripts_app, name="scripts")
app.add_typer(eval_app, name="eval")
app.add_typer(runs_app, name="runs")
app.command()(play)
app.command()(replay)
app.command()(serve)
app.command()(audit)
app.command()(models)


if __name__ == "__main__":
    app()
