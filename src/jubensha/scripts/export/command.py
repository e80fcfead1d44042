"""``jubensha scripts export``: a set of generated mysteries, and any native scripts
(imported WellPlay ones with their questions), written as a benchmark dataset."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from jubensha.scripts.generate.command import (
    MAX_ACTS,
    MAX_PLAYERS,
    MIN_PLAYERS,
    Languages,
    Level,
)

LEVELS: dict[str, Level] = {"easy": "easy", "medium": "medium", "hard": "hard"}
MAX_EXPORT = 10_000
"""Seeds per level one export may ask for."""


def export_command(
    scripts: Annotated[list[str] | None, typer.Argument(
        help="Native scripts to add: bundled ids, script files or folders (a folder of "
        "script folders too, as `scripts import --all` writes).")] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder to write questions.jsonl "
                                      "and manifest.json to; new or empty.")] = Path("benchmark"),
    count: Annotated[int, typer.Option(
        "--count", "-c", min=0, max=MAX_EXPORT, help="Generated mysteries per level, one "
        "per seed from --seed on (0: none).")] = 0,
    seed: Annotated[int, typer.Option("--seed", "-s", min=0, help="The first seed.")] = 0,
    difficulty: Annotated[str, typer.Option(
        "--difficulty", "-d", help="The levels to generate, by commas.")
    ] = "easy,medium,hard",
    lang: Annotated[Languages, typer.Option(
        "--lang", help="en, zh, or both (the same mystery in each).")] = "both",
    players: Annotated[int, typer.Option("--players", "-n", min=MIN_PLAYERS, max=MAX_PLAYERS,
                                         help="Characters at the table.")] = 5,
    acts: Annotated[int, typer.Option("--acts", "-k", min=1, max=MAX_ACTS,
                                      help="Acts of each generated mystery.")] = 1,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Empty a folder this command wrote before.")] = False,
) -> None:
    """Write mysteries as a multiple-choice dataset: one JSON line per question with the
    text players can read (never the truth), the choices and the answer, and a manifest
    (docs/benchmarks.md). `inspect eval` runs it; `runs batch` plays the same set."""
    from jubensha.scripts.export.gather import gather
    from jubensha.scripts.export.model import MANIFEST, RECORDS
    from jubensha.scripts.export.write import ExportError, write_set
    from jubensha.scripts.io import ScriptError
    from jubensha.terminal import fail

    levels = _levels(difficulty)
    if count == 0 and not scripts:
        raise fail("(arguments): nothing to export: give --count N for generated mysteries, "
                   "or scripts")
    started = time.perf_counter()
    try:
        found = gather(scripts or [], count, seed, levels, lang, players, acts)
        _prepare(out, overwrite)
        manifest, skipped = write_set(out, found)
    except ScriptError as exc:
        raise fail("; ".join(str(exc).splitlines())) from None
    except ExportError as exc:
        raise fail(str(exc)) from None
    except OSError as exc:
        raise fail(f"{out}: (write): {exc.strerror or exc}") from None
    seconds = time.perf_counter() - started
    for question in skipped:
        typer.echo(f"warning: {question} (left out)", err=True)
    counts = "; ".join(f"{key} " + ", ".join(f"{k} {v}" for k, v in values.items())
                       for key, values in manifest.counts.items() if key != "aspect")
    typer.echo(f"wrote {manifest.records} questions of {len(manifest.scripts)} scripts to "
               f"{out / RECORDS} in {seconds:.1f} s ({counts}); manifest: {out / MANIFEST}")


def _levels(text: str) -> list[Level]:
    from jubensha.terminal import fail

    levels: list[Level] = []
    for word in (w.strip() for w in text.split(",")):
        if word not in LEVELS:
            raise fail(f"--difficulty: {word!r} is not one of {', '.join(LEVELS)}")
        levels.append(LEVELS[word])
    return list(dict.fromkeys(levels))


def _prepare(out: Path, overwrite: bool) -> None:
    from jubensha.outdir import OutError, prepare_out
    from jubensha.scripts.export.model import MANIFEST
    from jubensha.scripts.export.write import ExportError

    try:
        prepare_out(out, overwrite=overwrite, markers=[MANIFEST], owns=_not_exported)
    except OutError as exc:
        raise ExportError(str(exc)) from None


def _not_exported(folder: Path) -> str | None:
    """Why ``folder`` is not a set this command wrote (None: it is)."""
    from jubensha.scripts.export.model import MANIFEST, RECORDS

    strays = sorted(p.name for p in folder.iterdir() if p.name not in (MANIFEST, RECORDS)
                    or p.is_symlink() or not p.is_file())
    return f"{strays[0]} is not a file it wrote" if strays else None

