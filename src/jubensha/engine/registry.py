"""The registry of stage kinds: a stage kind is an options model plus an async runner.

A procedure names stages by ``kind``; the engine looks the kind up here, validates the
stage's options with the kind's model and runs it with the table. The registry knows neither
the table nor the procedure: stage modules import it to register, the procedure to look kinds
up, so the engine reads top-down (game → procedure → stage kinds → table, registry). Other
packages add kinds with ``@register_stage(TheirSpec)`` in their own module; to make a
kind usable by name from YAML or the CLI without an import, the module is declared as an
entry point in the ``jubensha.stages`` group, which is loaded the first time a name is missing
(``jubensha.registry``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from jubensha.registry import Registry, UnknownName, entry_points

ENTRY_POINT_GROUP = "jubensha.stages"


class StageSpec(BaseModel):
    """Options common to every stage. Subclasses fix ``kind`` with a ``Literal`` default."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    id: str = Field("", description="Name used in events' `stage` field; default: the kind, "
                                    "numbered when it repeats.")
    title: str = Field("", description="Header shown in transcripts; default: the host's "
                                       "title for the kind, in the game's language.")

    def scaled(self, *, rounds: int | None = None, questions: int | None = None) -> StageSpec:
        """This stage with the game's ``--rounds`` / ``--questions`` applied; kinds that have
        open rounds override it, the others ignore both."""
        return self

    decides: ClassVar[bool] = False
    """Asks the seats who the culprit is (a vote, an accusation): every act of the script
    must have been played before this stage."""
    announced: ClassVar[bool] = True
    """Opens with a ``StageStarted`` event; a stage that only holds other stages does not."""

    def act_after(self, act: int, last: int) -> int:
        """The act the game is in once this stage has run from ``act`` (``last``: the
        script's last act). Kinds that start acts override it."""
        return act

    def substages(self) -> list[StageSpec]:
        """The stages this one runs in turn (a block of stages); none for most kinds."""
        return []

    def plays(self, script: Any, act: int, released: set[str]) -> bool:
        """Whether a game of ``script`` in ``act`` will run this stage, as far as the script
        alone tells (``released``: the clue cards dealt by the stages before; a kind that
        deals some adds them). A progress total counts the stages that play."""
        return True


S = TypeVar("S", bound=StageSpec)
Runner = Callable[[Any, Any], Awaitable[None]]
"""``runner(spec, table)``: the registry does not need to know what a table is."""
Skip = Callable[[Any, Any], bool]


@dataclass(frozen=True)
class StageKind:
    kind: str
    spec: type[StageSpec]
    run: Runner
    skip: Skip | None = None
    """Optional test: when it returns True the stage is left out (no StageStarted event)."""


def _unknown_kind(name: str, known: list[str]) -> UnknownName:
    return UnknownName(f"unknown stage kind {name!r} (known: {', '.join(sorted(known))})")


STAGE_KINDS: Registry[StageKind] = Registry(unknown=_unknown_kind,
                                            sources=[entry_points(ENTRY_POINT_GROUP)])


def kind_of(spec: type[StageSpec]) -> str:
    """The kind a spec class declares as the default of its ``kind`` field."""
    default = spec.model_fields["kind"].default
    if not isinstance(default, str) or not default:
        raise TypeError(f"{spec.__name__}.kind needs a Literal default naming the kind")
    return default


def register_stage(spec: type[S], *, skip: Skip | None = None, replace: bool = False
                   ) -> Callable[[Runner], Runner]:
    """Decorator registering ``runner(spec, table)`` for the kind ``spec`` declares; a kind
    taken already is refused unless ``replace``."""

    def decorate(runner: Runner) -> Runner:
        name = kind_of(spec)
        STAGE_KINDS.put(name, StageKind(kind=name, spec=spec, run=runner, skip=skip),
                        replace=replace)
        return runner

    return decorate


def stage_kind(name: str) -> StageKind:
    """The registered kind ``name``; UnknownName lists the known kinds."""
    return STAGE_KINDS.get(name)


def specs_by_kind(value: Any) -> Any:
    """Each mapping of a stage list validated with the options model of its kind (a kind
    nobody registered is a ValueError, so it is reported like any invalid field)."""
    if not isinstance(value, list):
        return value
    specs = []
    for item in value:
        if not isinstance(item, dict):
            specs.append(item)
            continue
        try:
            kind = stage_kind(str(item.get("kind")))
        except UnknownName as exc:
            raise ValueError(str(exc)) from None
        specs.append(kind.spec.model_validate(item))
    return specs
