"""The fields of an experiment spec (``BatchSpec``) and of the games it expands to
(``GameSettings``, ``PlannedGame``): what a spec file may say, checked field by field as it
is read (``runs.spec``); the games come from ``runs.spec_expand``.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from jubensha.engine.procedure import Procedure
from jubensha.eval.failure import MAX_FAILED
from jubensha.llm.keys import ENV_NAME, settings_path
from jubensha.llm.registry import ModelOptions
from jubensha.llm.wrappers import Budget
from jubensha.runs.arena import Arena
from jubensha.runs.play import PlayConfig, SeatPlan
from jubensha.runs.presets import Applied, find_preset
from jubensha.scripts.generate import MAX_ACTS, MAX_PLAYERS, MIN_PLAYERS, Languages, Level
from jubensha.scripts.importers import IMPORTERS
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


class GeneratedSet(_Strict):
    """Fresh mysteries from the generator, one per seed (``jubensha scripts generate``)."""

    difficulty: Level = "medium"
    count: int = Field(1, ge=1, le=10_000)
    seed: int = Field(0, ge=0)
    players: int = Field(5, ge=MIN_PLAYERS, le=MAX_PLAYERS)
    acts: int = Field(1, ge=1, le=MAX_ACTS)
    lang: Languages = "en"


class ScriptEntry(_Strict):
    """One script (``path``), every script of a dataset folder (``dataset``), a set of
    generated mysteries (``generated``), or the mysteries of an exported benchmark
    (``exported``); ``format`` names the importer for a public format
    (``wellplay``, ``conan``, ...)."""

    path: str | None = Field(None, description="Bundled id, our script file/folder, or "
                             "(with format) one folder of a public format.")
    dataset: str | None = Field(None, description="A folder holding many scripts of format.")
    generated: GeneratedSet | None = Field(None, description="Generated mysteries.")
    exported: str | None = Field(None, description="A folder `jubensha scripts export` "
                                 "wrote: the mysteries its questions ask about.")
    format: str | None = Field(None, description="Importer: " + ", ".join(IMPORTERS))
    limit: int | None = Field(None, ge=1, description="The first N scripts of the dataset.")

    @model_validator(mode="before")
    @classmethod
    def _plain(cls, value: Any) -> Any:
        return {"path": value} if isinstance(value, str) else value

    @model_validator(mode="after")
    def _one_source(self) -> ScriptEntry:
        if sum(x is not None for x in (self.path, self.dataset, self.generated,
                                       self.exported)) != 1:
            raise ValueError("give one of path, dataset, generated or exported")
        if self.format is not None and (self.generated, self.exported) != (None, None):
            raise ValueError("generated and exported mysteries are native scripts: remove "
                             "format")
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
    prices: str | None = Field(None, description="Price table YAML/JSON (llm.wrappers).")
    budget_per_game: Limits | None = None
    budget_per_batch: Limits | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_retries(cls, value: Any) -> Any:
        """A model retries in its client, once (``model_options.max_retries``): the
        attempts ``retries`` set multiplied the client's. Its old default, 1, which every
        batch folder's copy of its spec holds, is no retry and is read as nothing."""
        if isinstance(value, dict) and "retries" in value:
            if value["retries"] != 1:
                raise ValueError(
                    "retries: a model's retries are its client's; set "
                    "model_options.max_retries instead (re-sends of a request on a rate "
                    "limit, a server error or a timeout; default 4)")
            value = {key: given for key, given in value.items() if key != "retries"}
        return value


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
    guard: bool | None = Field(None, description="The speech guard on every model seat, on "
                               "none, or (unset) as `jubensha play` decides: on the naive and "
                               "detective seats of the embedded local models.")
    embedder: str = Field("local", description="The seats' embedder, as `jubensha play`.")
    model_options: dict[str, Any] = Field(default_factory=dict)
    concurrency: int = Field(1, ge=1)
    timeout_s: float | None = Field(None, gt=0, description="Per game; None: no limit.")
    wrappers: Wrappers = Field(default_factory=Wrappers)
    metrics: list[str] = Field(default_factory=list, description="eval registry names.")
    judge: str | None = Field(None, description="Model spec for metrics that need a judge.")
    metric_embedder: str = Field("none", description="none, local, scripted or openai:<model>.")
    metric_samples: int = Field(3, ge=1, description="Samples per post-game question.")
    metric_max_failed: float = Field(
        MAX_FAILED, ge=0, lt=1, description="A metric whose answers failed in more than this "
        "share has no value on that game (eval.failure).")
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
        # Each seat as written before the guard was a field (the guard a word of its
        # architecture), so that the games of earlier batches keep their ids.
        settings["seats"] = {name: {"name": plan.name, "architecture": plan.agent_spec,
                                    "model": plan.model} for name, plan in self.seats.items()}
        canonical = json.dumps(settings, sort_keys=True,
                               ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:ID_LENGTH]


@dataclass
class PlannedGame:
    """One game of a batch: its settings and the game (``runs.play.table_config``'s)."""

    id: str
    name: str
    position: int
    settings: GameSettings
    config: PlayConfig

    @property
    def script(self) -> Script:
        return self.config.script

    @property
    def procedure(self) -> Procedure:
        return self.config.procedure

    @property
    def plans(self) -> dict[str, SeatPlan]:
        return self.config.plans


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


UNATTENDED = ("would be played by a person at the keyboard, and a batch runs unattended: play "
              "human seats with `jubensha play --seat NAME=human`")
