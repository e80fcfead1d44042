"""The index of the bundled mysteries (``bundled/index.json``): each one's title, language
and players, and what `jubensha scripts validate` says of it, beside a digest of the files
it was read from.

`scripts list` and `scripts validate` read the index instead of loading and checking every
script, which costs more than the rest of the command line (bench/startup.py). An entry is
used only while its digest is that of the folder's files now; any other script is loaded
and checked as before. A test holds the shipped index equal to one built afresh, so a
change of a script or of the rules shows there (``python -m jubensha.scripts.bundled_index``
writes it again). This module imports no script model, so that reading the index stays
cheap.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

INDEX_FILE = "index.json"


def bundled_dir() -> Path:
    return Path(str(resources.files("jubensha.scripts") / "bundled"))


def bundled_scripts() -> dict[str, Path]:
    """Bundled script id to its folder, sorted by id."""
    root = bundled_dir()
    folders = sorted(p for p in root.iterdir() if (p / "script.yaml").is_file())
    return {folder.name: folder for folder in folders}


@dataclass(frozen=True)
class Entry:
    """What the commands show of one bundled script, and the digest it holds for;
    ``problems`` are (severity, line after the file's name) as `scripts validate` prints
    them."""

    title: str
    language: str
    players: int
    digest: str
    problems: tuple[tuple[str, str], ...] = ()

    @classmethod
    def read(cls, data: Any) -> Entry:
        """An entry from its JSON; ``ValueError`` for anything else (a dataclass, not a
        pydantic model: building one costs the command line more than reading the
        scripts saves)."""
        entry = cls(**data) if isinstance(data, dict) else None
        if entry is None or not (
                isinstance(entry.title, str) and isinstance(entry.language, str)
                and type(entry.players) is int and isinstance(entry.digest, str)
                and isinstance(entry.problems, list) and all(
                    isinstance(p, list) and len(p) == 2 and p[0] in SEVERITIES
                    and isinstance(p[1], str) for p in entry.problems)):
            raise ValueError(f"not an index entry: {str(data)[:200]!r}")
        return replace(entry, problems=tuple((s, line) for s, line in entry.problems))


SEVERITIES = ("error", "warning")


def digest(folder: Path) -> str:
    """SHA-256 of every file below ``folder``: its path inside the folder and its bytes."""
    summed = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        summed.update(path.relative_to(folder).as_posix().encode() + b"\0")
        summed.update(hashlib.sha256(path.read_bytes()).digest())
    return summed.hexdigest()


def read_index() -> dict[str, Entry]:
    """The shipped index; empty when it is missing or unreadable (then every script is
    loaded, as without one)."""
    try:
        data = json.loads((bundled_dir() / INDEX_FILE).read_text(encoding="utf-8"))
        return {str(script_id): Entry.read(entry) for script_id, entry in data.items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return {}


def fresh_entries() -> dict[str, Entry | None]:
    """Each bundled script's entry, or None where the index holds none for the files that
    are there now."""
    index = read_index()
    found: dict[str, Entry | None] = {}
    for script_id, folder in bundled_scripts().items():
        entry = index.get(script_id)
        found[script_id] = entry if entry is not None and entry.digest == digest(folder) \
            else None
    return found


def entry_of(folder: Path) -> Entry:
    """The entry of the script in ``folder``, read and checked now."""
    from jubensha.scripts.io import check_script  # the models: only when building

    script, report, _ = check_script(folder)
    problems = tuple((p.severity, p.shown()) for p in report.problems)
    return Entry(title=script.title if script else "", language=script.language if script
                 else "", players=len(script.characters) if script else 0,
                 digest=digest(folder), problems=problems)


def index_text() -> str:
    """The index of the bundled scripts as they are now, as ``index.json`` holds it."""
    built = {script_id: asdict(entry_of(folder))
             for script_id, folder in bundled_scripts().items()}
    return json.dumps(built, indent=1, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    (bundled_dir() / INDEX_FILE).write_text(index_text(), encoding="utf-8")
