"""Helpers for the PLAYER* tests: seat an agent on a script with the scripted model and
read back the requests it sent, by purpose."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from jubensha.agents.player_star import PlayerStarAgent
from jubensha.agents.registry import make_agent
from jubensha.engine.agent import CharacterSheet, SeatContext
from jubensha.llm.base import Request
from jubensha.llm.fake import ScriptedModel
from jubensha.scripts import Script, bundled_scripts, load_script

TINY = Path(__file__).parents[2] / "engine" / "tiny_script.yaml"
"""Four seats (Ann the murderer, Bob, Cara, Dan), one victim: Lord Vale."""


def tiny() -> Script:
    return load_script(TINY)


def halvard() -> Script:
    """Six seats, two victims, two murderers (each killed one victim)."""
    return load_script(bundled_scripts()["halvard-observatory"])


async def seated(name: str, model: ScriptedModel, script: Script | None = None,
                 spec: str = "player") -> PlayerStarAgent:
    agent = make_agent(spec)
    assert isinstance(agent, PlayerStarAgent)
    sheet = CharacterSheet.for_seat(script or tiny(), name)
    await agent.start(SeatContext(sheet=sheet, model=model, seed=7))
    return agent


def purposes(model: ScriptedModel) -> Counter[str]:
    return Counter(request.purpose for request in model.requests)


def sent(model: ScriptedModel, purpose: str) -> list[Request]:
    return [request for request in model.requests if request.purpose == purpose]


def user_text(request: Request) -> str:
    return request.messages[-1].text


def own_text(request: Request) -> str:
    """The system message: the rules, the seat's role and what only it knows."""
    return request.messages[0].text


def about(request: Request, names: list[str]) -> str:
    """The suspect a sensor or question prompt is about (the heading of its script)."""
    found = [n for n in names if f"What your script says about {n}:" in own_text(request)]
    assert len(found) == 1, found
    return found[0]


def victim_of(request: Request, victims: list[str]) -> str:
    lines = user_text(request).splitlines()
    found = [v for v in victims if any(line.startswith(f"{v} has been murdered")
                                       for line in lines)]
    assert len(found) == 1, found
    return found[0]
