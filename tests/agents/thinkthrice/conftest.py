"""Helpers for the ThinkThrice tests: seating an agent on a bundled mystery with the
scripted fake, scripted judgements, and counting calls by purpose."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from jubensha.agents.thinkthrice import ThinkThriceAgent, ThinkThriceConfig
from jubensha.engine.agent import CharacterSheet, SeatContext
from jubensha.engine.events import Spoke
from jubensha.llm.base import Request
from jubensha.llm.fake import ScriptedModel
from jubensha.scripts import Character, find_script

LIGHTHOUSE = "lighthouse-keeper"
TEA = "tingsong-tea-estate"


async def seat(name: str, model: ScriptedModel, config: ThinkThriceConfig | str = "",
               script_id: str = LIGHTHOUSE, character: Character | None = None,
               **context: Any) -> ThinkThriceAgent:
    """A started agent for ``name``; ``character`` replaces the sheet's own character."""
    agent = (ThinkThriceAgent(config) if isinstance(config, ThinkThriceConfig)
             else ThinkThriceAgent.from_option(config))
    sheet = CharacterSheet.for_seat(find_script(script_id), name)
    if character is not None:
        sheet = sheet.model_copy(update={"me": character})
    await agent.start(SeatContext(sheet=sheet, model=model, seed=7, **context))
    return agent


def items(request: Request) -> list[str]:
    """The texts of a flags schema's items (facts or claims), in order."""
    assert request.json_schema is not None
    properties = request.json_schema["properties"]
    return [properties[f"item_{i}"]["description"] for i in range(len(properties))]


def judge(test: Callable[[str], bool]) -> Callable[[Request], dict[str, bool]]:
    """A scripted judgement: item i is ``test(item text)``."""
    return lambda request: {f"item_{i}": test(text) for i, text in enumerate(items(request))}


def always(value: bool) -> Callable[[Request], dict[str, bool]]:
    return judge(lambda _text: value)


def purposes(model: ScriptedModel) -> Counter[str]:
    return Counter(request.purpose for request in model.requests)


def user_prompt(model: ScriptedModel, purpose: str, index: int = -1) -> str:
    return [r for r in model.requests if r.purpose == purpose][index].messages[-1].text


def spoke(index: int, speaker: str, text: str, kind: str = "statement",
          to: str | None = None) -> Spoke:
    return Spoke(index=index, speaker=speaker, kind=kind, text=text, to=to)  # type: ignore[arg-type]
