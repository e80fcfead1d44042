"""Writing a set: the records file, one JSON object a line, then the manifest (written
last, so a folder with a manifest holds a whole set), and reading them back, each line
checked against the record format."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import ValidationError

from jubensha.outdir import write_whole
from jubensha.safeload import DocumentError, read_document
from jubensha.scripts.export.model import (
    MANIFEST,
    RECORDS,
    ExportError,
    Manifest,
    Origin,
    Record,
)
from jubensha.scripts.export.records import origin, records
from jubensha.scripts.model import Script


def write_set(out: Path, scripts: Iterable[tuple[Script, str | None]]
              ) -> tuple[Manifest, list[str]]:
    """Write the records of every (script, its file or None) to ``out`` (an empty folder)
    and the manifest; the manifest, and the questions left out as "script/question: why"."""
    origins: list[Origin] = []
    skipped: list[str] = []
    counts: dict[str, Counter[str]] = {k: Counter() for k in ("level", "language", "source",
                                                              "aspect")}
    digest = hashlib.sha256()
    seen: set[str] = set()
    try:
        with (out / RECORDS).open("wb") as sink:
            for script, path in scripts:
                if script.id in seen:
                    raise ExportError(f"{path or script.id}: id: a second script has the id "
                                      f"{script.id!r}")
                seen.add(script.id)
                try:
                    made, left = records(script)
                except ExportError as exc:
                    raise ExportError(f"{path or script.id}: {exc}") from None
                skipped += [f"{script.id}/{q}" for q in left]
                ids = [r.id for r in made]
                if len(set(ids)) < len(ids):
                    twice = next(i for i in ids if ids.count(i) > 1)
                    raise ExportError(f"{path or script.id}: questions: two questions have "
                                      f"the id {twice.partition('/')[2]!r}")
                for record in made:
                    line = (record.model_dump_json() + "\n").encode("utf-8")
                    sink.write(line)
                    digest.update(line)
                    for key, tally in counts.items():
                        tally[str(getattr(record, key) or "none")] += 1
                origins.append(origin(script, made, path))
    except BaseException:
        (out / RECORDS).unlink(missing_ok=True)  # no half set: the folder stays empty
        raise
    manifest = Manifest(records=sum(o.records for o in origins), sha256=digest.hexdigest(),
                        counts={k: dict(sorted(v.items())) for k, v in counts.items()},
                        scripts=origins)
    write_whole(out / MANIFEST, manifest.model_dump_json(indent=2) + "\n")
    return manifest, skipped


def read_manifest(folder: Path) -> Manifest:
    """The manifest of a written set; ``ExportError`` naming the field that is wrong."""
    path = folder / MANIFEST
    try:
        return Manifest.model_validate(read_document(path))
    except DocumentError as exc:
        raise ExportError(f"{path}: {exc}") from None
    except ValidationError as exc:
        raise ExportError(f"{path}: " + _problem(exc)) from None


def read_records(path: Path) -> Iterator[Record]:
    """Each record of a records file, validated; ``ExportError`` names the bad line."""
    try:
        with path.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                try:
                    yield Record.model_validate(json.loads(line))
                except (ValueError, ValidationError) as exc:
                    problem = _problem(exc) if isinstance(exc, ValidationError) else str(exc)
                    raise ExportError(f"{path}:{number}: {problem}") from None
    except OSError as exc:
        raise ExportError(f"{path}: (read): {exc.strerror or exc}") from None


def _problem(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "(top level)"
    return f"{where}: {first['msg'].removeprefix('Value error, ')}"
