"""Agents by name: ``make_agent("naive")``, ``make_agent("thinkthrice:mr+sr")``.

A name is ``ARCH`` or ``ARCH:OPTION``; the option string goes to the architecture's factory,
which parses it (and says what is wrong with it). The word ``guard`` among the options
(``naive:guard``, ``thinkthrice:mr+sr+guard``) is the registry's own: it wraps the agent in
the speech guard (``agents.guard``), whatever the architecture. Each architecture is one line of
``ARCHITECTURES`` (a ``jubensha.registry.Registry``), a ``module:function`` path imported only
when used, so an architecture's dependencies load only when someone plays it.
``register_architecture`` adds one at run time.
"""

from __future__ import annotations

from collections.abc import Callable

from jubensha.agents.guard import GuardedAgent
from jubensha.engine import Agent, PersonAgent
from jubensha.registry import Registry

GUARD = "guard"
"""The option word that puts the speech guard on a seat (``naive:guard``)."""

Factory = Callable[[str], Agent]
"""Builds a fresh agent (one per seat) from the option string ("" when there is none)."""


class AgentSpecError(ValueError):
    """An unknown architecture or an option it rejects; the message says which and why."""


def _unknown(name: str, known: list[str]) -> AgentSpecError:
    return AgentSpecError(f"unknown architecture {name!r} (known: {', '.join(sorted(known))})")


ARCHITECTURES: Registry[Factory] = Registry({
    "naive": "jubensha.agents.naive:NaiveAgent.from_option",
    "detective": "jubensha.agents.detective:DetectiveAgent.from_option",
    "ledger": "jubensha.agents.detective:LedgerAgent.from_option",
    "player": "jubensha.agents.player_star:PlayerStarAgent.from_option",
    "mirage": "jubensha.agents.mirage:MirageAgent.from_option",
    "whodunit": "jubensha.agents.whodunit:WhodunitAgent.from_option",
    "extractive": "jubensha.agents.extractive:ExtractiveAgent.from_option",
    "solver": "jubensha.agents.solver:SolverAgent.from_option",
    "werewolf": "jubensha.agents.werewolf:WerewolfAgent.from_option",
    "ocot": "jubensha.agents.ocot:OCoTAgent.from_option",
    "thinkthrice": "jubensha.agents.thinkthrice.agent:ThinkThriceAgent.from_option",
    "human": "jubensha.agents.human:HumanAgent.from_option",
}, unknown=_unknown)


def register_architecture(name: str, factory: Factory, *, replace: bool = False) -> None:
    """Add an architecture; a name taken already is refused unless ``replace``."""
    ARCHITECTURES.put(name, factory, replace=replace)


def architectures() -> list[str]:
    return sorted(ARCHITECTURES)


def split_spec(spec: str) -> tuple[str, str]:
    """``"thinkthrice:mr+sr"`` → ``("thinkthrice", "mr+sr")``."""
    name, _, option = spec.strip().partition(":")
    return name.strip().lower(), option.strip()


def guarded(spec: str) -> tuple[bool, str]:
    """Whether ``spec`` asks for the speech guard, and the spec without it."""
    name, option = split_spec(spec)
    parts = [p.strip() for p in option.split("+") if p.strip()]
    kept = [p for p in parts if p.casefold() != GUARD]
    if len(kept) == len(parts):
        return False, spec.strip()
    return True, f"{name}:{'+'.join(kept)}" if kept else name


def make_agent(spec: str) -> Agent:
    """A new agent for ``spec``; AgentSpecError when the name or its option is wrong."""
    guard, spec = guarded(spec)
    name, option = split_spec(spec)
    factory = ARCHITECTURES.get(name)
    try:
        agent = factory(option)
    except (ValueError, TypeError) as exc:
        raise AgentSpecError(f"architecture {spec!r}: {exc}") from None
    if not guard:
        return agent
    if isinstance(agent, PersonAgent):
        raise AgentSpecError(f"architecture {spec!r}: the guard checks what a model says; "
                             "a person's seat has none")
    return GuardedAgent(agent)


def model_free(spec: str) -> bool:
    """Whether the architecture ``spec`` plays without a language model."""
    return not make_agent(spec).uses_model


def check_agent_spec(spec: str) -> str:
    """Validate ``spec`` by building one agent; returns it stripped."""
    make_agent(spec)
    return spec.strip()
