"""The mysteries a server offers: the bundled ones and the scripts found in the folders
given with ``--scripts``. A page names a script by its key from this list, never by a path,
so no page can make the server open a file it was not given.

Parsing a large folder of scripts takes seconds, so it happens in worker threads (the first
as the server starts: ``parse_in_background``), never on the event loop that serves every
page, and each script is parsed once."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from pydantic import BaseModel

from jubensha.runlog.folder import RunError, RunLog
from jubensha.runlog.script import played_script
from jubensha.scripts.bundled import bundled_scripts, find_script
from jubensha.scripts.io import ScriptError
from jubensha.scripts.model import Script

MAX_SCRIPTS = 500
SCRIPT_FILES = ("script.yaml", "script.yml", "script.json")


class ScriptChoice(BaseModel):
    key: str
    title: str
    language: str
    players: int


class ScriptLibrary:
    def __init__(self, folders: list[Path]):
        self.paths: dict[str, Path] = {key: path for key, path in bundled_scripts().items()}
        for number, folder in enumerate(folders):
            for path in _script_files(folder)[:MAX_SCRIPTS]:
                self.paths[f"{number}:{path.relative_to(folder).as_posix()}"] = path
        self._loaded: dict[str, Script | None] = {}
        self._parsing = threading.Lock()

    def load(self, key: str) -> Script | None:
        """The script ``key`` names, or None when there is none or it does not load. Parses
        on first use: call it from a worker thread (``script``) unless parsing has finished."""
        if key not in self.paths:
            return None
        with self._parsing:  # one parse per script, however many threads ask at once
            if key not in self._loaded:
                try:
                    self._loaded[key] = find_script(str(self.paths[key]))
                except ScriptError:
                    self._loaded[key] = None
        return self._loaded[key]

    @staticmethod
    def played(run: RunLog) -> Script | None:
        """The script ``run`` was played with, from the run folder's own copy
        (``runlog.script``), never a file its meta.json names; None when it has none. The
        review and the tables found again after a restart both read a run's script here."""
        try:
            return played_script(run)
        except RunError:
            return None

    async def script(self, key: str) -> Script | None:
        """``load`` without holding up the event loop."""
        if key in self._loaded:
            return self._loaded[key]
        return await asyncio.to_thread(self.load, key)

    async def choices(self) -> list[ScriptChoice]:
        """Every script that loads, parsed in a worker thread (once)."""
        return await asyncio.to_thread(self._choices)

    def parse_in_background(self) -> None:
        """Start parsing every script in a daemon thread, so the first lobby opens at once
        and stopping the server never waits for the parsing."""
        threading.Thread(target=self._choices, daemon=True, name="jubensha-scripts").start()

    def _choices(self) -> list[ScriptChoice]:
        found = ((key, self.load(key)) for key in self.paths)
        return [ScriptChoice(key=key, title=script.title, language=script.language,
                             players=len(script.characters))
                for key, script in found if script is not None]


def _script_files(folder: Path) -> list[Path]:
    """Script files under ``folder`` (a folder holding script.yaml, or *.yaml files)."""
    if not folder.is_dir():
        return []
    found = [path for path in sorted(folder.rglob("*")) if path.is_file()
             and not path.is_symlink() and (path.name in SCRIPT_FILES
                                            or path.suffix in (".yaml", ".yml"))
             and path.resolve().is_relative_to(folder.resolve())]
    return found
