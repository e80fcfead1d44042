"""The mysteries shipped with the package, found by id (their folder name)."""

from __future__ import annotations

from pathlib import Path

from jubensha.safeload import is_path
from jubensha.scripts.bundled_index import bundled_scripts
from jubensha.scripts.io import ScriptError, load_script, resolve_images, resolve_script_file
from jubensha.scripts.model import Script
from jubensha.scripts.validation import Problem

DEFAULT_SCRIPT = "lighthouse-keeper"
"""The English 4-player mystery that `jubensha play` runs with no arguments."""


def script_location(name: str | Path) -> Path:
    """Where the script that ``name`` names lies: a bundled id's folder, or the file or
    folder itself. Every command that takes a script accepts these three forms."""
    bundled = bundled_scripts()
    if str(name) in bundled:
        return bundled[str(name)]
    if is_path(Path(name)):
        return Path(name)
    known = ", ".join(bundled) or "none"
    raise ScriptError(str(name), [Problem(severity="error", field="(name)",
                                          message=f"no bundled script or file of that name "
                                          f"(bundled: {known})")])


def find_script(name: str) -> Script:
    """Load a bundled script by id, or a script file or folder by path; image paths of
    the loaded script are absolute, so a game can open them from anywhere."""
    where = script_location(name)
    if name in bundled_scripts():
        return load_script(where)
    return resolve_images(load_script(where), resolve_script_file(where).parent)
