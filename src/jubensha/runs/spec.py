"""Experiment specs: which games a batch plays, read from YAML and expanded into a list.

A spec crosses scripts × procedures × architectures × models × seeds (the civilians' side;
the fixed-murderer protocol seats the murderers with one architecture and model whatever
the civilians play). ``load_spec`` reads and checks a spec file, every problem naming the
file and the field; ``expand`` turns it into ``PlannedGame`` s in a fixed order, each with a
stable id (a hash of the settings that decide how the game goes) and a readable folder name.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from jubensha.agents.human import is_human
from jubensha.agents.registry import (
    AgentSpecError,
    architectures,
    check_agent_spec,
    model_free,
)
from jubensha.engine.procedure import Procedure, ProcedureError, find_procedure
from jubensha.eval.registry import UnknownMetric, get_metric, options_problems
from jubensha.llm.embeddings import EmbedderSpecError, parse_embedder_spec
from jubensha.llm.keys import ENV_NAME, settings_path
from jubensha.llm.registry import ModelOptions, ModelSpecError, validate_model_spec
from jubensha.llm.wrappers import Budget
from jubensha.runs.arena import Arena, Entrant, Pairing, pairings
from jubensha.runs.play import PlayError, SeatPlan, parse_seat, plan_seats
from jubensha.runs.presets import Applied, find_preset, preset_overrides, seat_specs
from jubensha.safeload import DocumentError, is_path, read_document
from jubensha.scripts.bundled import bundled_scripts, find_script, script_location
from jubensha.scripts.importers import IMPORTERS, discover, import_script
from jubensha.scripts.io import ScriptError
from jubensha.scripts.model import Language, Script
from jubensha.scripts.validation import Problem

ID_LENGTH = 12
METRIC_EMBEDDERS = ("none", "local", "scripted")
"""Embedders of ``eval.commands.build_metric_embedder`` that are not model specs."""
CACHE_FILE = "replies.sqlite"
"""The cache file made in a folder given as ``wrappers.cache``."""
SPEC_FILE = "spec.yaml"
"""The batch folder's own copy of its spec, paths made absolute (``runs resume`` reads it)."""


class SpecError(Exception):
    """A spec that cannot be used: one ``FILE: FIELD: problem`` line per problem."""

    def __init__(self, source: str | Path, problems: list[tuple[str, str]]):
        self.source = str(source)
        self.problems = problems
        super().__init__("\n".join(_problem_text(str(source), field, message)
                                   for field, message in problems))

    @classmethod
    def one(cls, source: str | Path, field: str, message: str) -> SpecError:
        return cls(source, [(field, message)])


def _problem_text(source: str, field: str, message: str) -> str:
    """``FILE: FIELD: problem`` on one line (each line of a spec error names its file):
    a message that goes on over lines (the models a spec may name) has them joined with
    "; ", never escaped as a literal ``\\n``."""
    first, *details = message.split("\n")
    listed = "; ".join(" ".join(d.split()) for d in details if d.strip())
    joined = f"{first} {listed}" if listed else first
    return Problem(severity="error", field=field, message=joined).render(source)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScriptEntry(_Strict):
    """One script (``path``), or every script of a dataset folder (``dataset``); ``format``
    names the importer for a public format (``wellplay``, ``conan``, ...)."""

    path: str | None = Field(None, description="Bundled id, our script file/folder, or "
                             "(with format) one folder of a public format.")
    dataset: str | None = Field(None, description="A folder holding many scripts of format.")
    format: str | None = Field(None, description="Importer: " + ", ".join(IMPORTERS))
    limit: int | None = Field(None, ge=1, description="The first N scripts of the dataset.")

    @model_validator(mode="before")
    @classmethod
    def _plain(cls, value: Any) -> Any:
        return {"path": value} if isinstance(value, str) else value

    @model_validator(mode="after")
    def _one_source(self) -> ScriptEntry:
        if (self.path is None) == (self.dataset is None):
            raise ValueError("give either path or dataset")
        if self.dataset is not None and self.format is None:
            raise ValueError("a dataset needs its format")
        if self.format is not None and self.format not in IMPORTERS:
            raise ValueError(f"unknown format {self.format!r}; one of: {', '.join(IMPORTERS)}")
        if self.limit is not None and self.dataset is None:
            raise ValueError("limit applies to a dataset only")
        return self


class SeedRange(_Strict):
    start: int = 0
    count: int = Field(ge=1)


class Murderer(_Strict):
    """The fixed-murderer protocol (PLAYER* section 3): the murderers' opponent is fixed."""

    architecture: str | None = None
    model: str | None = None


class SeatOverride(_Strict):
    """``seat: "NAME=ARCH@MODEL"`` (``parse_seat``'s syntax), only on ``script`` if given."""

    seat: str
    script: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _plain(cls, value: Any) -> Any:
        return {"seat": value} if isinstance(value, str) else value


class Limits(Budget):
    model_config = ConfigDict(extra="forbid")


class Wrappers(_Strict):
    """Model wrappers around every game's clients (``llm.wrappers.stack``)."""

    cache: str | None = Field(None, description="SQLite file of replies shared by all games "
                              f"(a folder gets {CACHE_FILE} inside).")
    retries: int = Field(1, ge=1, description="Attempts per call (1: no retry).")
    prices: str | None = Field(None, description="Price table YAML/JSON (llm.wrappers).")
    budget_per_game: Limits | None = None
    budget_per_batch: Limits | None = None


class Endpoint(_Strict):
    """Where one model spec is served, and how many of its calls may run at once across
    every game of the batch (every worker of a Ray cluster included). Which key goes to
    that server is the user's own setting (``llm.keys``), never the spec's."""

    base_url: str | None = Field(None, description="OpenAI-compatible endpoint of the model.")
    max_concurrency: int | None = Field(None, ge=1, description="Calls at once; None: any.")

    @model_validator(mode="before")
    @classmethod
    def _no_key(cls, value: Any) -> Any:
        if isinstance(value, dict) and "api_key_env" in value:
            raise ValueError(f"api_key_env: a spec does not choose which key goes to which "
                             f"server; pair the server with its key's variable in your "
                             f"settings ({settings_path()}, docs/experiments.md) and remove "
                             "this line")
        return value


ExecutorKind = Literal["local", "processes", "ray"]


class Executor(_Strict):
    """Where the games play: this process (``local``), this machine's processes
    (``processes``) or a Ray cluster (``ray``)."""

    kind: ExecutorKind = "local"
    address: str | None = Field(None, description=(
        "Ray: 'auto' (the cluster this machine belongs to), 'ray://HOST:10001', or none "
        "to start a local cluster."))
    env: list[Annotated[str, Field(pattern=ENV_NAME)]] = Field(
        default_factory=lambda: ["OPENAI_API_KEY", "OPENAI_BASE_URL"], description=(
            "Environment variables copied from the driver to the Ray workers."))
    cpus_per_game: float = Field(1.0, gt=0, description="Ray CPUs one game reserves.")
    processes: int | None = Field(None, ge=1, description=(
        "processes: how many processes play the games (default: the CPU count)."))
    retries: int = Field(1, ge=0, description="Ray: re-runs of a game whose worker died.")


def _listed(value: Any) -> Any:
    return [value] if isinstance(value, str | int) else value


class BatchSpec(_Strict):
    """An experiment. Only the fields of ``GameSettings`` decide a game's id; the others
    (concurrency, wrappers, timeout, metrics, executor, endpoints) can change between runs
    of one batch."""

    name: str = ""
    out: str | None = Field(None, description="Batch folder (default: runs/<name>).")
    scripts: list[ScriptEntry] = Field(min_length=1)
    procedures: list[str] = Field(default_factory=lambda: ["demo"], min_length=1)
    rounds: int | None = Field(None, ge=1)
    questions: int | None = Field(None, ge=1)
    architectures: list[str] = Field(default_factory=lambda: ["naive"], min_length=1)
    models: list[str] = Field(default_factory=lambda: ["local"], min_length=1)
    murderer: Murderer | None = None
    seats: list[SeatOverride] = Field(default_factory=list)
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1,
                             description="A list, one integer, or {start, count}.")
    language: Language | None = None
    embedder: str = Field("local", description="The seats' embedder, as `jubensha play`.")
    model_options: dict[str, Any] = Field(default_factory=dict)
    concurrency: int = Field(1, ge=1)
    timeout_s: float | None = Field(None, gt=0, description="Per game; None: no limit.")
    wrappers: Wrappers = Field(default_factory=Wrappers)
    metrics: list[str] = Field(default_factory=list, description="eval registry names.")
    judge: str | None = Field(None, description="Model spec for metrics that need a judge.")
    metric_embedder: str = Field("none", description="none, local, scripted or openai:<model>.")
    metric_samples: int = Field(3, ge=1, description="Samples per post-game question.")
    metric_options: dict[str, Any] = Field(
        default_factory=dict, description="Metric name → its options (docs/evaluation.md).")
    executor: Executor = Field(default_factory=Executor)
    endpoints: dict[str, Endpoint] = Field(default_factory=dict, description=(
        "Model spec → where it is served and its concurrency limit."))
    arena: Arena | None = Field(None, description="Entrants paired by seed (runs.arena); "
                                "replaces architectures, models, murderer and seeds.")
    preset: str | None = Field(None, description="A paper's settings (runs.presets): the "
                               "procedure, the agents' budgets and the metrics, unless given.")
    _source: str = PrivateAttr("spec")
    """The file the spec was read from, named by the errors of ``expand``."""

    _lists = field_validator("procedures", "architectures", "models", "metrics",
                             mode="before")(_listed)

    @field_validator("seeds", mode="before")
    @classmethod
    def _seeds(cls, value: Any) -> Any:
        if isinstance(value, dict):
            try:
                seeds = SeedRange.model_validate(value)
            except ValidationError:
                raise ValueError("write a list of integers, one integer, or {start: S, "
                                 "count: N} with N >= 1") from None
            return list(range(seeds.start, seeds.start + seeds.count))
        return [value] if isinstance(value, int) else value

    @field_validator("seeds")
    @classmethod
    def _distinct(cls, value: list[int]) -> list[int]:
        return list(dict.fromkeys(value))

    @field_validator("model_options")
    @classmethod
    def _options(cls, value: dict[str, Any]) -> dict[str, Any]:
        if "api_key" in value:
            raise ValueError("api_key does not belong in a spec file; set OPENAI_API_KEY")
        unknown = sorted(set(value) - set(ModelOptions.model_fields))
        if unknown:
            raise ValueError(f"unknown option(s) {', '.join(unknown)}; known: "
                             f"{', '.join(k for k in ModelOptions.model_fields if k != 'api_key')}")
        ModelOptions.model_validate(value)
        return value

    @field_validator("preset")
    @classmethod
    def _preset(cls, value: str | None) -> str | None:
        return None if value is None else find_preset(value).name

    @model_validator(mode="after")
    def _arena_alone(self) -> BatchSpec:
        clash = sorted({"architectures", "models", "murderer", "seeds"} & self.model_fields_set)
        if self.arena is not None and clash:
            raise ValueError(f"an arena pairs its entrants itself; remove {', '.join(clash)} "
                             "(arena.entrants, arena.games_per_script, arena.first_seed and "
                             "arena.murderer say the same)")
        return self

    def options(self) -> ModelOptions:
        return ModelOptions.model_validate(self.model_options)


class GameSettings(BaseModel):
    """Everything that decides how one game goes; its id is a hash of these."""

    model_config = ConfigDict(frozen=True)

    script: str
    script_id: str
    format: str | None = None
    procedure: str
    rounds: int | None = None
    questions: int | None = None
    architecture: str
    model: str
    murderer_architecture: str | None = None
    murderer_model: str | None = None
    seats: dict[str, SeatPlan]
    seed: int
    language: Language
    embedder: str
    model_options: dict[str, Any] = Field(default_factory=dict)
    murderers: list[str] = Field(default_factory=list, description=(
        "The script's murderers (the seats of the murderers' side, which the ratings read); "
        "derived from the script, so not part of the id."))
    preset: Applied | None = Field(None, description=(
        "The paper preset whose settings the seats play with, and what was overridden; "
        "its settings are in the seats' architectures, so it is not part of the id."))

    def game_id(self) -> str:
        settings = self.model_dump(mode="json", exclude={"murderers", "preset"})
        canonical = json.dumps(settings, sort_keys=True,
                               ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:ID_LENGTH]


@dataclass
class PlannedGame:
    """One game of a batch: its settings and what playing it needs."""

    id: str
    name: str
    position: int
    settings: GameSettings
    script: Script
    procedure: Procedure
    plans: dict[str, SeatPlan]


def folder_name(settings: GameSettings, game_id: str) -> str:
    """``<script>.<procedure>.<architecture>.<model>.s<seed>.<id prefix>``, filesystem-safe;
    where the murderers' entrant is not the civilians' (an arena, a fixed murderer) it
    follows the civilians': ``...<architecture>.<model>.vs.<its architecture>.<its
    model>.s<seed>...``."""
    murderers = []
    if settings.murderer_architecture or settings.murderer_model:
        murderers = ["vs", settings.murderer_architecture or settings.architecture,
                     settings.murderer_model or settings.model]
    parts = [settings.script_id, settings.procedure, settings.architecture, settings.model,
             *murderers, f"s{settings.seed}", game_id[:6]]
    return ".".join(re.sub(r"[^\w+-]+", "-", p).strip("-") or "x" for p in parts)


# --- reading ---------------------------------------------------------------------------------

def load_spec(path: str | Path) -> BatchSpec:
    """Read, check and resolve a spec file: relative paths become absolute (from the spec's
    folder), and every name (script, procedure, architecture, model, metric) is checked."""
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
        problems += check_names(spec, skip={field.split(".")[0] for field, _ in problems})
    if problems or spec is None:
        raise SpecError(file, problems)
    spec = spec.model_copy(update={"name": spec.name or file.stem})
    spec._source = str(file)
    return spec


def with_preset(spec: BatchSpec) -> BatchSpec:
    """The spec with its preset's procedure and metrics where it names none."""
    assert spec.preset is not None
    paper = find_preset(spec.preset)
    given = spec.model_fields_set
    update: dict[str, Any] = {}
    if "procedures" not in given:
        update["procedures"] = [paper.procedure.value]
    if "metrics" not in given:
        update["metrics"] = list(paper.metrics.value)
    return spec.model_copy(update=update)


def _validate(data: dict[str, Any]) -> tuple[BatchSpec | None, list[tuple[str, str]]]:
    """The spec and its schema problems. With problems, the spec is the rest of the file
    (each faulty top-level field left out), so that its names are checked in the same run
    and every problem of the file is told at once; None when even the rest is invalid."""
    try:
        return BatchSpec.model_validate(data), []
    except ValidationError as exc:
        problems = [(_loc(err["loc"]), _message(err)) for err in exc.errors()]
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

    def script_path(value: str | None) -> str | None:
        """A path that exists from ``base`` made absolute; a bundled id, or a name that is
        neither (its error message should show it as written), left alone."""
        if value is None or value in bundled_scripts() or not is_path(base / value):
            return value
        return absolute(value)

    scripts = [entry.model_copy(update={"path": script_path(entry.path),
                                        "dataset": absolute(entry.dataset)})
               for entry in spec.scripts]
    procedures = [absolute(p) if is_path(base / p, "file") else p for p in spec.procedures]
    cache = spec.wrappers.cache
    if cache is not None and (cache.endswith(("/", "\\")) or is_path(base / cache, "folder")):
        cache = str(Path(cache) / CACHE_FILE)
    wrappers = spec.wrappers.model_copy(update={"cache": absolute(cache),
                                                "prices": absolute(spec.wrappers.prices)})
    return spec.model_copy(update={"scripts": scripts, "procedures": procedures,
                                   "wrappers": wrappers, "out": absolute(spec.out)})


UNATTENDED = ("would be played by a person at the keyboard, and a batch runs unattended: play "
              "human seats with `jubensha play --seat NAME=human`")


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
    if spec.wrappers.prices is not None and not is_path(Path(spec.wrappers.prices), "file"):
        problems.append(("wrappers.prices", f"no such file: {spec.wrappers.prices}"))
    if "metric_options" not in skip:
        problems += [(f"metric_options.{field}", problem)
                     for field, problem in options_problems(spec.metric_options)]
    return problems


# --- expanding ---------------------------------------------------------------------------------

def load_scripts(spec: BatchSpec) -> list[tuple[str, str | None, Script]]:
    """Every script the spec names, in order: (source string, format, script)."""
    source = spec._source
    loaded = []
    problems: list[tuple[str, str]] = []
    for i, entry in enumerate(spec.scripts):
        try:
            loaded += list(_entry_scripts(entry))
        except ScriptError as exc:
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
    if entry.dataset is not None:
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
                    settings = _settings(spec, where, fmt, script, procedure, pairing,
                                         overrides[script.id])
                except SpecError as exc:
                    problems += exc.problems
                    continue
                game_id = settings.game_id()
                games.append(PlannedGame(
                    id=game_id, name=folder_name(settings, game_id), position=len(games),
                    settings=settings, script=script, procedure=procedures[procedure],
                    plans=settings.seats))
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


def _settings(spec: BatchSpec, where: str, fmt: str | None, script: Script, procedure: str,
              pairing: Pairing, overrides: list[str]) -> GameSettings:
    """One game's settings; ``murderer_*`` stay None when the murderers play as the
    civilians do (so that the ids of plain batches do not depend on this function)."""
    civilians, murderers = pairing.civilians, pairing.murderers
    named = spec.murderer or Murderer()
    fixed_arch = (murderers.architecture if named.architecture
                  or murderers.architecture != civilians.architecture else None)
    fixed_model = murderers.model if named.model or murderers.model != civilians.model else None
    try:
        plans = plan_seats(script, civilians.architecture, civilians.model, overrides,
                           murderer_architecture=fixed_arch, murderer_model=fixed_model)
    except PlayError as exc:
        raise SpecError.one(spec._source, "seats", str(exc)) from None
    people = [name for name, plan in plans.items() if is_human(plan.architecture)]
    if people:
        raise SpecError.one(spec._source, "seats", f"{', '.join(people)} {UNATTENDED}")
    applied = None
    if spec.preset is not None:
        paper = find_preset(spec.preset)
        specs, overridden = seat_specs(paper, {n: p.architecture for n, p in plans.items()})
        plans = {n: p.model_copy(update={"architecture": specs[n]}) for n, p in plans.items()}
        applied = Applied(name=paper.name, overridden={
            **preset_overrides(paper, procedure, spec.metrics), **overridden})
    return GameSettings(
        script=where, script_id=script.id, format=fmt, procedure=procedure,
        rounds=spec.rounds, questions=spec.questions, architecture=civilians.architecture,
        model=civilians.model, murderer_architecture=fixed_arch, murderer_model=fixed_model,
        seats=plans, seed=pairing.seed, language=spec.language or script.language,
        embedder=spec.embedder, model_options=spec.model_options,
        murderers=list(script.murderers), preset=applied)


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


def dump_spec(spec: BatchSpec) -> str:
    """The spec as YAML (resolved: absolute paths), for the batch folder's copy."""
    arena = {"architectures", "models", "seeds"} if spec.arena else set()
    data = spec.model_dump(mode="json", exclude_none=True, exclude=arena)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)

