"""Experiment specs: which games a batch plays, read from YAML and expanded into a list.

A spec crosses scripts × procedures × architectures × models × seeds (the civilians' side;
the fixed-murderer protocol seats the murderers with one architecture and model whatever
the civilians play). ``load_spec`` reads and checks a spec file, every problem naming the
file and the field; ``runs.spec_expand.expand`` turns it into ``PlannedGame`` s. The fields
are ``runs.spec_schema``'s.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic import (
    ValidationError,
)

from jubensha.agents.human import is_human
from jubensha.agents.registry import (
    AgentSpecError,
    architectures,
    check_agent_spec,
)
from jubensha.engine.procedure import ProcedureError, find_procedure
from jubensha.eval.registry import UnknownMetric, get_metric, options_problems
from jubensha.llm.embeddings import EmbedderSpecError, parse_embedder_spec
from jubensha.llm.registry import ModelSpecError, validate_model_spec
from jubensha.llm.wrappers import PriceTable, SqliteCache
from jubensha.runs.presets import find_preset
from jubensha.runs.spec_schema import CACHE_FILE, METRIC_EMBEDDERS, UNATTENDED, BatchSpec, SpecError
from jubensha.safeload import DocumentError, is_path, one_line, read_document, shown_loc
from jubensha.scripts.bundled import bundled_scripts, script_location
from jubensha.scripts.io import ScriptError

Confine = Callable[[BatchSpec], list[tuple[str, str]]]
"""The problems of paths a spec may not name (``runs.spec_trust``), found before any of
them is opened."""


def load_spec(path: str | Path, confine: Confine | None = None) -> BatchSpec:
    """Read, check and resolve a spec file: relative paths become absolute (from the spec's
    folder), ``confine`` refuses paths before any is opened, and every name (script,
    procedure, architecture, model, metric) is checked."""
    file = Path(path)
    try:
        data = read_document(file)
    except DocumentError as exc:
        raise SpecError(file, [("(file)", str(exc))]) from None
    if not isinstance(data, dict):
        raise SpecError(file, [("(top level)", "expected a mapping with at least `scripts`")])
    spec, problems = _validate(data)
    if spec is not None and spec.preset is not None:
        spec = with_preset(spec)
    if spec is not None:
        spec = resolve_paths(spec, file.parent)
        refused = confine(spec) if confine is not None else []
        if refused:
            raise SpecError(file, problems + refused)
        problems += check_names(spec, skip={field.split(".")[0] for field, _ in problems})
    if problems or spec is None:
        raise SpecError(file, problems)
    spec = spec.model_copy(update={"name": spec.name or file.stem})
    spec._source = str(file)
    return spec


def with_preset(spec: BatchSpec) -> BatchSpec:
    """The spec with its preset's procedure, metrics and agent where it names none (an
    arena names its entrants itself)."""
    assert spec.preset is not None
    paper = find_preset(spec.preset)
    given = spec.model_fields_set
    update: dict[str, Any] = {}
    if "procedures" not in given:
        update["procedures"] = [paper.procedure.value]
    if "metrics" not in given:
        update["metrics"] = list(paper.metrics.value)
    if "architectures" not in given and spec.arena is None:
        update["architectures"] = [paper.agent.value]
    return spec.model_copy(update=update)


def _validate(data: dict[str, Any]) -> tuple[BatchSpec | None, list[tuple[str, str]]]:
    """The spec and its schema problems. With problems, the spec is the rest of the file
    (each faulty top-level field left out), so that its names are checked in the same run
    and every problem of the file is told at once; None when even the rest is invalid."""
    try:
        return BatchSpec.model_validate(data), []
    except ValidationError as exc:
        problems = [(_loc(shown_loc(err)), _message(err)) for err in exc.errors()]
        faulty = {err["loc"][0] for err in exc.errors() if err["loc"]}
    try:
        rest = BatchSpec.model_validate({k: v for k, v in data.items() if k not in faulty})
    except ValidationError:
        rest = None
    return rest, problems


def _loc(loc: tuple[Any, ...]) -> str:
    """``("scripts", 1, "format")`` → ``scripts.1.format``."""
    return ".".join(str(part) for part in loc) or "(top level)"


def _message(err: Any) -> str:
    if err["type"] == "extra_forbidden":
        return "unknown field"
    message = str(err["msg"])
    return message.removeprefix("Value error, ")


def resolve_paths(spec: BatchSpec, base: Path) -> BatchSpec:
    """Paths of the spec relative to ``base`` made absolute; bundled ids stay ids."""
    def absolute(value: str | None) -> str | None:
        return None if value is None else str((base / Path(value).expanduser()).resolve())

    def unfollowed(value: str | None) -> str | None:
        """Absolute, its links left as they are: a file the spec names is read as
        ``safeload`` reads it, which refuses a link that leads out of its folder."""
        return None if value is None else os.path.normpath(base / Path(value).expanduser())

    def script_path(value: str | None) -> str | None:
        """A path that exists from ``base`` made absolute; a bundled id, or a name that is
        neither (its error message should show it as written), left alone."""
        if value is None or value in bundled_scripts() or not is_path(base / value):
            return value
        return unfollowed(value)

    scripts = [entry.model_copy(update={"path": script_path(entry.path),
                                        "dataset": absolute(entry.dataset),
                                        "exported": absolute(entry.exported)})
               for entry in spec.scripts]
    procedures = [unfollowed(p) if is_path(base / p, "file") else p for p in spec.procedures]
    cache = spec.wrappers.cache
    if cache is not None and (cache.endswith(("/", "\\")) or is_path(base / cache, "folder")):
        cache = str(Path(cache) / CACHE_FILE)
    wrappers = spec.wrappers.model_copy(update={"cache": absolute(cache),
                                                "prices": unfollowed(spec.wrappers.prices)})
    return spec.model_copy(update={"scripts": scripts, "procedures": procedures,
                                   "wrappers": wrappers, "out": absolute(spec.out)})


def unattended(architecture: str) -> None:
    """An architecture a batch can play: it exists and needs no person at the keyboard.
    An unknown one is told the architectures a batch accepts (not ``human``)."""
    if is_human(architecture):
        raise AgentSpecError(f"{architecture!r} {UNATTENDED}")
    try:
        check_agent_spec(architecture)
    except AgentSpecError as exc:
        if "unknown architecture" not in str(exc):
            raise
        accepted = [name for name in architectures() if not is_human(name)]
        raise AgentSpecError(f"unknown architecture {architecture.strip()!r}; a batch plays "
                             f"{', '.join(accepted)} (human seats play only in "
                             "`jubensha play`)") from None


def check_names(spec: BatchSpec, skip: set[str] | frozenset[str] = frozenset()
                ) -> list[tuple[str, str]]:
    """The problems of the names the spec gives: every script, architecture, model,
    procedure and metric must exist (top-level fields in ``skip`` already have one)."""
    problems: list[tuple[str, str]] = []

    def check(field: str, test: Any, value: str) -> None:
        if field.split(".")[0] in skip:
            return
        try:
            test(value)
        except (AgentSpecError, ModelSpecError, ProcedureError, UnknownMetric,
                EmbedderSpecError, ScriptError) as exc:
            problems.append((field, str(exc)))

    for i, entry in enumerate(spec.scripts):
        if entry.path is not None and entry.format is None:
            check(f"scripts.{i}", script_location, entry.path)

    for i, name in enumerate(spec.architectures):
        check(f"architectures.{i}", unattended, name)
    for i, name in enumerate(spec.models):
        check(f"models.{i}", validate_model_spec, name)
    for i, name in enumerate(spec.procedures):
        check(f"procedures.{i}", find_procedure, name)
    for name in spec.endpoints:
        check(f"endpoints.{name}", validate_model_spec, name)
    if spec.murderer and spec.murderer.architecture:
        check("murderer.architecture", unattended, spec.murderer.architecture)
    if spec.murderer and spec.murderer.model:
        check("murderer.model", validate_model_spec, spec.murderer.model)
    if spec.arena is not None:
        named = [(f"arena.entrants.{i}", e) for i, e in enumerate(spec.arena.entrants)]
        named += [("arena.murderer", spec.arena.murderer)] if spec.arena.murderer else []
        for field, entrant in named:
            check(f"{field}.architecture", unattended, entrant.architecture)
            check(f"{field}.model", validate_model_spec, entrant.model)
    if spec.judge:
        check("judge", validate_model_spec, spec.judge)
    if not spec.embedder.startswith("openai:"):
        check("embedder", parse_embedder_spec, spec.embedder)
    if spec.metric_embedder not in METRIC_EMBEDDERS:
        check("metric_embedder", validate_model_spec, spec.metric_embedder)
    for i, name in enumerate(spec.metrics):
        try:
            needs = get_metric(name).needs
        except UnknownMetric as exc:
            problems.append((f"metrics.{i}", str(exc)))
            continue
        if "judge" in needs and spec.judge is None:
            needed = f"metric {name!r} needs a judge model (set `judge`)"
            problems.append((f"metrics.{i}", needed))
        elif get_metric(name).judged_under(spec.preset) and spec.judge is None:
            problems.append((f"metrics.{i}", (
                f"metric {name!r}: the paper of preset {spec.preset} scored it with a model "
                f"judge ({get_metric(name).paper_judge}); set `judge`, or leave {name!r} out "
                "of `metrics`")))
    problems += wrapper_problems(spec)
    if "metric_options" not in skip:
        problems += [(f"metric_options.{field}", problem)
                     for field, problem in options_problems(spec.metric_options)]
    return problems


def wrapper_problems(spec: BatchSpec) -> list[tuple[str, str]]:
    """The price table read and the reply cache looked at now, before any game: a file
    that is neither is refused here, not written to or failed on mid-batch."""
    problems = []
    prices, cache = spec.wrappers.prices, spec.wrappers.cache
    if prices is not None and not is_path(Path(prices), "any"):
        problems.append(("wrappers.prices", f"no such file: {one_line(prices, 120)}"))
    elif prices is not None:
        try:
            PriceTable.load(Path(prices))
        except ValueError as exc:
            problems.append(("wrappers.prices", str(exc)))
    unusable = SqliteCache.unusable(Path(cache)) if cache is not None else None
    if unusable is not None:
        problems.append(("wrappers.cache", f"{one_line(str(cache), 120)}: {unusable}"))
    return problems


def dump_spec(spec: BatchSpec) -> str:
    """The spec as YAML (resolved: absolute paths), for the batch folder's copy."""
    arena = {"architectures", "models", "seeds"} if spec.arena else set()
    data = spec.model_dump(mode="json", exclude_none=True, exclude=arena)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)

