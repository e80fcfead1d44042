"""Where a command writes (``--out``, an import's destination): never over something else.

A run folder holds one game, a batch folder one batch, an import folder one import. Writing
a second one into it would mix them (a second game's events appended to the first's), so a
folder that is not empty is refused unless ``overwrite`` is given, and then it is emptied
first, but only when it holds what this project writes (``markers``): ``--overwrite`` never
empties an unrelated folder, nor one that holds an input of the command (a spec, a
script, a cassette). A file in the way, or a folder that cannot be created, is an
``OutError`` with one line for the terminal.

A leaf module (standard library only): every layer's commands that write folders use it.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

Owns = Callable[[Path], str | None]
"""Why a folder holding a marker is still not what the command wrote (None: it is)."""


class OutError(Exception):
    """A destination that cannot be used; the message names it and says why. ``key`` and
    ``values`` let a command say it in its game's language (the terminal's message
    catalogue, ``prompts/messages``, holds the same sentence under ``key``)."""

    def __init__(self, text: str, key: str = "", **values: str) -> None:
        super().__init__(text)
        self.key = key
        self.values = values


def _inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


def check_out(path: Path, *, option: str = "--out") -> bool:
    """Whether ``path`` already exists as a folder with something in it; an existing file is
    an ``OutError``."""
    if path.exists() and not path.is_dir():
        raise OutError(f"{option} {path}: is a file, not a folder", "out_is_file",
                       option=option, path=str(path))
    return path.is_dir() and any(path.iterdir())


def prepare_out(path: Path, *, overwrite: bool = False, markers: Iterable[str] = (),
                inputs: Iterable[Path] = (), option: str = "--out",
                owns: Owns | None = None) -> Path:
    """Make ``path`` an empty folder (see the module docstring) and return it. ``owns``
    checks more closely than a marker that the folder is what the command wrote."""
    path = Path(path)
    if check_out(path, option=option):
        if not overwrite:
            sample = sorted(p.name for p in path.iterdir())[:3]
            listed = ", ".join(sample) + (", …" if len(sample) == 3 else "")
            raise OutError(f"{option} {path}: the folder is not empty ({listed}); choose a new "
                           "folder, or pass --overwrite to empty it first", "out_not_empty",
                           option=option, path=str(path), listed=listed)
        empty(path, markers=markers, inputs=inputs, option=option, owns=owns)
    create(path, option=option)
    return path


def empty(path: Path, *, markers: Iterable[str], inputs: Iterable[Path], option: str,
          owns: Owns | None = None) -> None:
    """Remove everything in ``path``, which must be a folder (not a link to one) holding
    one of ``markers`` and none of ``inputs``, and which ``owns`` (when given) accepts."""
    names = list(markers)
    if path.is_symlink():
        raise OutError(f"{option} {path}: a symbolic link; --overwrite empties only a "
                       "folder itself, never one a link leads to: choose another")
    if not any((path / name).exists() for name in names):
        raise OutError(f"{option} {path}: --overwrite empties only a folder this command "
                       f"wrote (with {' or '.join(names)}); this one is not, choose another",
                       "out_not_ours", option=option, path=str(path), names=" / ".join(names))
    why = owns(path) if owns is not None else None
    if why is not None:
        raise OutError(f"{option} {path}: --overwrite empties only a folder this command "
                       f"wrote, and this one is not: {why}; choose another")
    held = [str(p) for p in inputs if _inside(Path(p), path)]
    if held:
        raise OutError(f"{option} {path}: holds {held[0]}, an input of this command; "
                       "--overwrite would delete it, choose another folder", "out_holds_input",
                       option=option, path=str(path), input=held[0])
    for child in path.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def create(path: Path, *, option: str = "--out") -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise OutError(f"{option} {path}: cannot create the folder ({reason})",
                       "out_cannot_create", option=option, path=str(path),
                       reason=reason) from None


TEMPORARY = ".tmp"
"""The suffix of ``write_whole``'s temporary file, beside the document it becomes."""


def write_whole(path: Path, data: str | bytes) -> None:
    """Write ``path`` whole or not at all (a temporary file beside it, then renamed): a
    process killed mid-write leaves the earlier file or none, never half a document that a
    reader or a resumed batch would take as complete."""
    partial = path.with_name(f"{path.name}{TEMPORARY}")
    if isinstance(data, str):
        partial.write_text(data, encoding="utf-8")
    else:
        partial.write_bytes(data)
    partial.replace(path)


def drop_temporaries(folder: Path) -> None:
    """Delete the temporaries ``write_whole`` left under ``folder`` when its process was
    killed mid-write. Nothing reads them (the document is the earlier one, or none), and a
    folder set aside as an earlier attempt is kept for good: it should hold only whole
    documents."""
    for partial in folder.rglob(f"*{TEMPORARY}"):
        if partial.is_file() and not partial.is_symlink():
            partial.unlink()
