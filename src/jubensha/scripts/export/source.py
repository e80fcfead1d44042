"""The scripts of a written set again, for games (a batch spec's ``exported`` entry): a
generated mystery from its request, any other from its file, each checked against the
fingerprint of what was exported, so the games play the very mysteries the records ask
about (a changed generator or an edited file is an error, not a different benchmark)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from jubensha.scripts.bundled import find_script
from jubensha.scripts.export.model import ExportError, Origin
from jubensha.scripts.export.records import fingerprint, records
from jubensha.scripts.export.write import read_manifest
from jubensha.scripts.model import Script


def exported_scripts(folder: Path) -> Iterator[Script]:
    """Each script of the set written to ``folder``, in the manifest's order."""
    manifest = read_manifest(folder)
    for number, entry in enumerate(manifest.scripts):
        where = f"{folder}: scripts.{number}"
        script = _rebuilt(entry, where)
        try:
            made = records(script)[0]
        except ExportError as exc:
            raise ExportError(f"{where}: {exc}") from None
        if script.id != entry.id or fingerprint(made) != entry.fingerprint:
            raise ExportError(
                f"{folder}: scripts.{number}: {entry.id} is no longer the script that was "
                "exported (" + ("the generator writes another mystery for its seed"
                                if entry.path is None else f"{entry.path} changed")
                + "); export the set again")
        yield script


def _rebuilt(entry: Origin, where: str) -> Script:
    from jubensha.scripts.generate import GenerationError, Request, generate

    if entry.path is not None:
        return find_script(entry.path)
    if entry.seed is None or entry.level is None or entry.players is None \
            or entry.acts is None:
        raise ExportError(f"{where}: a generated script needs seed, level, players and acts")
    try:
        return generate(Request(entry.seed, entry.players, entry.acts, entry.level),
                        (entry.language,))[0]
    except GenerationError as exc:
        raise ExportError(f"{where}: {exc}") from None
