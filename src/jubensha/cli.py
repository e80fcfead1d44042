"""The `jubensha` command. Each package owns its sub-commands in its own `commands.py`.

A command's module is imported when the command runs, never before: `jubensha --help`
lists the commands from ``COMMANDS`` alone, and `jubensha scripts list` imports the
scripts' commands and nothing of the engine, the models or the web app (bench/startup.py
measures it; tests/test_startup.py holds the list of what must not load).
"""

from __future__ import annotations

import inspect
from importlib import import_module
from typing import TYPE_CHECKING, Any, NamedTuple

import typer
from rich.markup import escape
from typer.core import TyperCommand, TyperGroup

from jubensha.extras import missing_extra

if TYPE_CHECKING:  # typer keeps its own copy of click; these are its types
    from typer._click.core import Command, Context
    from typer._click.formatting import HelpFormatter


class Lazy(NamedTuple):
    """A command known by name before its module is imported."""

    path: str
    """``module:attribute``: a command function or a ``typer.Typer`` of sub-commands."""
    summary: str
    """The line the root's command list shows: the first paragraph of the command's help."""


COMMANDS = {
    "play": Lazy("jubensha.runs.commands:play", 'Play a murder mystery with LLM agents (and '
                 'you: --seat "NAME=human") and write its run folder.'),
    "replay": Lazy("jubensha.runs.commands:replay", "Show a finished or partial run's "
                   "transcript again, as it was shown live."),
    "serve": Lazy("jubensha.web.commands:serve", "Host tables in the browser: a lobby, a page "
                  "per human seat, a spectator view with suspicion charts, and the review of "
                  "any run folder. The host password, when wanted, is read from "
                  "JUBENSHA_HOST_PASSWORD."),
    "audit": Lazy("jubensha.runs.audit_command:audit", "Find seat prompts holding another "
                  "character's private text, or the truth, that the seat could not know when "
                  "the call was made (docs/isolation.md)."),
    "models": Lazy("jubensha.llm.commands:models", "List the local models: installed or not, "
                   "file size, languages, memory, what each needs (also: any "
                   "OpenAI-compatible endpoint with --model openai:<name>)."),
    "scripts": Lazy("jubensha.scripts.commands:app", "List, show, validate, import, generate "
                    "and export mystery scripts."),
    "eval": Lazy("jubensha.eval.commands:app", "Score games: the metrics of the four papers, "
                 "and the PLAYER* logs."),
    "runs": Lazy("jubensha.runs.commands:runs_app", "Run folders: batches of games, resume, "
                 "reports, and games imported from elsewhere."),
}


def prose(text: str | None) -> str | None:
    """Help as the terminal should show it: each paragraph one line, for the terminal to
    wrap (docstrings keep their source line breaks otherwise), and square brackets shown
    as typed (``pip install 'jubensha[ray]'`` is no rich markup tag)."""
    if not text:
        return text
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(escape(p if p.startswith("\b") else " ".join(p.split()))
                       for p in paragraphs)


def plain_help(command: Command) -> None:
    """``prose`` for the help of ``command``, its parameters and every sub-command."""
    command.help = prose(command.help)
    command.short_help = prose(command.short_help)
    for param in command.params:
        if getattr(param, "help", None):
            param.help = prose(param.help)  # type: ignore[attr-defined]
    for sub in getattr(command, "commands", {}).values():
        plain_help(sub)


def load(name: str) -> Command:
    """The command ``name`` of ``COMMANDS``, its module imported now."""
    module, _, attribute = COMMANDS[name].path.partition(":")
    target = getattr(import_module(module), attribute)
    if isinstance(target, typer.Typer):
        command: Command = typer.main.get_group(target)
    else:  # a command function: a typer of one command is that command
        single = typer.Typer(add_completion=False)
        single.command(name)(target)
        command = typer.main.get_command(single)
    command.name = name
    plain_help(command)
    return command


class LazyGroup(TyperGroup):
    """The root command: lists ``COMMANDS`` without importing them, and imports one when
    it is run (or its own help is asked for)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        plain_help(self)
        self.listing = False
        self.loaded: dict[str, Command] = {}

    def list_commands(self, ctx: Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        if cmd_name not in COMMANDS:
            return None
        if self.listing:
            return TyperCommand(cmd_name, short_help=prose(COMMANDS[cmd_name].summary))
        if cmd_name not in self.loaded:
            self.loaded[cmd_name] = load(cmd_name)
        return self.loaded[cmd_name]

    def invoke(self, ctx: Context) -> Any:
        """Run the command; a package of an extra that is not installed, or a plug-in that
        fails to load, is one line instead of a traceback."""
        from jubensha.registry import PluginError
        from jubensha.terminal import fail

        try:
            return super().invoke(ctx)
        except ModuleNotFoundError as exc:
            line = missing_extra(exc)
            if line is None:
                raise
            raise fail(line) from None
        except PluginError as exc:
            raise fail(str(exc)) from None

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        self.listing = True  # the list shows each command's summary: nothing is imported
        try:
            super().format_help(ctx, formatter)
        finally:
            self.listing = False


app = typer.Typer(
    name="jubensha",
    cls=LazyGroup,
    help="LLM agents that play murder-mystery games (剧本杀), and benchmarks that measure them.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


@app.callback()
def main() -> None:
    """The root has no options of its own: each command is imported when it runs."""


if __name__ == "__main__":
    app()
