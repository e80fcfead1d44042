"""A victim killed offstage is voted on like the others: leaving it out would tell every
seat that nobody at the table killed it. Every ballot of such a script offers "nobody
here", every architecture (and the human seat) can give that answer, and it is scored
against the truth: right on the offstage victim, wrong on the others."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from engine_helpers import TINY, table_game

from jubensha.engine.decisions import Vote
from jubensha.engine.events import HostSpoke, VoteCast
from jubensha.engine.procedure import find_procedure
from jubensha.engine.voting import NOBODY
from jubensha.eval.registry import MetricContext
from jubensha.eval.vote_metrics import culprit_rank_metric, identification_metric
from jubensha.llm.base import Request
from jubensha.llm.fake import ScriptedModel
from jubensha.runlog.folder import read_run
from jubensha.runs.play import PlayConfig, plan_seats, play_game
from jubensha.scripts import Script, load_script

VICTIMS = ["Lord Vale", "Old Tom", "Miss Pike"]


@pytest.fixture
def three_victims(tmp_path: Path) -> Script:
    """The tiny manor with two more victims: Cara poisoned Miss Pike, and Old Tom drowned
    offstage (the truth says nobody at the table killed him)."""
    data = yaml.safe_load(TINY.read_text(encoding="utf-8"))
    data["id"] = "tiny-three"
    data["victims"] += [{"name": "Old Tom", "description": "The gamekeeper, found drowned."},
                        {"name": "Miss Pike", "description": "The governess, poisoned."}]
    cara = data["characters"][2]
    cara.update(side="murderer", killed=["Miss Pike"])
    data["truth"]["murderers"] = ["Ann", "Cara"]
    data["truth"]["kills"].append({"victim": "Miss Pike", "killers": ["Cara"]})
    data["truth"]["killed_offstage"] = ["Old Tom"]
    path = tmp_path / "three.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return load_script(path)


def test_the_host_calls_a_vote_on_every_victim_offering_nobody_on_each(
        three_victims: Script) -> None:
    game, agents = table_game(three_victims, "player")
    result = asyncio.run(game.run())
    assert [o.victim for o in result.outcomes] == VICTIMS
    for agent in agents.values():
        ballots = [d for d in agent.decisions if d.type == "vote"]
        assert [d.victim for d in ballots] == VICTIMS
        assert all(NOBODY in d.candidates for d in ballots)
    calls = [e.text for e in game.table.events if isinstance(e, HostSpoke) and "vote" in e.stage]
    assert sum(f'answer "{NOBODY}"' in text for text in calls) == len(VICTIMS)


def test_a_nobody_here_vote_is_right_on_the_offstage_victim_only(
        three_victims: Script) -> None:
    game, _ = table_game(three_victims, "player",
                         reply=lambda agent, d: Vote(target=NOBODY) if d.type == "vote" else None)
    result = asyncio.run(game.run())
    caught = {o.victim: o.caught for o in result.outcomes}
    assert caught == {"Lord Vale": False, "Old Tom": True, "Miss Pike": False}
    assert result.winner == "murderers"


def enums_with_nobody(schema: Any) -> list[list[str]]:
    if isinstance(schema, dict):
        found = [schema["enum"]] if NOBODY in schema.get("enum", []) else []
        return found + [e for v in schema.values() for e in enums_with_nobody(v)]
    if isinstance(schema, list):
        return [e for v in schema for e in enums_with_nobody(v)]
    return []


def choose_nobody(value: Any, choices: set[str]) -> Any:
    if isinstance(value, str) and value in choices:
        return NOBODY
    if isinstance(value, dict):
        return {k: choose_nobody(v, choices) for k, v in value.items()}
    if isinstance(value, list):
        return [choose_nobody(v, choices) for v in value]
    return value


async def answer_nobody(request: Request) -> dict | str | None:
    """A model that answers "nobody here" wherever a schema or the prompt offers it (a
    free-text vote answers in WhodunitBench's "I think the killer is: X" form)."""
    enums = enums_with_nobody(request.json_schema)
    if not enums:
        offered = any(NOBODY in message.text for message in request.messages)
        return f"I think the killer is: {NOBODY}" if offered else None
    reply = await ScriptedModel(seed=1).generate(request)
    return choose_nobody(json.loads(reply.text), {c for e in enums for c in e})


ARCHITECTURES = {"thinkthrice:mr+sr+sv1": "demo", "player": "player", "werewolf": "demo",
                 "ocot": "demo", "naive": "demo", "mirage": "mirage", "whodunit": "whodunit"}


@pytest.mark.parametrize("architecture", list(ARCHITECTURES))
def test_every_architecture_can_answer_nobody_here_and_it_is_scored(
        architecture: str, three_victims: Script, tmp_path: Path) -> None:
    model = ScriptedModel(seed=4, replies={"vote": answer_nobody, "vote.retry": answer_nobody})
    plans = plan_seats(three_victims, architecture, "scripted", ())
    asyncio.run(play_game(PlayConfig(script=three_victims,
                                     procedure=find_procedure(ARCHITECTURES[architecture]),
                                     plans=plans, seed=11), tmp_path / "run",
                          models={"scripted": model}))
    run = read_run(tmp_path / "run")
    ballots = [e for e in run.events if isinstance(e, VoteCast)]
    assert {e.victim for e in ballots} == set(VICTIMS)
    assert {e.target for e in ballots} == {NOBODY}
    context = MetricContext(script=three_victims, run=run)
    found = asyncio.run(identification_metric(context)).victims
    assert found == {"Lord Vale": (0, 4), "Old Tom": (4, 4), "Miss Pike": (0, 4)}
    ranks = asyncio.run(culprit_rank_metric(context)).ranks
    assert ranks["Old Tom"] == 1


def test_the_extractive_agent_answers_nobody_when_nothing_ties_a_seat_to_the_death(
        three_victims: Script, tmp_path: Path) -> None:
    plans = plan_seats(three_victims, "extractive", "scripted", ())
    asyncio.run(play_game(PlayConfig(script=three_victims, procedure=find_procedure("demo"),
                                     plans=plans, seed=11), tmp_path / "run",
                          models={"scripted": ScriptedModel()}))
    ballots = [e for e in read_run(tmp_path / "run").events if isinstance(e, VoteCast)]
    assert {e.victim for e in ballots} == set(VICTIMS)
    assert any(e.target == NOBODY for e in ballots)
