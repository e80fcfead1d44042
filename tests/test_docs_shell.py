"""The shell examples of the README and docs/ work as written.

Every command of a ``bash`` or ``sh`` block is checked: a ``jubensha`` command parses (its
sub-commands and options exist), each ``--seat "NAME=…"`` names a character of the script
the command plays, and no ``{1..22}`` stands inside quotes (where the shell does not
expand it). Every command that needs no network, no model file, no person at the keyboard
and no file the reader must write first is also run, in the order of its page and in a
folder of its own beside ``../shared`` (as the repository stands), with
``JUBENSHA_MODEL=scripted`` so that the game of a bare ``jubensha play`` takes seconds; it
must exit 0."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from jubensha.cli import app
from jubensha.runs.play import PlayError, resolve_seat_name
from jubensha.scripts.bundled import DEFAULT_SCRIPT, bundled_scripts, find_script

ROOT = Path(__file__).parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"```(?:bash|sh)\n(.*?)```", re.DOTALL)
QUOTED_BRACES = re.compile(r"""(['"])[^'"]*\{\d+\.\.\d+\}[^'"]*\1""")
PLACEHOLDER = re.compile(r"^[A-Z][A-Z_]*[A-Z](\.\.\.)?$|\.\.\.|^\[|\|")
"""A synopsis word (RUN_DIR, SCRIPT..., [--judge MODEL], a|b): the line is no command."""
NEEDS_MORE = ("openai:", "--base-url", "--host", "=human", "local:", "@local", "--model local",
              "serve", "--executor ray", "models")
"""What a command needs beyond this folder: a network model or server, a model file, a
person at the keyboard, a server that runs until stopped, a cluster (``models`` lists the
installed model files: it runs, but its answer is this machine's)."""


def commands() -> list[tuple[str, str]]:
    """(page, command) for every command line of every shell block, in page order."""
    found = []
    for page in PAGES:
        for block in BLOCK.findall(page.read_text(encoding="utf-8")):
            for line in block.replace("\\\n", " ").splitlines():
                if line.strip() and not line.strip().startswith("#"):
                    found.append((page.relative_to(ROOT).as_posix(), line.strip()))
    return found


def words(line: str) -> list[str]:
    return shlex.split(line, comments=True)


def jubensha_args(line: str) -> list[str] | None:
    """The arguments of a ``jubensha`` command that is no synopsis; None otherwise."""
    try:
        parts = words(line)
    except ValueError:
        return None
    if len(parts) < 2 or parts[0] != "jubensha" or any(PLACEHOLDER.search(p) for p in parts):
        return None
    return parts[1:]


def parse(args: list[str]) -> None:
    """Parse ``args`` as the command line would, without running anything."""
    command = typer.main.get_command(app)
    name = "jubensha"
    while hasattr(command, "resolve_command"):
        context = command.make_context(name, list(args))
        rest = [*context._protected_args, *context.args]
        if not rest:
            return
        name, command, args = command.resolve_command(context, rest)
    command.make_context(name, list(args))


def seats_and_script(args: list[str]) -> tuple[str, list[str]]:
    """The script a ``play`` command plays and its ``--seat`` names."""
    script, seats, index = DEFAULT_SCRIPT, [], 1
    while index < len(args):
        arg = args[index]
        if arg == "--seat":
            seats.append(args[index + 1].partition("=")[0])
            index += 2
            continue
        if arg.startswith("-"):
            index += 1 if "=" in arg or arg in ("--overwrite", "--hot-seat", "--verbose",
                                                 "--guard", "--no-guard") else 2
            continue
        if index == 1:
            script = arg
        index += 1
    return script, seats


ALL = commands()


def test_the_pages_have_shell_examples() -> None:
    assert len(ALL) > 60 and sum(jubensha_args(line) is not None for _, line in ALL) > 40


@pytest.mark.parametrize(("page", "line"), ALL)
def test_every_example_parses_and_names_what_exists(page: str, line: str) -> None:
    assert not QUOTED_BRACES.search(line), f"{page}: a brace range inside quotes: {line}"
    args = jubensha_args(line)
    if args is None:
        return
    try:
        parse(args)
    except Exception as exc:  # noqa: BLE001  (typer's vendored click usage errors)
        pytest.fail(f"{page}: {line}: {exc}")
    if args[0] == "play":
        script, seats = seats_and_script(args)
        if script in bundled_scripts():
            for seat in seats:
                try:
                    resolve_seat_name(seat, find_script(script))
                except PlayError as exc:
                    pytest.fail(f"{page}: {line}: {exc}")


PATHS = re.compile(r"[\w.-]*(?:/|\.ya?ml\b|\.xlsx\b)[\w./*-]*")
"""A file or folder a command names, also inside an option ("player:sensors=x.yaml")."""
OUTPUTS = ("--out", "--plots", "--html")


def runnable(args: list[str] | None, line: str, folder: Path) -> bool:
    """Whether the command runs here as written (see the module's docstring): it needs
    nothing of ``NEEDS_MORE``, and every file it reads is there (written by an example
    before it, or under ../shared)."""
    if args is None or any(need in line for need in NEEDS_MORE):
        return False
    if args[:2] == ["scripts", "caption"] and shutil.which("tesseract") is None:
        return False
    outputs = {args[index + 1] for index, arg in enumerate(args[:-1]) if arg in OUTPUTS}
    if args[:2] == ["scripts", "import"]:
        outputs.add(args[-1])
    read = [path for arg in args[1:] if arg not in outputs for path in PATHS.findall(arg)]
    return all((folder / path).exists() for path in read)


PAGES = list(dict.fromkeys(page for page, _ in ALL))


def test_enough_examples_need_nothing_more() -> None:
    assert sum(jubensha_args(line) is not None and not any(need in line for need in NEEDS_MORE)
               for _, line in ALL) >= 12


@pytest.mark.parametrize("page", PAGES)
def test_every_example_that_needs_nothing_more_runs_as_written(tmp_path: Path,
                                                               page: str) -> None:
    """One page's examples in order, in a folder of their own (a page a test, so the
    pages run side by side)."""
    shared = ROOT.parent / "shared"
    folder = tmp_path / "pages" / page.replace("/", "_")
    folder.mkdir(parents=True)
    if shared.is_dir():
        (tmp_path / "pages" / "shared").symlink_to(shared)  # ../shared of each page's folder
    env = {**os.environ, "JUBENSHA_MODEL": "scripted"}
    for _, line in [(p, line) for p, line in ALL if p == page]:
        args = jubensha_args(line)
        if not runnable(args, line, folder):
            continue
        assert args is not None
        done = subprocess.run([sys.executable, "-m", "jubensha.cli", *args], cwd=folder,
                              env=env, capture_output=True, text=True, timeout=600,
                              stdin=subprocess.DEVNULL, check=False)
        assert done.returncode == 0, f"{page}: {line}\n{done.stderr[-2000:]}"
