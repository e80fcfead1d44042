"""Players: one module per architecture; an agent sees only what its seat may see.

Agents are made by name (``make_agent("thinkthrice:mr+sr")``); a new architecture is a
subclass of ``jubensha.engine.Agent`` with a factory from its option string, added with
``register_architecture`` and usually parsing its options with ``parse_options``. Those
names come from here; the architecture modules are internal.
"""

from jubensha.agents.options import parse_options
from jubensha.agents.registry import (
    AgentSpecError,
    architectures,
    make_agent,
    register_architecture,
)

__all__ = [
    "AgentSpecError",
    "architectures",
    "make_agent",
    "parse_options",
    "register_architecture",
]
