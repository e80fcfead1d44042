"""Internal.

Action-space refinement with a pruner (section 2.3): after a round, read the refinement
sensors about every other seat (``refine_targets=others``, the paper's f_approximate over
all agents) or every current suspect, for every victim, and let the model keep the most
suspicious subset.

The paper puts no hard limit on refinement: the list may shrink, shift to someone
overlooked, or grow back. With ``regrow`` (default) the reply may name any other seat, and
the prompt lists the seats dropped earlier; without it, only current suspects.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from jubensha.agents.player_star.core import PlayerCore
from jubensha.agents.player_star.questioning import sense, summary
from jubensha.llm import StructuredOutputError


@lru_cache(maxsize=256)
def suspects_schema(options: tuple[str, ...]) -> type[BaseModel]:
    fields: dict[str, Any] = {
        "suspicion": (list[Literal[tuple(options)]], Field(min_length=1))}  # type: ignore[misc]
    return create_model("Suspects", **fields)


async def refine(core: PlayerCore) -> None:
    """Prune every victim's suspect list; a reply that never validates keeps the list."""
    for victim in core.victims:
        suspects = core.state.suspects(victim)
        read = core.others if core.config.refine_targets == "others" else suspects
        notes = []
        for seat in read:
            readings = await sense(core, victim, seat, "refinement")
            notes.append({"character": seat,
                          "summary": await summary(core, victim, seat, readings)})
        options = core.others if core.config.regrow else suspects
        user = core.prompt("pruner", victim=victim, suspects=suspects, notes=notes,
                           dropped=[seat for seat in options if seat not in suspects],
                           murderer=core.killed(victim))
        try:
            reply = await core.structured("pruner", user, suspects_schema(tuple(options)))
        except StructuredOutputError:
            core.state.update(victim, suspects)
            continue
        core.state.update(victim, reply.suspicion)
