"""The run folders a server may show: every run folder under its ``--runs`` root (found as
``runs report`` finds them, listed with the title, procedure, date and seats meta.json
gives), and a path from a URL resolved only when it stays inside the
root (no ``..``, no symlink out), and shown only when no file in it is a symbolic link."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ValidationError

from jubensha.runlog.folder import META, RESULT, RunMeta
from jubensha.runs.loose import find_run_folders, is_run_folder
from jubensha.runs.play import NO_MODEL

MAX_ENTRIES = 10_000
"""Entries of a run folder looked at for links; a folder with more is refused as a whole."""


MAX_META_BYTES = 1024 * 1024
MAX_PATH_CHARS = 1024
"""The longest run path a URL may name (a path longer than the system's is no run)."""


class RunEntry(BaseModel):
    path: str
    """Relative to the root, with '/' separators: the URL of its review."""
    finished: bool
    modified: float
    title: str = ""
    procedure: str = ""
    started: str = ""
    """When it started, to the minute, as the lobby shows it ("2026-05-01 18:04")."""
    started_at: str = ""
    """When it started, as meta.json says (UTC, ISO 8601)."""
    people: int = 0
    agents: int = 0


def list_runs(root: Path) -> list[RunEntry]:
    """Run folders under ``root``, the latest started first (games, batches' games,
    imported logs; a folder whose meta.json gives no start by when it was last written),
    each with what its meta.json says was played."""
    base = root.resolve()
    found = [folder for folder in find_run_folders(base) if folder != base]
    entries = [_entry(folder, base) for folder in found]
    return sorted(entries, key=_start, reverse=True)


def _start(entry: RunEntry) -> tuple[str, float]:
    """When the run started, comparable across runs: its meta's UTC start, else the folder's
    last change (ties: the one changed last)."""
    when = entry.started_at or datetime.fromtimestamp(entry.modified, UTC).isoformat(
        timespec="seconds")
    return when, entry.modified


def _entry(folder: Path, base: Path) -> RunEntry:
    entry = RunEntry(path=folder.relative_to(base).as_posix(),
                     finished=(folder / RESULT).is_file(), modified=folder.stat().st_mtime)
    path = folder / META
    if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_META_BYTES:
        return entry
    try:
        meta = RunMeta.model_validate_json(path.read_bytes())
    except (ValidationError, ValueError):
        return entry
    people = sum(seat.model == NO_MODEL for seat in meta.seats.values())
    return entry.model_copy(update={
        "title": meta.script_title or meta.script_id, "started": meta.started[:16].replace(
            "T", " "), "started_at": meta.started, "procedure": str(meta.procedure.get("name", "")),
        "people": people, "agents": len(meta.seats) - people})


def resolve_run(root: Path, relative: str) -> Path | None:
    """The run folder ``relative`` names under ``root``; None when it leaves the root or is
    not a run."""
    base = root.resolve()
    if (not relative or relative.startswith(("/", "\\")) or "\\" in relative
            or len(relative) > MAX_PATH_CHARS or not relative.isprintable()):
        return None  # a NUL, a control character or an absurd length names no run
    try:
        candidate = (base / relative).resolve()
        if not candidate.is_relative_to(base) or candidate == base or not candidate.is_dir():
            return None
        return candidate if is_run_folder(candidate) else None
    except (OSError, ValueError):  # a name the system cannot look up names no run
        return None


def not_own_files(folder: Path) -> str | None:
    """Why ``folder`` may hold something that is not its own: a symbolic link inside it or
    its subfolders, or too many files to check; None when it holds only its own files.
    A run folder is shown only from what it holds, never from what a link points at."""
    seen = 0
    for parent, dirs, files in os.walk(folder):  # does not descend into linked folders
        for name in sorted(dirs + files):
            path = Path(parent, name)
            if path.is_symlink():
                return f"{path.relative_to(folder).as_posix()} is a symbolic link"
        seen += len(dirs) + len(files)
        if seen > MAX_ENTRIES:
            return f"it holds more than {MAX_ENTRIES} files"
    return None
