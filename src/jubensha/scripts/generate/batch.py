"""Many mysteries at once: consecutive seeds in one or both languages, in memory (a batch
spec's ``generated`` entry) or written one folder each with a manifest beside them
(``jubensha scripts generate``), over several processes when asked."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Literal

import yaml

from jubensha.outdir import write_whole
from jubensha.safeload import DocumentError, one_line, read_document, shorten
from jubensha.scripts.generate.build import Request, mystery, write
from jubensha.scripts.generate.rewrite import Rewriter
from jubensha.scripts.io import SCRIPT_FILENAMES, save_script
from jubensha.scripts.model import Language, Script
from jubensha.scripts.proof.model import Level

Languages = Literal["en", "zh", "both"]
MANIFEST = "generated.yaml"
"""The list of scripts a ``scripts generate`` folder holds (and the mark that it wrote it)."""
MAX_COUNT = 100_000


def not_generated(folder: Path) -> str | None:
    """Why ``folder`` is not what ``scripts generate`` wrote (None: it is): its manifest,
    a regular file, lists a script folder for every other entry, and each such folder
    holds only its script file. A file of ``MANIFEST``'s name alone proves nothing."""
    manifest = folder / MANIFEST
    try:
        data = read_document(manifest)
    except DocumentError as exc:
        return f"{MANIFEST}: {exc}"
    entries = data.get("scripts") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return f"{MANIFEST} lists no scripts"
    listed = {str(entry.get("id")) for entry in entries if isinstance(entry, dict)}
    for child in sorted(folder.iterdir()):
        if child.name == MANIFEST:
            continue
        if child.is_symlink() or not child.is_dir() or child.name not in listed:
            return f"{shorten(one_line(child.name), 60)} is not a script it lists"
        inside = [p.name for p in child.iterdir()]
        strays = [name for name in inside if name not in SCRIPT_FILENAMES
                  or (child / name).is_symlink() or not (child / name).is_file()]
        if strays or not inside:
            return (f"{shorten(one_line(child.name), 60)}/"
                    f"{shorten(one_line(strays[0]), 60) if strays else ''} is not a "
                    "script it wrote")
    return None


def languages(lang: Languages) -> tuple[Language, ...]:
    return ("en", "zh") if lang == "both" else (lang,)


def requests(seed: int, count: int, players: int, acts: int, level: Level) -> list[Request]:
    return [Request(seed=s, players=players, acts=acts, level=level)
            for s in range(seed, seed + count)]


def scripts(batch: list[Request], lang: Languages) -> Iterator[Script]:
    """Each request's mystery in each language, in order (a world is drawn once)."""
    for request in batch:
        found = mystery(request)
        for language in languages(lang):
            yield write(found, language)


def _write_one(request: Request, lang: Languages, out: str, rewriter: Rewriter | None = None
               ) -> list[dict[str, object]]:
    """Generate and save one seed's scripts (a worker's task); their manifest entries."""
    entries = []
    for script in scripts([request], lang):
        if rewriter is not None:
            script = asyncio.run(rewriter.script(script))
        path = save_script(script, Path(out) / script.id)
        entries.append({"id": script.id, "path": str(path.relative_to(out)),
                        "language": script.language, "seed": request.seed,
                        "level": request.level, "players": request.players,
                        "acts": request.acts, "title": script.title})
    return entries


def write_all(batch: list[Request], lang: Languages, out: Path, jobs: int = 1,
              rewriter: Rewriter | None = None) -> Iterator[dict[str, object]]:
    """Write every script under ``out`` (an empty folder) as it is made, yielding its
    manifest entry; the manifest is written last, listing them in seed order. A rewriter
    (a model's client) works in this process only."""
    written: list[dict[str, object]] = []
    if jobs <= 1 or rewriter is not None:
        for request in batch:
            for entry in _write_one(request, lang, str(out), rewriter):
                written.append(entry)
                yield entry
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            chunk = max(1, len(batch) // (jobs * 8))
            for entries in pool.map(_write_one, batch, [lang] * len(batch),
                                    [str(out)] * len(batch), chunksize=chunk):
                for entry in entries:
                    written.append(entry)
                    yield entry
    write_whole(out / MANIFEST, yaml.safe_dump({"scripts": written}, allow_unicode=True,
                                               sort_keys=False))
