"""The examples of docs/architecture.md run as written: the agent plays a seat, the model
answers, the metric scores a run. They register names, so they run in a fresh interpreter
and leave this one's registries alone."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).parents[1] / "docs" / "architecture.md"
TINY = Path(__file__).parent / "engine" / "tiny_script.yaml"

CHECK = '''
import asyncio
from pathlib import Path
from jubensha.agents import make_agent
from jubensha.engine import CastVote, CharacterSheet, SeatContext, Speak, Speech, Spoke, Vote
from jubensha.engine.decisions import decision_kind
from jubensha.engine.registry import stage_kind
from jubensha.eval import get_metric, MetricContext
from jubensha.llm import Message, Request, ScriptedModel
from jubensha.runlog import RunLog
from jubensha.scripts.io import load_script


async def main() -> None:
    script = load_script({tiny!r})
    agent = make_agent("echo")
    await agent.start(SeatContext(sheet=CharacterSheet.for_seat(script, "Ann"),
                                  model=ScriptedModel()))
    speech = await agent.decide(Speak(kind="statement", prompt="Where were you?"))
    assert isinstance(speech, Speech) and speech.text
    vote = await agent.decide(CastVote(candidates=["Bob", "Cara"]))
    assert isinstance(vote, Vote) and vote.target in ("Bob", "Cara")

    reply = await Shout().generate(Request(messages=[Message(role="user", content="hi")]))
    assert reply.text == "HI"

    assert stage_kind("last_words").spec is LastWordsSpec
    assert decision_kind("wager").decision is Wager and decision_kind("wager").actions == (Stake,)

    run = RunLog(path=Path("."), meta=None, calls=[], result=None, events=[
        Spoke(speaker="Ann", kind="statement", text="a"),
        Spoke(speaker="Bob", kind="statement", text="b"),
        Spoke(speaker="Ann", kind="statement", text="c")])
    spec = get_metric("speeches")
    result = await spec.compute(MetricContext(script=script, run=run))
    assert result.per_seat == {{"Ann": 2, "Bob": 1}}
    assert result.tables()[0].rows == [["Ann", "2"], ["Bob", "1"]]
    print("examples ok")


asyncio.run(main())
'''


def examples() -> str:
    return "\n\n".join(re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"),
                                  re.DOTALL))


def test_the_page_has_an_example_of_each_contract() -> None:
    code = examples()
    for contract in ("class Echo(Agent)", "@register_stage(", "@metric(", "class Shout(Model)",
                     "register_decision("):
        assert contract in code


def test_the_examples_run_as_written(tmp_path: Path) -> None:
    program = tmp_path / "examples.py"
    program.write_text(examples() + CHECK.format(tiny=str(TINY)), encoding="utf-8")
    done = subprocess.run([sys.executable, str(program)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "examples ok" in done.stdout
