"""Which files a batch folder's spec may name.

``runs batch SPEC`` plays the spec the user chose and keeps it in the batch folder
(``spec.yaml``, paths made absolute), signed on its last line with the user's own key
(``batch.key`` in the settings folder, ``signing``). ``runs resume`` and ``runs reindex``
read that copy again. A copy this user signed names what the user chose. Any other (a
batch folder someone shared, a spec edited by hand) may name files only inside the batch
folder, or inside a folder the user's settings list under ``folders:``: a reply cache
elsewhere would be written to, a price table, script, procedure or cassette elsewhere
read. Every other path is refused, one line each, before any work starts.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from jubensha.engine.procedure import presets
from jubensha.llm.keys import settings_path, user_settings
from jubensha.llm.registry import named_file
from jubensha.runs.spec_schema import METRIC_EMBEDDERS, BatchSpec
from jubensha.safeload import one_line
from jubensha.scripts.bundled import bundled_scripts
from jubensha.signing import load_key, sign, verify
from jubensha.userdirs import config_dir

KEY_FILE = "batch.key"
SIGNED = "jubensha batch spec"
MARK = "# signed with the batch.key of the user who started this batch: "


def sign_spec(text: str) -> str:
    """``text`` with its signature as a last comment line (one file, written whole)."""
    return f"{text}{MARK}{sign(_key(), SIGNED, text.encode())}\n"


def unsigned(text: str) -> tuple[str, bool]:
    """The spec text without its signature line, and whether this user's key signed it."""
    body, mark, signature = text.rpartition(MARK)
    if not mark or not signature.endswith("\n") or "\n" in signature[:-1]:
        return text, False
    return body, verify(_key(), SIGNED, body.encode(), signature[:-1])


def _key() -> bytes:
    return load_key(config_dir(), KEY_FILE)


def foreign_paths(spec: BatchSpec, root: Path) -> list[tuple[str, str]]:
    """A problem for each file the spec of the batch folder ``root`` names outside it and
    outside the folders the user's settings allow (``folders:``)."""
    allowed = [root.resolve(), *(Path(folder).expanduser().resolve()
                                 for folder in user_settings().folders)]
    problems = []
    for field, value in named_paths(spec):
        path = Path(value) if os.path.isabs(value) else root / value
        if not any(path.resolve().is_relative_to(folder) for folder in allowed):
            problems.append((field, (
                f"{one_line(value, 120)} is outside the batch folder; a batch folder you did "
                "not start (or whose spec.yaml was edited) may name only files inside it: "
                f"copy the file in, or list its folder under `folders:` in {settings_path()}")))
    return problems


def named_paths(spec: BatchSpec) -> Iterator[tuple[str, str]]:
    """Every (field, path) of the spec that names a file or folder to open."""
    bundled = bundled_scripts()
    for i, entry in enumerate(spec.scripts):
        if entry.path is not None and entry.path not in bundled:
            yield f"scripts.{i}.path", entry.path
        if entry.dataset is not None:
            yield f"scripts.{i}.dataset", entry.dataset
    named = presets()
    yield from ((f"procedures.{i}", procedure) for i, procedure in enumerate(spec.procedures)
                if procedure not in named)
    for field, value in (("wrappers.cache", spec.wrappers.cache),
                         ("wrappers.prices", spec.wrappers.prices)):
        if value is not None:
            yield field, value
    for field, model in _model_specs(spec):
        file = named_file(model)
        if file is not None:
            yield field, file


def _model_specs(spec: BatchSpec) -> Iterator[tuple[str, str]]:
    yield from ((f"models.{i}", model) for i, model in enumerate(spec.models))
    for i, seat in enumerate(spec.seats):
        value = seat.seat.partition("=")[2]
        yield f"seats.{i}", value.partition("@")[2] if "@" in value else value
    if spec.murderer and spec.murderer.model:
        yield "murderer.model", spec.murderer.model
    if spec.arena is not None:
        yield from ((f"arena.entrants.{i}.model", entrant.model)
                    for i, entrant in enumerate(spec.arena.entrants))
        if spec.arena.murderer is not None:
            yield "arena.murderer.model", spec.arena.murderer.model
    if spec.judge:
        yield "judge", spec.judge
    if spec.metric_embedder not in METRIC_EMBEDDERS:
        yield "metric_embedder", spec.metric_embedder
