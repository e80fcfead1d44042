"""The command line starts at once: `jubensha --help`, `scripts list` and `scripts
validate` import none of the heavy libraries (each command imports what it uses when it
runs), `--help` costs at most 3x the CPU time of importing typer and rich, and the scripts'
commands read the bundled scripts' index instead of loading every script
(bench/startup.py prints the figures against the 3x target)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).parents[1] / "src"
HEAVY = ("scipy", "fastapi", "starlette", "uvicorn", "numpy", "PIL", "matplotlib", "bm25s",
         "jieba", "openpyxl", "openskill", "openai", "xllamacpp", "ray")
COMMANDS = [["--help"], ["scripts", "list"], ["scripts", "validate"]]
RUN = ("import sys\nfrom jubensha.cli import app\ntry:\n    app(sys.argv[1:])\n"
       "except SystemExit as exit:\n    assert not exit.code, exit.code\n")
SHOW = "\nprint('LOADED', *sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r}))\n"
ENV = {**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "100"}


def cpu(code: str, *args: str) -> float:
    """The CPU time (user + system) of one run of ``python -c code args``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", code, *args], check=True, env=ENV,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def least_over(runs: int, *programs: tuple[str, ...]) -> list[float]:
    """Each program's least CPU time over ``runs`` rounds that run them in turn, so that
    the neighbours' load of the moment weighs on all alike."""
    times = [[cpu(*program) for program in programs] for _ in range(runs)]
    return [min(column) for column in zip(*times, strict=True)]


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_the_command_imports_no_heavy_library(args: list[str]) -> None:
    done = subprocess.run([sys.executable, "-c", RUN + SHOW.format(heavy=set(HEAVY)), *args],
                          env=ENV, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = done.stdout.rsplit("LOADED", 1)[1].split()
    assert loaded == []


def test_the_check_sees_a_heavy_import() -> None:
    code = "import numpy\n" + RUN + SHOW.format(heavy=set(HEAVY))
    done = subprocess.run([sys.executable, "-c", code, "--help"], env=ENV,
                          capture_output=True, text=True, timeout=120, check=True)
    assert "numpy" in done.stdout.rsplit("LOADED", 1)[1].split()


def test_help_costs_at_most_three_times_importing_typer_and_rich() -> None:
    baseline, shown = least_over(4, ("import typer, rich",), (RUN, "--help"))
    assert shown <= 3 * baseline


@pytest.mark.parametrize("args", COMMANDS[1:], ids=" ".join)
def test_the_scripts_commands_read_the_index_not_the_scripts(args: list[str]) -> None:
    """With the bundled scripts as their index holds them, no script is loaded: neither the
    script model nor a YAML parser is imported (bench/startup.py prints what that saves)."""
    script = RUN + SHOW.format(heavy={"yaml", "jubensha"})
    done = subprocess.run([sys.executable, "-c", script, *args], env=ENV,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = set(done.stdout.rsplit("LOADED", 1)[1].split())
    assert not loaded & {"yaml", "jubensha.scripts.model", "jubensha.scripts.io"}
