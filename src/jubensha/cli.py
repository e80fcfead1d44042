"""The `jubensha` command. Each package owns its sub-commands in its own `commands.py`."""

from __future__ import annotations

import inspect
from typing import Any

import typer
from rich.markup import escape
from typer.core import TyperCommand, TyperGroup

from jubensha.eval.commands import app as eval_app
from jubensha.llm.commands import models
from jubensha.runs.audit_command import audit
from jubensha.runs.commands import play, replay, runs_app
from jubensha.scripts.commands import app as scripts_app
from jubensha.web.commands import serve


def prose(text: str | None) -> str | None:
    """Help as the terminal should show it: each paragraph one line, for the terminal to
    wrap (docstrings keep their source line breaks otherwise), and square brackets shown
    as typed (``pip install 'jubensha[ray]'`` is no rich markup tag)."""
    if not text:
        return text
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(escape(p if p.startswith("\b") else " ".join(p.split()))
                       for p in paragraphs)


def plain_help(command: TyperCommand | TyperGroup) -> None:
    """``prose`` for the help of ``command``, its parameters and every sub-command."""
    command.help = prose(command.help)
    command.short_help = prose(command.short_help)
    for param in command.params:
        if getattr(param, "help", None):
            param.help = prose(param.help)  # type: ignore[attr-defined]
    for sub in getattr(command, "commands", {}).values():
        plain_help(sub)


class ProseGroup(TyperGroup):
    """The root command: typer builds sub-commands first, so the whole tree is here."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        plain_help(self)


app = typer.Typer(
    name="jubensha",
    cls=ProseGroup,
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
