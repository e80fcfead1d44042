"""How long the command line takes to start: the CPU time of `jubensha --help`,
`jubensha scripts list` and `jubensha scripts validate`, each against importing typer and
rich (what any typer command pays), and the heavy modules each imports.

CPU time (user + system of the child process) moves less with the neighbours' load than
wall time; each figure is the least of ``--runs`` runs, the run least disturbed. Target:
every command within 3x of typer and rich, importing none of ``HEAVY``. Two references say
what no command line can go below: a one-command typer app (typer builds a pydantic
adapter per parameter as it parses), and the work the scripts' commands do whatever the
command line costs (load and check the bundled scripts: pydantic models and YAML).

    python bench/startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
from pathlib import Path

from common import figure, machine, table

SRC = Path(__file__).resolve().parents[1] / "src"
HEAVY = ("scipy", "fastapi", "starlette", "uvicorn", "numpy", "PIL", "matplotlib", "bm25s",
         "jieba", "openpyxl", "openskill", "openai", "xllamacpp", "ray")
"""Modules none of the measured commands may import."""
COMMANDS = (("--help",), ("scripts", "list"), ("scripts", "validate"))
TARGET = 3.0
BASELINE = "import typer, rich"
TYPER_APP = ("import typer\napp = typer.Typer()\n\n@app.command()\ndef one(name: str = 'x') "
             "-> None:\n    print(name)\n\n@app.command()\ndef two() -> None:\n    pass\n\n"
             "app(['one'], standalone_mode=False)\n")
WORK = ("import typer, rich\nfrom jubensha.scripts import bundled_scripts, check_script\n"
        "for folder in bundled_scripts().values():\n    check_script(folder)\n")
RUN = ("import sys\nfrom jubensha.cli import app\ntry:\n    app(sys.argv[1:])\n"
       "except SystemExit:\n    pass\n")
REPORT = ("import atexit, sys\nHEAVY = {heavy!r}\natexit.register(lambda: sys.__stderr__.write("
          "'loaded: ' + ' '.join(m for m in HEAVY if m in sys.modules) + '\\n'))\n")


def cpu_seconds(code: str, *args: str) -> float:
    """The CPU time (user + system) of ``python -c code args``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(SRC), *filter(None, [os.environ.get("PYTHONPATH")])]), "COLUMNS": "100"}
    subprocess.run([sys.executable, "-c", code, *args], check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def least(runs: int, code: str, *args: str) -> float:
    return min(cpu_seconds(code, *args) for _ in range(runs))


def loaded(*args: str) -> list[str]:
    """The modules of ``HEAVY`` the command has imported when it exits."""
    env = {**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "100"}
    done = subprocess.run([sys.executable, "-c", REPORT.format(heavy=HEAVY) + RUN, *args],
                          env=env, capture_output=True, text=True, check=True)
    line = next(x for x in done.stderr.splitlines() if x.startswith("loaded:"))
    return line.removeprefix("loaded:").split()


def measure(runs: int) -> list[tuple[str, float, float, list[str]]]:
    """Each command: its CPU seconds, the ratio to the baseline, the heavy modules loaded."""
    base = least(runs, BASELINE)
    rows = [("import typer, rich", base, 1.0, [])]
    for name, code in (("a one-command typer app", TYPER_APP),
                       ("load and check the bundled scripts", WORK)):
        seconds = least(runs, code)
        rows.append((f"(reference) {name}", seconds, seconds / base, []))
    for args in COMMANDS:
        seconds = least(runs, RUN, *args)
        rows.append((f"jubensha {' '.join(args)}", seconds, seconds / base, loaded(*args)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="Runs of each; the least counts.")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    rows = measure(args.runs)
    table(f"Start-up CPU time, least of {args.runs} runs ({machine()}, load {load:.1f})",
          ["command", "CPU s", "× typer+rich", "heavy modules loaded"],
          [(name, f"{cpu:.3f}", f"{ratio:.2f}", " ".join(heavy) or "none")
           for name, cpu, ratio, heavy in rows])
    worst = max((row for row in rows if row[0].startswith("jubensha")), key=lambda row: row[2])
    heavy = sorted({m for row in rows for m in row[3]})
    met = worst[2] <= TARGET and not heavy
    figure("startup", f"worst {worst[2]:.2f}x typer+rich ({worst[0]}), heavy modules: "
           f"{' '.join(heavy) or 'none'} — {'met' if met else 'NOT met'} (target "
           f"{TARGET:.0f}x, none)")


if __name__ == "__main__":
    main()
