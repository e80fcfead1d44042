"""A game that could not really be played is a failure, never a result: it stops at once
when its model cannot be reached or a seat's calls keep failing (exit 3), and it is marked
``degraded`` (exit 4, a failed game in a batch) when nobody really played it
(tests/runs/test_no_result.py states that rule)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.engine.procedure import find_procedure
from jubensha.llm.base import ErrorKind, ModelError, Request, Response
from jubensha.llm.calls import NOT_A_CALL
from jubensha.llm.fake import ScriptedModel
from jubensha.llm.health import Health, ModelUnreachable
from jubensha.runlog.folder import read_run
from jubensha.runs.play import GameHealth, PlayConfig, plan_seats, play_game
from jubensha.scripts import load_script

TINY = Path(__file__).parents[1] / "engine" / "tiny_script.yaml"
runner = CliRunner()


class Failing(ScriptedModel):
    """Every call fails with ``error``."""

    def __init__(self, error: Exception):
        super().__init__()
        self.error = error

    async def generate(self, request: Request) -> Response:
        self.requests.append(request)
        raise self.error


class Mute(ScriptedModel):
    """Answers every call with nothing: no call fails, but no decision can use it."""

    async def generate(self, request: Request) -> Response:
        self.requests.append(request)
        return Response(text="", model=self.name)


def play(model, out: Path, **health) -> object:
    script = load_script(TINY)
    plans = plan_seats(script, "naive", "scripted")
    return asyncio.run(play_game(PlayConfig(script=script, procedure=find_procedure("demo"),
                                            plans=plans, health=GameHealth(**health)), out,
                                 models={"scripted": model}))


def test_a_dead_endpoint_stops_the_game_at_once_and_says_why(tmp_path):
    code = runner.invoke(app, ["play", str(TINY), "--model", "openai:gpt-4o-mini",
                               "--base-url", "http://127.0.0.1:9", "--retries", "0",
                               "--embedder", "none", "--out", str(tmp_path / "run")])
    assert code.exit_code == 3, code.output
    assert "cannot be reached" in code.output and "Winner" not in code.output
    run = read_run(tmp_path / "run")
    tried = [c for c in run.calls if c.model != NOT_A_CALL]  # a detective's plan is no call
    assert not run.finished and len(tried) == 1 and tried[0].error


def test_a_cassette_that_does_not_hold_the_game_stops_it(tmp_path):
    cassette = tmp_path / "game.jsonl"
    recorded = runner.invoke(app, ["play", str(TINY), "--model", "scripted", "--seed", "1",
                                   "--record", str(cassette), "--out", str(tmp_path / "a")])
    assert recorded.exit_code == 0, recorded.output
    other = runner.invoke(app, ["play", str(TINY), "--model", f"replay:{cassette}",
                                "--seed", "5", "--out", str(tmp_path / "b")])
    assert other.exit_code == 3 and "holds no reply" in other.output
    same = runner.invoke(app, ["play", str(TINY), "--model", f"replay:{cassette}",
                               "--seed", "1", "--out", str(tmp_path / "c")])
    assert same.exit_code == 0, same.output


def test_consecutive_failures_of_a_seat_stop_the_game(tmp_path):
    flaky = Failing(ModelError("500 from the server"))
    with pytest.raises(ModelUnreachable, match="3 model calls in a row failed"):
        play(flaky, tmp_path / "run", max_consecutive_failures=3)
    calls = read_run(tmp_path / "run").calls
    assert len(calls) >= 3 and all(call.error for call in calls)


def test_stopping_on_failures_can_be_switched_off(tmp_path):
    result = play(Failing(ModelError("500")), tmp_path / "run", max_consecutive_failures=0)
    assert result.degraded and result.fallbacks == result.decisions > 0


def test_a_game_of_defaults_is_degraded_in_its_result(tmp_path):
    result = play(Mute(), tmp_path / "run")
    assert result.degraded and result.fallbacks / result.decisions > 0.5
    saved = json.loads((tmp_path / "run" / "result.json").read_text(encoding="utf-8"))
    assert saved["degraded"] is True and saved["decisions"] == result.decisions


def test_a_played_game_is_not_degraded(tmp_path):
    result = play(ScriptedModel(), tmp_path / "run")
    assert not result.degraded and result.decisions > 0 and result.fallbacks == 0


def test_play_exits_4_on_a_degraded_game(tmp_path, monkeypatch):
    import jubensha.runs.play as playing

    monkeypatch.setattr(playing, "parse_model_spec", lambda spec, options: Mute())
    code = runner.invoke(app, ["play", str(TINY), "--model", "scripted",
                               "--out", str(tmp_path / "run")])
    assert code.exit_code == 4 and "failed: " in code.output and "no result" in code.output
    assert "Winner" not in code.output


def test_a_fatal_error_after_the_model_answered_does_not_stop_at_once():
    health = Health(max_consecutive=3)
    health.succeeded("Ann")
    health.failed("Ann", "m", ModelError("gone", kind=ErrorKind.DEAD))
    with pytest.raises(ModelUnreachable):
        health.failed("Ann", "m", ModelError("gone", kind=ErrorKind.DEAD))
        health.failed("Ann", "m", ModelError("gone", kind=ErrorKind.DEAD))


def test_a_client_bug_is_a_recorded_failed_call(tmp_path):
    result = play(Failing(ValueError("bad JSON body")), tmp_path / "run",
                  max_consecutive_failures=0)
    calls = read_run(tmp_path / "run").calls
    assert calls and all("ValueError: bad JSON body" in (c.error or "") for c in calls)
    assert result.degraded


def test_a_batch_counts_degraded_and_unreachable_games_as_failed(tmp_path, monkeypatch):
    import jubensha.runs.attempt as batch_module
    from jubensha.runs.attempt import read_error
    from jubensha.runs.batch import Batch
    from jubensha.runs.spec import load_spec

    models = {"scripted": Mute(), "openai:dead": Failing(ModelError("refused", kind=ErrorKind.DEAD))}
    monkeypatch.setattr(batch_module, "build_models",
                        lambda seats, options: {p.model: models[p.model] for p in seats.values()})
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"scripts: [{TINY}]\narchitectures: [naive]\n"
                    "models: [scripted, 'openai:dead']\nembedder: none\n", encoding="utf-8")
    batch = Batch.open(load_spec(spec), tmp_path / "batch")
    try:
        summary = asyncio.run(batch.run())
        rows = batch.index.rows()
    finally:
        batch.close()
    assert summary.failed == 2 and summary.finished == 0
    errors = {row.model: row.error or "" for row in rows}
    assert errors["scripted"].startswith("degraded:")
    assert errors["openai:dead"].startswith("unreachable:")
    kinds = {read_error(tmp_path / "batch" / row.name).kind for row in rows}
    assert kinds == {"degraded", "unreachable"}


def test_a_log_cut_inside_a_chinese_character_reads_as_a_torn_line(tmp_path):
    from jubensha.llm.calls import read_calls

    runner.invoke(app, ["play", "tingsong-tea-estate", "--model", "scripted",
                        "--out", str(tmp_path / "run")])
    for name in ("events.jsonl", "calls.jsonl"):
        path = tmp_path / "run" / name
        data = path.read_bytes()
        cut = data.rindex("。".encode()) + 1  # inside the three bytes of a Chinese full stop
        path.write_bytes(data[:cut])
    (tmp_path / "run" / "result.json").unlink()
    run = read_run(tmp_path / "run")
    assert set(run.truncated) == {"events.jsonl", "calls.jsonl"} and run.events
    assert read_calls(tmp_path / "run" / "calls.jsonl")
    shown = runner.invoke(app, ["replay", str(tmp_path / "run")])
    assert shown.exit_code == 0 and "这局没有下完" in shown.output  # in the game's language
