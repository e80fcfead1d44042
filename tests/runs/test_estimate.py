"""Before a game that takes real time per call, play says how many calls it will make."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.engine.procedure import find_procedure
from jubensha.llm.calls import NOT_A_CALL, read_calls
from jubensha.runs import estimate
from jubensha.runs.estimate import batch_calls, count_game_calls, worth_estimating
from jubensha.runs.play import PlayConfig, plan_seats
from jubensha.runs.spec import load_spec
from jubensha.runs.spec_expand import expand
from jubensha.scripts import load_script

TINY = str(Path(__file__).parents[1] / "engine" / "tiny_script.yaml")


def model_calls(run: Path) -> int:
    return sum(r.model != NOT_A_CALL and r.origin != "cache"
               for r in read_calls(run / "calls.jsonl"))


@pytest.mark.parametrize(("procedure", "architecture", "spread"),
                         [("demo", "naive", 0.0), ("demo", "detective", 0.2),
                          ("player", "player", 0.05),
                          ("thinkthrice", "thinkthrice", 0.2)])
def test_the_count_is_about_the_calls_the_game_makes(tmp_path: Path, procedure: str,
                                                     architecture: str, spread: float) -> None:
    """Counted with the fake's other replies (its seed 3, the game's fake seed 0): naive's
    calls are fixed by the procedure; the detective's readings follow what was said and
    whom it questions (its plan and ledger notes are no calls, nor a reading answered from
    another seat's identical one); PLAYER*'s suspects and ThinkThrice's refinements and
    verification retries follow the replies."""
    script = load_script(TINY)
    plans = plan_seats(script, architecture, "openai:any")
    counted = asyncio.run(count_game_calls(PlayConfig(script=script,
                                                      procedure=find_procedure(procedure),
                                                      plans=plans, seed=3)))
    result = CliRunner().invoke(app, ["play", TINY, "-p", procedure, "-a", architecture,
                                      "--model", "scripted", "--seed", "3",
                                      "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    played = model_calls(tmp_path / "run")
    assert abs(counted - played) <= spread * played


def test_only_models_that_take_time_are_estimated() -> None:
    script = load_script(TINY)
    assert not worth_estimating(plan_seats(script, "naive", "scripted"))
    assert not worth_estimating(plan_seats(script, "naive", "replay:calls.jsonl"))
    assert worth_estimating(plan_seats(script, "naive", "local"))


def test_play_says_the_count_before_the_game(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(estimate, "takes_time", lambda model: True)  # the fake, as if slow
    result = CliRunner().invoke(app, ["play", TINY, "-a", "naive", "--model", "scripted",
                                      "--seed", "3", "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert f"about {model_calls(tmp_path / 'run')} model calls" in result.output
    assert json.loads((tmp_path / "run" / "result.json").read_text())["seed"] == 3
    assert "the bar shows" not in result.output  # no bar is drawn where output is no terminal


def batch_spec(tmp_path: Path) -> Path:
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"scripts: [{TINY}, lighthouse-keeper]\narchitectures: [naive]\n"
                    "models: scripted\nseeds: [0, 1, 2]\nembedder: none\n", encoding="utf-8")
    return spec


def test_a_batch_counts_its_calls_before_it_plays(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import jubensha.runs.batch_commands as commands

    monkeypatch.setattr(commands, "worth_estimating", lambda plans: True)
    games = expand(load_spec(batch_spec(tmp_path)))
    counted = asyncio.run(batch_calls(games))
    result = CliRunner().invoke(app, ["runs", "batch", str(batch_spec(tmp_path)),
                                      "--out", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    played = sum(len(p.read_text(encoding="utf-8").splitlines())
                 for p in (tmp_path / "b").glob("*/calls.jsonl"))
    assert counted == played
    assert f"6 game(s) to play: about {played} model calls" in result.output
    assert "the bar shows" not in result.output


def test_a_batch_without_a_terminal_says_every_minute_how_far_it_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import jubensha.runs.batch_commands as commands

    monkeypatch.setattr(commands, "HEARTBEAT_S", 0.01)
    real = commands.Batch.run

    async def slow(self: Any, **kw: Any) -> Any:
        await asyncio.sleep(0.2)  # long enough for a few beats before the first game ends
        return await real(self, **kw)

    monkeypatch.setattr(commands.Batch, "run", slow)
    result = CliRunner().invoke(app, ["runs", "batch", str(batch_spec(tmp_path)),
                                      "--out", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    beats = [line for line in result.output.splitlines() if "games done" in line]
    assert beats and "0/6 games done (0 failed, 0 playing) · 0 model calls · ETA unknown" in beats[0]
