"""The run folders a server may show: every folder under its ``--runs`` root that holds a
run (``meta.json`` or ``events.jsonl``), found to a bounded depth and count, and a path
from a URL resolved only when it stays inside the root (no ``..``, no symlink out)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from jubensha.runs.log import EVENTS, META, RESULT

MAX_DEPTH = 4
MAX_RUNS = 2000


class RunEntry(BaseModel):
    path: str
    """Relative to the root, with '/' separators: the URL of its review."""
    finished: bool
    modified: float


def is_run(folder: Path) -> bool:
    return (folder / META).is_file() or (folder / EVENTS).is_file()


def list_runs(root: Path) -> list[RunEntry]:
    """Run folders under ``root``, newest first (games, batches' games, imported logs)."""
    base = root.resolve()
    found: list[RunEntry] = []
    frontier = [base] if base.is_dir() else []
    for _ in range(MAX_DEPTH + 1):
        following: list[Path] = []
        for folder in frontier:
            for child in sorted(_subfolders(folder)):
                if len(found) >= MAX_RUNS:
                    break
                if child.is_symlink():
                    continue
                if is_run(child):
                    found.append(RunEntry(path=child.relative_to(base).as_posix(),
                                          finished=(child / RESULT).is_file(),
                                          modified=child.stat().st_mtime))
                else:
                    following.append(child)
        frontier = following
    return sorted(found, key=lambda entry: entry.modified, reverse=True)


def _subfolders(folder: Path) -> list[Path]:
    try:
        return [child for child in folder.iterdir() if child.is_dir()]
    except OSError:
        return []


def resolve_run(root: Path, relative: str) -> Path | None:
    """The run folder ``relative`` names under ``root``; None when it leaves the root or is
    not a run."""
    base = root.resolve()
    if not relative or relative.startswith(("/", "\\")) or "\\" in relative:
        return None
    candidate = (base / relative).resolve()
    if not candidate.is_relative_to(base) or candidate == base or not candidate.is_dir():
        return None
    return candidate if is_run(candidate) else None
