"""A procedure is the host's plan of a game, as data: a name, voting rules and stages.

Presets are YAML files in ``engine/presets/`` (the same format a user writes for
``--procedure path.yaml``); other packages may add presets with ``register_preset``. Every
error in a procedure file is a ``ProcedureError`` naming the file, the field and the problem.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, ValidationError, field_validator

from jubensha.engine import stages as _builtin_stages  # noqa: F401  (registers the kinds)
from jubensha.engine import stages_mirage as _mirage_stages  # noqa: F401
from jubensha.engine import stages_whodunit as _whodunit_stages  # noqa: F401
from jubensha.engine.registry import StageSpec, UnknownName, load_plugins, stage_kind
from jubensha.engine.voting import VotingRules
from jubensha.safeload import DocumentError, is_path, read_document
from jubensha.scripts.validation import Problem


class ProcedureError(Exception):
    """A procedure that cannot be used; ``problems`` names each field and what is wrong."""

    def __init__(self, source: str, problems: list[Problem]):
        self.source = source
        self.problems = problems
        super().__init__("\n".join(p.render(source) for p in problems))


class Procedure(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    source: str = Field("", description="Where the procedure comes from (paper, section).")
    voting: VotingRules = Field(default_factory=VotingRules)
    stages: list[SerializeAsAny[StageSpec]] = Field(min_length=1)

    @field_validator("stages", mode="before")
    @classmethod
    def _by_kind(cls, value: Any) -> Any:
        """Validate each stage with the options model of its kind (a registry lookup)."""
        if not isinstance(value, list):
            return value
        return [stage_kind(str(item.get("kind"))).spec.model_validate(item)
                if isinstance(item, dict) else item for item in value]

    def stage_ids(self) -> list[str]:
        """Each stage's id: its own, else its kind, numbered from the second repeat on."""
        seen: dict[str, int] = {}
        ids = []
        for spec in self.stages:
            base = spec.id or spec.kind
            seen[base] = seen.get(base, 0) + 1
            ids.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
        return ids

    def with_options(self, *, rounds: int | None = None,
                     questions: int | None = None) -> Procedure:
        """A copy whose open rounds use ``rounds`` and ``questions`` per turn."""
        stages = [spec.scaled(rounds=rounds, questions=questions) for spec in self.stages]
        return self.model_copy(update={"stages": stages})


def presets_dir() -> Path:
    return Path(str(resources.files("jubensha.engine") / "presets"))


_PRESETS: dict[str, Callable[[], Procedure]] = {}


def register_preset(name: str, make: Callable[[], Procedure] | Path) -> None:
    """Make ``name`` usable as ``--procedure name``: a YAML file or a function building it."""
    _PRESETS[name] = (lambda: load_procedure(make)) if isinstance(make, Path) else make


def presets() -> list[str]:
    load_plugins()
    return sorted({*_PRESETS, *(p.stem for p in presets_dir().glob("*.yaml"))})


def find_procedure(name: str) -> Procedure:
    """A preset by name, or a procedure YAML file by path."""
    load_plugins()
    if name in _PRESETS:
        return _PRESETS[name]()
    builtin = presets_dir() / f"{name}.yaml"
    if is_path(builtin, "file"):
        return load_procedure(builtin)
    if is_path(Path(name), "file"):
        return load_procedure(name)
    raise ProcedureError(name, [Problem(severity="error", field="(name)",
                                        message="no preset or file of that name (presets: "
                                        f"{', '.join(presets())})")])


def load_procedure(path: str | Path) -> Procedure:
    """Read a procedure YAML (or JSON) file."""
    file = Path(path)
    try:
        data = read_document(file)
    except DocumentError as exc:
        raise ProcedureError(str(file), [_problem("(file)", str(exc))]) from None
    return parse_procedure(data, str(file))


def parse_procedure(data: Any, source: str) -> Procedure:
    """Build a Procedure from plain data; every problem names its field."""
    if not isinstance(data, dict):
        raise ProcedureError(source, [_problem("(top level)", "expected a mapping with "
                                                             "`name` and `stages`")])
    stage_data = data.get("stages")
    problems = _stage_problems(stage_data)
    try:
        Procedure.model_validate({**data, "stages": []} if problems else data)
    except ValidationError as exc:
        problems += [_problem(_field(err["loc"]), _message(err)) for err in exc.errors()
                     if not (problems and err["loc"][:1] == ("stages",))]
    if problems:
        raise ProcedureError(source, problems)
    return Procedure.model_validate(data)


def _stage_problems(stages: Any) -> list[Problem]:
    if not isinstance(stages, list) or not stages:
        return [_problem("stages", "expected a non-empty list of stages")]
    problems = []
    for index, item in enumerate(stages):
        where = f"stages[{index}]"
        if not isinstance(item, dict):
            problems.append(_problem(where, "expected a mapping with a `kind`"))
            continue
        try:
            spec = stage_kind(str(item.get("kind"))).spec
        except UnknownName as exc:
            problems.append(_problem(f"{where}.kind", str(exc)))
            continue
        try:
            spec.model_validate(item)
        except ValidationError as exc:
            problems += [_problem(f"{where}.{_field(err['loc'])}", _message(err))
                         for err in exc.errors()]
    return problems


def _problem(field: str, message: str) -> Problem:
    return Problem(severity="error", field=field, message=message)


def _field(loc: tuple[Any, ...]) -> str:
    text = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)
    return text.lstrip(".") or "(top level)"


def _message(err: Any) -> str:
    return "unknown field" if err["type"] == "extra_forbidden" else err["msg"]
