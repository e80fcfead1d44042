"""Whole games: ``jubensha play --agents thinkthrice`` on every bundled mystery, and the
decisions of other procedures (accusations, ratings, open turns)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import purposes, seat, spoke
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.engine.decisions import Accusation, Accuse, Questions, RateStatement, Rating, TakeTurn
from jubensha.llm.fake import ScriptedModel
from jubensha.runlog.folder import read_run
from jubensha.scripts import bundled_scripts, find_script

MODULE_CALLS = {"answer", "sr.decompose", "sr.relevance", "sr.contains", "sr.rewrite",
                "sv.decompose", "sv.verify", "ask", "choose_target", "vote"}


@pytest.mark.parametrize(("script_id", "lang"), [
    *((script_id, None) for script_id in bundled_scripts()),
    ("lighthouse-keeper", "zh"),
])
def test_play_completes_on_every_bundled_mystery(script_id: str, lang: str | None,
                                                 tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["play", script_id, "--procedure", "thinkthrice", "--rounds", "1",
            "--agents", "thinkthrice", "--model", "scripted", "--out", str(out)]
    result = CliRunner().invoke(app, [*args, *(["--lang", lang] if lang else [])])
    assert result.exit_code == 0, result.output
    run = read_run(out)
    assert run.finished and run.result is not None and run.result.failures == 0
    assert {call.purpose for call in run.calls} >= MODULE_CALLS
    language = lang or find_script(script_id).language
    answers = [call for call in run.calls if call.purpose == "answer"]
    assert all(("#回答#" if language == "zh" else "#Answer#") in call.messages[-1].text
               for call in answers)


async def test_other_procedures_decisions_are_answered() -> None:
    model = ScriptedModel()
    agent = await seat("Tom Hale", model, "mr")
    players = ["Agnes Pike", "Samuel Reed", "Nora Vance"]
    accusation = await agent.decide(Accuse(candidates=players))
    assert isinstance(accusation, Accusation) and accusation.target in players
    rating = await agent.decide(RateStatement(statement=spoke(4, "Nora Vance", "I slept.")))
    assert isinstance(rating, Rating)
    turn = await agent.decide(TakeTurn(candidates=players, locations=["the kitchen"]))
    assert isinstance(turn, Questions) and turn.target in players
    assert purposes(model) == {"accuse": 1, "rate": 1, "choose_target": 1, "ask": 1}
