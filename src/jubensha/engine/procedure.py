"""Internal.

A procedure is the host's plan of a game, as data: a name, voting rules and stages.

Presets are YAML files in ``engine/presets/`` (the same format a user writes for
``--procedure path.yaml``); other packages may add presets with ``register_preset``. Every
error in a procedure file is a ``ProcedureError`` naming the file, the field and the problem.
A procedure that would leave an act of a script unplayed, or ask for a vote before the last
act, refuses that script before the game starts (``check_acts``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, ValidationError, field_validator

from jubensha.engine import stages as _builtin_stages  # noqa: F401  (registers the kinds)
from jubensha.engine import stages_mirage as _mirage_stages  # noqa: F401
from jubensha.engine import stages_whodunit as _whodunit_stages  # noqa: F401
from jubensha.engine.acts import last_act, playable_acts
from jubensha.engine.registry import (
    ENTRY_POINT_GROUP,
    StageSpec,
    UnknownName,
    specs_by_kind,
    stage_kind,
)
from jubensha.engine.voting import VotingRules
from jubensha.registry import Registry, entry_points
from jubensha.safeload import DocumentError, is_path, read_document, shown_loc
from jubensha.scripts.model import Script
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
        return specs_by_kind(value)

    def with_ids(self) -> Procedure:
        """A copy in which every stage, those inside blocks too, carries its id: its own,
        else its kind, numbered from the second repeat on."""
        seen: dict[str, int] = {}

        def named(spec: StageSpec) -> StageSpec:
            base = spec.id or spec.kind
            seen[base] = seen.get(base, 0) + 1
            update: dict[str, Any] = {"id": base if seen[base] == 1 else f"{base}-{seen[base]}"}
            if inner := spec.substages():
                update["stages"] = [named(child) for child in inner]
            return spec.model_copy(update=update)

        return self.model_copy(update={"stages": [named(spec) for spec in self.stages]})

    def stage_ids(self) -> list[str]:
        """Every stage's id, blocks followed by the stages they hold."""
        def ids(specs: list[StageSpec]) -> list[str]:
            return [name for spec in specs for name in [spec.id, *ids(spec.substages())]]

        return ids(self.with_ids().stages)

    def announced_stages(self, script: Script) -> list[StageSpec]:
        """The stages a game of ``script`` announces, in order, with the ids their
        ``StageStarted`` events carry: a block's stages once per act from the act the game
        is in when the block begins (``open_questioning-act2``); a stage the script leaves
        nothing to do (clue cards where it has none) is left out. A progress display counts
        and names stages by it."""
        playable, last = playable_acts(script), last_act(script)
        found: list[StageSpec] = []
        released: set[str] = set()
        act = 1
        for spec in self.with_ids().stages:
            if spec.substages():
                acts = [n for n in playable if n >= act]
                found += [inner if n == acts[0] else
                          inner.model_copy(update={"id": f"{inner.id}-act{n}"})
                          for n in acts for inner in spec.substages()
                          if inner.announced and inner.plays(script, n, released)]
            elif spec.announced and spec.plays(script, act, released):
                found.append(spec)
            act = spec.act_after(act, last)
        return found

    def stage_count(self, script: Script) -> int:
        """How many stages a game of ``script`` announces (a progress total)."""
        return len(self.announced_stages(script))

    def unplayed_acts(self, script: Script) -> tuple[list[int], bool]:
        """The acts of ``script`` this procedure never reaches, and whether it asks who the
        culprit is (a vote) before the last act."""
        last = last_act(script)
        act, early = 1, False
        for spec in self.stages:
            decides = spec.decides or any(inner.decides for inner in spec.substages())
            early = early or (decides and act < last)
            act = spec.act_after(act, last)
        return [n for n in playable_acts(script) if n > act], early

    def check_acts(self, script: Script) -> None:
        """Refuse, in one line, a script whose acts this procedure cannot all play."""
        unplayed, early = self.unplayed_acts(script)
        if not unplayed and not early:
            return
        acts = playable_acts(script)
        problem = (f"votes before act {acts[-1]} is played" if early and not unplayed else
                   f"never plays act{'s' if len(unplayed) > 1 else ''} "
                   f"{', '.join(map(str, unplayed))}")
        able = [name for name in presets() if not _fails(name, script)]
        raise ProcedureError(self.name, [_problem("stages", (
            f"{script.id!r} is played in {len(acts)} acts ({', '.join(map(str, acts))}) and "
            f"this procedure {problem}; presets that play every act: {', '.join(able)}"))])

    def with_options(self, *, rounds: int | None = None,
                     questions: int | None = None) -> Procedure:
        """A copy whose open rounds use ``rounds`` and ``questions`` per turn."""
        stages = [spec.scaled(rounds=rounds, questions=questions) for spec in self.stages]
        return self.model_copy(update={"stages": stages})


def _fails(name: str, script: Script) -> bool:
    try:
        unplayed, early = find_procedure(name).unplayed_acts(script)
    except ProcedureError:
        return True
    return bool(unplayed) or early


def presets_dir() -> Path:
    return Path(str(resources.files("jubensha.engine") / "presets"))


def _builtin_presets() -> None:
    """The YAML files of ``engine/presets/`` as presets (before any plug-in's: a plug-in
    naming one of them is refused)."""
    for path in sorted(presets_dir().glob("*.yaml")):
        PRESETS.put(path.stem, partial(load_procedure, path))


PRESETS: Registry[Callable[[], Procedure]] = Registry(
    sources=[_builtin_presets, entry_points(ENTRY_POINT_GROUP)])
"""Each preset's builder, called anew for every game (a fresh ``Procedure`` each time)."""


def register_preset(name: str, make: Callable[[], Procedure] | Path, *,
                    replace: bool = False) -> None:
    """Make ``name`` usable as ``--procedure name``: a YAML file or a function building it;
    a name taken already (a built-in preset's too) is refused unless ``replace``."""
    PRESETS.put(name, (lambda: load_procedure(make)) if isinstance(make, Path) else make,
                replace=replace)


def presets() -> list[str]:
    return sorted(PRESETS)


def find_procedure(name: str) -> Procedure:
    """A preset by name, or a procedure YAML file by path."""
    if name in PRESETS:
        return PRESETS.get(name)()
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
        problems += [_problem(_field(shown_loc(err)), _message(err)) for err in exc.errors()
                     if not (problems and err["loc"][:1] == ("stages",))]
    if problems:
        raise ProcedureError(source, problems)
    return Procedure.model_validate(data)


def _stage_problems(stages: Any, field: str = "stages") -> list[Problem]:
    if not isinstance(stages, list) or not stages:
        return [_problem(field, "expected a non-empty list of stages")]
    problems = []
    for index, item in enumerate(stages):
        where = f"{field}[{index}]"
        if not isinstance(item, dict):
            problems.append(_problem(where, "expected a mapping with a `kind`"))
            continue
        try:
            spec = stage_kind(str(item.get("kind"))).spec
        except UnknownName as exc:
            problems.append(_problem(f"{where}.kind", str(exc)))
            continue
        nested = item.get("stages")
        inner = (_stage_problems(nested, f"{where}.stages")
                 if "stages" in spec.model_fields and isinstance(nested, list) else [])
        try:
            spec.model_validate(item)
        except ValidationError as exc:
            problems += [_problem(f"{where}.{_field(shown_loc(err))}", _message(err))
                         for err in exc.errors()
                         if not (inner and err["loc"][:1] == ("stages",))]
        problems += inner
    return problems


def _problem(field: str, message: str) -> Problem:
    return Problem(severity="error", field=field, message=message)


def _field(loc: tuple[Any, ...]) -> str:
    text = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)
    return text.lstrip(".") or "(top level)"


def _message(err: Any) -> str:
    return "unknown field" if err["type"] == "extra_forbidden" else err["msg"]
