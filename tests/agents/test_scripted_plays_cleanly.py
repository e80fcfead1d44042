"""The scripted fake (``--model scripted``) answers every decision of every preset validly,
for every architecture: no fallback, no failure, no reply its agent could not parse. A fake
that fails a format (WhodunitBench's "Modus operandi: ... Motive: ...") would make every
test and dry run of that procedure measure the fake's failures instead of the game."""

from __future__ import annotations

import asyncio

import pytest

from jubensha.agents.human import is_human
from jubensha.agents.registry import architectures, make_agent
from jubensha.engine.events import Failure
from jubensha.engine.game import Game, Seat
from jubensha.engine.procedure import find_procedure, presets
from jubensha.engine.stages_whodunit import parse_reasoning
from jubensha.llm.base import Message, Request
from jubensha.llm.calls import CallLog
from jubensha.llm.fake import ScriptedModel
from jubensha.scripts import bundled_scripts, load_script

MACHINES = [name for name in architectures() if not is_human(name)
            and type(make_agent(name)).__module__.startswith("jubensha.")]
"""The package's own architectures (not those other tests register)."""


def failures(script_id: str, architecture: str, preset: str) -> tuple[list[str], int]:
    """What failed in one game (each Failure event, and fallbacks the table counted) and
    how many model replies the agents could not parse."""
    script = load_script(bundled_scripts()[script_id])
    log = CallLog()
    model = ScriptedModel(seed=1)
    seats = {n: Seat(make_agent(architecture), model=log.seat(model, n)) for n in script.names}
    game = Game(script, find_procedure(preset).with_options(rounds=1), seats, seed=3)
    result = asyncio.run(game.run())
    failed = [f"{e.seat} {e.purpose}: {e.error}" for e in game.table.events
              if isinstance(e, Failure)]
    failed += [f"{result.fallbacks} fallbacks"] if result.fallbacks else []
    return failed, sum(1 for record in log.sink.records if record.parse_error)


@pytest.mark.parametrize("preset", presets())
@pytest.mark.parametrize("architecture", MACHINES)
def test_every_architecture_plays_every_preset_without_a_failure(architecture: str,
                                                                  preset: str) -> None:
    failed, unparsed = failures("lighthouse-keeper", architecture, preset)
    assert failed == [] and unparsed == 0


@pytest.mark.parametrize("architecture", MACHINES)
def test_chinese_reasoning_follows_the_chinese_format(architecture: str) -> None:
    failed, unparsed = failures("tingsong-tea-estate", architecture, "whodunit")
    assert failed == [] and unparsed == 0


@pytest.mark.parametrize(("prompt", "labels"), [
    ("Say how, in exactly this format:\nModus operandi: ...\nMotive: ...", 2),
    (('- The host says to Ann: "Ann, in exactly this format:\nModus operandi: ...\n'
      'Motive: ..."\nWhat does Ann say?'), 2),
    ("请严格按以下格式：\n作案手法：……\n作案动机：……", 2),
    ("Answer in this form:\n#Answer#: what Ann says", 0),
])
def test_a_stated_format_is_filled_line_by_line(prompt: str, labels: int) -> None:
    reply = asyncio.run(ScriptedModel().generate(Request(messages=[
        Message(role="user", content=f"The lamp went out at ten. Tom was in the yard.\n{prompt}")])))
    if labels:
        parsed = parse_reasoning(reply.text)
        assert parsed is not None and all(parsed.values())
        assert len(reply.text.splitlines()) == labels
    else:
        assert parse_reasoning(reply.text) is None
