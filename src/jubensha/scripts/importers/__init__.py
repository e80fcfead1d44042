"""Importers: one module per public script format, each a function ``import_<format>(src)
-> Script`` and a discovery ``discover_<format>(root)`` of every script under a dataset folder.

``IMPORTERS`` maps a format name to its ``Importer`` (a ``jubensha.registry.Registry``: a
format's module is imported the first time the format is used); ``import_script`` and
``discover`` are what the ``jubensha scripts import`` command uses. Every importer raises
``ScriptError`` naming the file, the field and the problem on malformed input. Their shared
helpers load with the first import: listing the formats imports none of them.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from jubensha.registry import Registry

if TYPE_CHECKING:  # the script model loads with the first import, not with the list
    from jubensha.scripts.io import ScriptError
    from jubensha.scripts.model import Script


@dataclass(frozen=True)
class Importer:
    name: str
    load: Callable[[Path], Script]
    discover: Callable[[Path], list[Path]]
    layout: str


def _unknown(name: str, known: list[str]) -> ScriptError:
    from jubensha.scripts.importers.common import fail

    return fail(name, "(format)", f"unknown format; one of: {', '.join(known)}")


def _lazy(name: str, layout: str) -> Callable[[], Importer]:
    """The importer of the module ``importers.<name>``, imported when first used."""
    def make() -> Importer:
        module = import_module(f"{__name__}.{name}")
        return Importer(name, getattr(module, f"import_{name}"),
                        getattr(module, f"discover_{name}"), layout)
    return make


IMPORTERS: Registry[Importer] = Registry(unknown=_unknown)
for _name, _layout in {
    "wellplay": "a folder with json/script_info.json (PLAYER*'s WellPlay)",
    "conan": "a <lang>/data_final/<name> folder with txt/ (Conan)",
    "whodunitbench": "a folder with env_p_all.json and img/ (WhodunitBench)",
    "mirage": "a folder with script.json + clues.json or 人物剧本.json + 线索.json (MIRAGE)",
    "thinkthrice": "a ThinkThrice game .json file",
}.items():
    IMPORTERS.add(_name, _lazy(_name, _layout))


def importer(name: str) -> Importer:
    """The importer called ``name``; a ScriptError listing the formats otherwise."""
    return IMPORTERS.get(name)


def import_script(name: str, src: Path, truth: Path | None = None) -> Script:
    """Import one script of format ``name`` from ``src``. The truth a user supplies —
    the file ``truth`` names, else a ``truth.yaml`` beside the source — overrides what
    the importer derived."""
    from jubensha.scripts.importers.common import fail, reading_from
    from jubensha.scripts.importers.truth_file import apply_truth, read_truth_file, truth_beside
    from jubensha.scripts.io import ScriptError
    from jubensha.scripts.validation import Problem

    load = importer(name).load
    if not src.exists():
        raise fail(src, "(file)", "no such file or folder")
    try:
        with reading_from(src):
            script = load(src)
            beside = truth_beside(src) if truth is None else None
            supplied = read_truth_file(truth) if truth else (
                read_truth_file(beside, inside=True) if beside else None)
    except ValidationError as exc:
        raise ScriptError(str(src), [
            Problem(severity="error", message=err["msg"],
                    field=".".join(str(part) for part in err["loc"]) or "(top level)")
            for err in exc.errors()]) from None
    path = truth or beside
    if supplied is None or path is None:
        return script
    return apply_truth(script, supplied, str(truth) if truth else path.name, path=str(path))


def discover(name: str, root: Path) -> list[Path]:
    """Every script of format ``name`` under the dataset folder ``root``, except those
    reached through a symbolic link inside it (a folder of the dataset linked elsewhere)."""
    from jubensha.scripts.importers.common import fail, linked_part

    if not root.exists():
        raise fail(root, "(folder)", "no such folder")
    return [found for found in importer(name).discover(root)
            if linked_part(found, root) is None]


def copy_assets(script: Script, src: Path, dest: Path) -> list[Path]:
    """Copy the files the script's clues point to (images) from the source folder to the
    folder the script is written to, keeping their relative paths; the copies made."""
    from jubensha.scripts.images import ImagePathError, safe_image
    from jubensha.scripts.importers.common import fail

    base = src.parent if src.is_file() else src
    copied = []
    for clue in script.clues:
        if clue.image is None:
            continue
        try:
            source = safe_image(clue.image, base)
        except ImagePathError as exc:
            raise fail(base / clue.image, f"clues[{clue.id}].image", str(exc)) from None
        target = dest / clue.image
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
        copied.append(target)
    return copied


__all__ = ["IMPORTERS", "Importer", "copy_assets", "discover", "import_script", "importer"]
