"""A spec expanded into its games: scripts × procedures × architectures × models × seeds
(the civilians' side; the fixed-murderer protocol seats the murderers with one architecture
and model whatever the civilians play), or scripts × procedures × an arena's pairings. The
order is fixed and each game has a stable id (a hash of the settings that decide how the
game goes) and a readable folder name.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import product
from pathlib import Path

from jubensha.agents.human import is_human
from jubensha.agents.registry import (
    AgentSpecError,
    model_free,
)
from jubensha.engine.procedure import Procedure, ProcedureError, find_procedure
from jubensha.runs.arena import Entrant, Pairing, pairings
from jubensha.runs.play import (
    PlayConfig,
    PlayError,
    TableChoices,
    parse_seat,
    table_config,
)
from jubensha.runs.presets import Applied, find_preset, preset_overrides
from jubensha.runs.spec_schema import (
    UNATTENDED,
    BatchSpec,
    GameSettings,
    Murderer,
    PlannedGame,
    ScriptEntry,
    SpecError,
    folder_name,
)
from jubensha.scripts.bundled import find_script
from jubensha.scripts.export.source import exported_scripts
from jubensha.scripts.export.write import ExportError
from jubensha.scripts.generate import requests, scripts
from jubensha.scripts.importers import discover, import_script
from jubensha.scripts.io import ScriptError
from jubensha.scripts.model import Script


def load_scripts(spec: BatchSpec) -> list[tuple[str, str | None, Script]]:
    """Every script the spec names, in order: (source string, format, script)."""
    source = spec._source
    loaded = []
    problems: list[tuple[str, str]] = []
    for i, entry in enumerate(spec.scripts):
        try:
            loaded += list(_entry_scripts(entry))
        except (ScriptError, ExportError) as exc:
            problems += [(f"scripts.{i}", line) for line in str(exc).splitlines()]
    seen: dict[str, str] = {}
    for where, _, script in loaded:
        if seen.setdefault(script.id, where) != where:
            twice = f"two scripts have the id {script.id!r} ({seen[script.id]} and {where})"
            problems.append(("scripts", twice))
    if problems:
        raise SpecError(source, problems)
    return loaded


def _entry_scripts(entry: ScriptEntry) -> Iterator[tuple[str, str | None, Script]]:
    if entry.generated is not None:
        made = entry.generated
        batch = requests(made.seed, made.count, made.players, made.acts, made.difficulty)
        for script in scripts(batch, made.lang):
            yield f"generated:{script.id}", None, script
    elif entry.exported is not None:
        for script in exported_scripts(Path(entry.exported)):
            yield f"exported:{script.id}", None, script
    elif entry.dataset is not None:
        assert entry.format is not None
        folders = discover(entry.format, Path(entry.dataset))[:entry.limit]
        for folder in folders:
            yield str(folder), entry.format, import_script(entry.format, folder)
    elif entry.format is not None:
        assert entry.path is not None
        yield entry.path, entry.format, import_script(entry.format, Path(entry.path))
    else:
        assert entry.path is not None
        yield entry.path, None, find_script(entry.path)


def expand(spec: BatchSpec) -> list[PlannedGame]:
    """The games of ``spec`` in a fixed order: scripts × procedures × architectures ×
    models × seeds, or with an arena scripts × procedures × its pairings. Seat overrides
    name characters; each must exist in some script."""
    source = spec._source
    scripts = load_scripts(spec)
    procedures = {name: find_procedure(name).with_options(rounds=spec.rounds,
                                                          questions=spec.questions)
                  for name in spec.procedures}
    overrides = _overrides(spec, scripts, source)
    games: list[PlannedGame] = []
    problems: list[tuple[str, str]] = []
    for position, (where, fmt, script) in enumerate(scripts):
        for index, procedure in enumerate(spec.procedures):
            try:
                procedures[procedure].check_acts(script)
            except ProcedureError as exc:
                problems.append((f"procedures.{index}", str(exc)))
                continue
            for pairing in _pairings(spec, position):
                try:
                    config = _config(spec, where, script, procedures[procedure], procedure,
                                     pairing, overrides[script.id])
                except SpecError as exc:
                    problems += exc.problems
                    continue
                settings = _settings(spec, where, fmt, procedure, pairing, config)
                game_id = settings.game_id()
                games.append(PlannedGame(
                    id=game_id, name=folder_name(settings, game_id), position=len(games),
                    settings=settings, config=config))
    if problems:
        raise SpecError(source, list(dict.fromkeys(problems)))
    return games


def _pairings(spec: BatchSpec, script_position: int) -> list[Pairing]:
    """The sides and seeds of one script's games: the arena's pairings, or architectures ×
    models × seeds with the spec's fixed murderer (if any) against each."""
    if spec.arena is not None:
        return pairings(spec.arena, script_position)
    murderer = spec.murderer or Murderer()
    return [Pairing(seed=seed, civilians=Entrant(architecture=arch, model=model),
                    murderers=Entrant(architecture=murderer.architecture or arch,
                                      model=murderer.model or model))
            for arch in spec.architectures for model, seed in product(
                spec.models[:1] if _model_free(arch, murderer) else spec.models, spec.seeds)]


def _model_free(architecture: str, murderer: Murderer) -> bool:
    """Whether the games of ``architecture`` do not depend on the spec's model (nor do the
    murderers'): a spec plays it with its first model only, not the same games once per
    model."""
    sides = [architecture]
    if murderer.architecture and murderer.model is None:  # the murderers take the model
        sides.append(murderer.architecture)
    try:
        return all(model_free(side) for side in sides)
    except AgentSpecError:
        return False


def _murderers(spec: BatchSpec, pairing: Pairing) -> tuple[str | None, str | None]:
    """The murderers' architecture and model where they do not play as the civilians do
    (None: as the civilians, so that the ids of plain batches do not depend on this)."""
    civilians, murderers = pairing.civilians, pairing.murderers
    named = spec.murderer or Murderer()
    fixed_arch = (murderers.architecture if named.architecture
                  or murderers.architecture != civilians.architecture else None)
    fixed_model = murderers.model if named.model or murderers.model != civilians.model else None
    return fixed_arch, fixed_model


def _config(spec: BatchSpec, where: str, script: Script, procedure: Procedure,
            procedure_name: str, pairing: Pairing, overrides: list[str]) -> PlayConfig:
    """One game as ``runs.play.table_config`` sets up every table."""
    fixed_arch, fixed_model = _murderers(spec, pairing)
    paper = find_preset(spec.preset) if spec.preset is not None else None
    choices = TableChoices(
        agents=pairing.civilians.architecture, model=pairing.civilians.model,
        seats=tuple(overrides),
        murderer_agents=fixed_arch, murderer_model=fixed_model, guard=spec.guard,
        preset=spec.preset, preset_overridden=(
            preset_overrides(paper, procedure_name, spec.metrics) if paper else {}),
        seed=pairing.seed, language=spec.language or script.language,
        embedder=spec.embedder, script_source=where)
    try:
        config = table_config(script, procedure, choices)
    except PlayError as exc:
        raise SpecError.one(spec._source, "seats", str(exc)) from None
    people = [name for name, plan in config.plans.items() if is_human(plan.architecture)]
    if people:
        raise SpecError.one(spec._source, "seats", f"{', '.join(people)} {UNATTENDED}")
    return config


def _settings(spec: BatchSpec, where: str, fmt: str | None, procedure: str,
              pairing: Pairing, config: PlayConfig) -> GameSettings:
    """What decides how the game of ``config`` goes, and so its id."""
    civilians = pairing.civilians
    fixed_arch, fixed_model = _murderers(spec, pairing)
    preset = Applied.model_validate(config.preset) if config.preset else None
    return GameSettings(
        script=where, script_id=config.script.id, format=fmt, procedure=procedure,
        rounds=spec.rounds, questions=spec.questions, architecture=civilians.architecture,
        model=civilians.model, murderer_architecture=fixed_arch, murderer_model=fixed_model,
        seats=config.plans, seed=pairing.seed, language=config.game_language,
        embedder=spec.embedder, model_options=spec.model_options,
        murderers=list(config.script.murderers), preset=preset)


def _overrides(spec: BatchSpec, scripts: list[tuple[str, str | None, Script]],
               source: str | Path) -> dict[str, list[str]]:
    """Per script id, the seat texts that apply to it (``plan_seats`` takes them)."""
    found: dict[str, list[str]] = {script.id: [] for _, _, script in scripts}
    problems: list[tuple[str, str]] = []
    for i, override in enumerate(spec.seats):
        targets = [s for _, _, s in scripts if override.script in (None, s.id)]
        if override.script is not None and not targets:
            problems.append((f"seats.{i}.script", f"no script {override.script!r} in this spec"))
            continue
        has_character = False
        for script in targets:
            try:
                parse_seat(override.seat, script)
            except PlayError as exc:
                if "no such character" not in str(exc):
                    problems.append((f"seats.{i}", str(exc)))
                    has_character = True
                continue
            found[script.id].append(override.seat)
            has_character = True
        if not has_character:
            problems.append((f"seats.{i}",
                             f"{override.seat!r}: no script of this spec has that character"))
    if problems:
        raise SpecError(source, list(dict.fromkeys(problems)))
    return found
