"""The fuzzing worker: a child process that runs one loader per request, so that a native
crash (a segfault), a hang or a blown memory limit kills or stalls only it, and the
harness (``tests/fuzz/harness.py``) sees and reports it.

Requests are JSON lines on stdin, ``{"loader": NAME, "folder": PATH}``; each answer is one
JSON line on stdout, ``{"outcome": "loaded" | "refused" | "crashed", "message": TEXT}``:
loaded (the data was accepted, and what it produced was written and read back the same),
refused with the loader's own error (its message), or crashed with any other exception
(its traceback); the loader's error is matched by exact type. A script an importer produced is also saved and loaded again, as
``jubensha scripts import`` does, into ``FOLDER/out``.
"""

from __future__ import annotations

import os
import resource

if __name__ == "__main__":  # before the imports below, so that they count too
    _LIMIT = int(os.environ.get("FUZZ_MEMORY_BYTES", "1500000000"))
    resource.setrlimit(resource.RLIMIT_AS, (_LIMIT, _LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

import contextlib
import ctypes
import io
import json
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import typer

from jubensha.agents.player_star.sensors import load_sensors
from jubensha.engine.procedure import ProcedureError, load_procedure
from jubensha.eval.cli_helpers import read_options
from jubensha.eval.playerlogs import PlayerLogError, read_evaluation
from jubensha.llm.replay import CassetteError, ReplayModel
from jubensha.llm.wrappers import PriceTable
from jubensha.runlog.folder import RunError, read_run
from jubensha.runlog.script import NoScriptCopy, played_script
from jubensha.runs.importers.player_log import PlayerLogImportError, import_player_log
from jubensha.runs.spec import load_spec
from jubensha.runs.spec_schema import SpecError
from jubensha.scripts.importers import copy_assets, import_script
from jubensha.scripts.io import ScriptError, load_script, parse_script, read_data, save_script
from jubensha.scripts.model import Script


class Refused(Exception):
    """The loader's own error, whatever its type, carried with its message."""


def round_trip(script: Script, source: Path, out: Path) -> None:
    """Save ``script`` as ``scripts import`` does (its images copied), read it back, and
    check nothing changed on the way."""
    written = save_script(script, out)
    copy_assets(script, source, written.parent)
    again = parse_script(read_data(written), str(written))
    if again != script:
        raise AssertionError(f"{written}: the saved script reads back different")


def imported(fmt: str, target: str) -> Callable[[Path], None]:
    def load(folder: Path) -> None:
        source = folder / target
        round_trip(import_script(fmt, source), source, folder / "out")
    return load


def script(folder: Path) -> None:
    round_trip(load_script(folder / "script.yaml"), folder / "script.yaml", folder / "out")


def options(folder: Path) -> None:
    """``--options FILE`` prints its one-line error and exits 2: the message is stderr."""
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr):
            read_options(folder / "options.yaml")
    except typer.Exit as exc:
        if exc.exit_code == 2:
            raise Refused(stderr.getvalue().strip()) from None
        raise


def player_log(folder: Path) -> None:
    import_player_log(folder / "logs" / "Tiny" / "Tiny.xlsx", folder / "out")
    read_run(folder / "out")


LOADERS: dict[str, tuple[Callable[[Path], None], tuple[type[BaseException], ...]]] = {
    "script": (script, (ScriptError,)),
    "procedure": (lambda f: load_procedure(f / "procedure.yaml"), (ProcedureError,)),
    "spec": (lambda f: load_spec(f / "spec.yaml"), (SpecError,)),
    "options": (options, (Refused,)),
    "prices": (lambda f: PriceTable.load(f / "prices.yaml"), (ValueError,)),
    "sensors": (lambda f: load_sensors(f / "sensors.yaml"), (ValueError,)),
    "cassette": (lambda f: ReplayModel.load(f / "cassette.jsonl"), (CassetteError,)),
    "run": (lambda f: played_script(read_run(f / "run")), (RunError, NoScriptCopy)),
    "wellplay": (imported("wellplay", "Tiny"), (ScriptError,)),
    "conan": (imported("conan", "english/data_final/001-Tiny"), (ScriptError,)),
    "whodunitbench": (imported("whodunitbench", "TINY"), (ScriptError,)),
    "mirage": (imported("mirage", "En/Tiny"), (ScriptError,)),
    "thinkthrice": (imported("thinkthrice", "game.json"), (ScriptError,)),
    "player-log": (player_log, (PlayerLogError, PlayerLogImportError)),
    "player-evaluation": (lambda f: read_evaluation(f / "evaluation_0.xlsx"),
                          (PlayerLogError,)),
}
WATCHDOG_CHECKS: dict[str, Callable[[Path], None]] = {
    "segfault": lambda f: ctypes.string_at(0),
    "memory-hog": lambda f: print(len(bytearray(4_000_000_000))),
    "hang": lambda f: time.sleep(600),
}
"""Loaders that misbehave on purpose: the harness must report each (its own test)."""
LOADERS.update({name: (check, ()) for name, check in WATCHDOG_CHECKS.items()})


def answer(loader: str, folder: Path) -> dict[str, str]:
    load, errors = LOADERS[loader]
    try:
        load(folder)
    except BaseException as exc:  # noqa: BLE001  (anything unexpected is what we look for)
        if type(exc) in errors:  # exactly: UnicodeDecodeError is a ValueError too
            return {"outcome": "refused", "message": str(exc)}
        return {"outcome": "crashed", "message": "".join(traceback.format_exception(exc))}
    return {"outcome": "loaded", "message": ""}


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        reply = answer(request["loader"], Path(request["folder"]))
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
