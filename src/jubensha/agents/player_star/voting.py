"""Internal.

Votes, accusations and trust ratings of a PLAYER* seat.

The paper ends with each player's vote for the murderer of each victim but prints no vote
prompt. Here the seat votes from its state: its current suspects of that victim with the
latest sensor summaries, and the script and dialogue retrieved for the victim. A murderer
votes for someone else to stay hidden. Trust ratings (MIRAGE procedures) read the
statement against the retrieved script and dialogue.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from jubensha.agents.player_star.core import PlayerCore
from jubensha.agents.player_star.questioning import summary
from jubensha.agents.toolkit import RatingReply, target_schema
from jubensha.engine import RateStatement, Rating


async def choose(core: PlayerCore, purpose: Literal["vote", "accuse"],
                 candidates: Sequence[str], victim: str | None = None,
                 accused: Sequence[str] = ()) -> tuple[str, str]:
    """The candidate the seat names as the murderer of ``victim`` (of every victim when
    None), and its reason."""
    victims = [victim] if victim in core.victims else core.victims
    cases = []
    for case in victims:
        notes = []
        for suspect in core.state.suspects(case):
            readings = core.state.readings(case, suspect, core.config.sensors)
            notes.append({"character": suspect,
                          "summary": await summary(core, case, suspect, readings)})
        cases.append({"victim": case, "notes": notes, "murderer": core.killed(case)})
    query = " ".join(filter(None, [*victims, *candidates]))
    config = core.config
    user = core.prompt(purpose, cases=cases, candidates=list(candidates),
                       accused=list(accused),
                       dialogue=await core.memory.dialogue(query, config.dialogue_tokens),
                       murderer=any(case["murderer"] for case in cases))
    script = await core.memory.script(query, config.script_tokens)
    reply = await core.structured(purpose, user, target_schema(candidates, purpose),
                                  own=core.own(script, "case"))
    return reply.target, reply.reason.strip()


async def rate(core: PlayerCore, decision: RateStatement) -> Rating:
    statement = decision.statement
    config = core.config
    user = core.prompt("rate", speaker=statement.speaker, statement=statement.text,
                       dialogue=await core.memory.dialogue(statement.text,
                                                           config.dialogue_tokens),
                       murderer=core.murderer)
    reply = await core.structured("rate", user, RatingReply, own=core.own(
        await core.memory.script(statement.text, config.script_tokens), "this"))
    return Rating(trust=reply.trust, doubt=reply.doubt)
