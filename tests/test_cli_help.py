"""Help that speaks to users: every help text is shown as written (square brackets such as
the extra in ``pip install 'jubensha[ray]'`` are not eaten as markup), each paragraph
wraps as one (no line breaks left from the source), every option says what it does, and
no help shows reStructuredText's double backticks."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import typer
from typer.testing import CliRunner

from jubensha.cli import app

runner = CliRunner()
WIDE = {"COLUMNS": "400"}


def subcommands(command: typer.core.TyperCommand) -> dict[str, typer.core.TyperCommand]:
    """A group's sub-commands by name, loaded (the root imports each one on demand)."""
    if not isinstance(command, typer.core.TyperGroup):
        return {}
    return {name: command.get_command(None, name)  # type: ignore[arg-type,misc]
            for name in command.list_commands(None)}  # type: ignore[arg-type]


def commands() -> Iterator[tuple[list[str], typer.core.TyperCommand]]:
    def walk(command: typer.core.TyperCommand, path: list[str]
             ) -> Iterator[tuple[list[str], typer.core.TyperCommand]]:
        yield path, command
        for name, sub in subcommands(command).items():
            yield from walk(sub, [*path, name])

    yield from walk(typer.main.get_command(app), [])


COMMANDS = list(commands())
BY_PATH = {tuple(path): command for path, command in COMMANDS}


def written(help_text: str | None) -> str:
    """A help text as its author wrote it (markup escapes undone)."""
    return (help_text or "").replace("\\[", "[")


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=" ".join)
def test_every_bracket_of_a_help_text_survives(path: list[str]) -> None:
    command = BY_PATH[tuple(path)]
    shown = runner.invoke(app, [*path, "--help"], env=WIDE).output
    texts = [written(command.help), *(written(getattr(p, "help", "")) for p in command.params)]
    for text in texts:
        for bracket in re.findall(r"\[[^\]\s]*\]", text):
            assert bracket in shown, f"{' '.join(path)}: {bracket} lost in\n{shown}"


def test_every_extra_named_in_help_is_shown_whole() -> None:
    named = {(tuple(path), extra) for path, command in COMMANDS
             for p in command.params
             for extra in re.findall(r"jubensha\[\w+\]", written(getattr(p, "help", "")))}
    assert (("runs", "batch"), "jubensha[ray]") in named
    for path, extra in named:
        assert extra in runner.invoke(app, [*path, "--help"], env=WIDE).output


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=" ".join)
def test_every_option_says_what_it_does_without_double_backticks(path: list[str]) -> None:
    command = BY_PATH[tuple(path)]
    assert "``" not in (command.help or "")
    for param in command.params:
        text = getattr(param, "help", None)
        assert text, f"{' '.join(path)} {param.name} has no help"
        assert "``" not in text


def test_a_command_list_shows_each_first_paragraph_on_one_line() -> None:
    for path, command in COMMANDS:
        listed = subcommands(command)
        if not listed:
            continue
        shown = runner.invoke(app, [*path, "--help"], env=WIDE).output
        lines = [line.strip("│ ") for line in shown.splitlines()]
        for name, sub in listed.items():
            first = written(sub.short_help or sub.help).split("\n\n")[0]
            row = next(line for line in lines if line.startswith(f"{name} "))
            assert row[len(name):].strip() == first, f"{name}: {row!r}"


def test_only_the_root_offers_shell_completion() -> None:
    """A command imported when it runs is built alone, but is still a sub-command: its help
    lists its own options, not the root's."""
    for path, command in COMMANDS:
        names = {param.name for param in command.params}
        assert ("install_completion" in names) == (path == []), " ".join(path)
