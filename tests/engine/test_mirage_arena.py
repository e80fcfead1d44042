"""Arena seating and run accounting: any seat plays its own architecture and model at one
table, the run records which seat played what, and the run's result counts the paper's
table 2 (environment tokens and requests, agent output tokens and requests, parsing
failures)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import pytest

from jubensha.engine.procedure import find_procedure
from jubensha.llm.fake import ScriptedModel
from jubensha.runlog.folder import RunResult, read_run
from jubensha.runs.play import PlayConfig, SeatPlan, play_game
from jubensha.scripts import load_script

TINY = Path(__file__).with_name("tiny_script.yaml")
ARENA = {"Ann": ("mirage", "openai:vision-model"), "Bob": ("whodunit", "openai:vision-model"),
         "Cara": ("naive", "local"), "Dan": ("thinkthrice", "local")}


def arena(out: Path, preset: str, models: dict[str, ScriptedModel]) -> RunResult:
    script = load_script(TINY)
    plans = {name: SeatPlan(name=name, architecture=arch, model=model)
             for name, (arch, model) in ARENA.items()}
    procedure = find_procedure(preset).with_options(rounds=1)
    return asyncio.run(play_game(PlayConfig(script=script, procedure=procedure, plans=plans, seed=2,
                                            script_source=str(TINY)), out, models=models))


@pytest.fixture(scope="module")
def models() -> dict[str, ScriptedModel]:
    return {"openai:vision-model": ScriptedModel(seed=1, name="fake-vision"),
            "local": ScriptedModel(seed=2, name="fake-local")}


@pytest.mark.parametrize("preset", ["mirage", "whodunit"])
def test_a_mixed_table_plays_and_the_run_records_who_played_what(
        tmp_path: Path, preset: str, models: dict[str, ScriptedModel]) -> None:
    result = arena(tmp_path / preset, preset, models)
    assert result.winner in ("civilians", "murderers")
    meta = json.loads((tmp_path / preset / "meta.json").read_text(encoding="utf-8"))
    assert meta["seats"] == {name: {"architecture": arch, "model": model, "guard": False}
                             for name, (arch, model) in ARENA.items()}
    run = read_run(tmp_path / preset)
    by_seat = {(call.seat, call.model) for call in run.calls}
    assert by_seat == {("Ann", "fake-vision"), ("Bob", "fake-vision"), ("Cara", "fake-local"),
                       ("Dan", "fake-local")}


def test_the_result_counts_environment_and_agent_work_as_the_paper_does(
        tmp_path: Path) -> None:
    garbage = ScriptedModel(seed=1, replies={"rate.trust": ["no json here"] * 4})
    models = {"openai:vision-model": garbage, "local": ScriptedModel(seed=2)}
    result = arena(tmp_path / "run", "mirage", models)
    run = read_run(tmp_path / "run")
    counts = result.usage.counts
    assert counts.env_requests == len(run.calls) == result.usage.calls
    assert counts.env_tokens == sum(c.usage.prompt_tokens for c in run.calls)
    agent_calls = [c for c in run.calls if not c.purpose.startswith("summarise.")]
    assert counts.user_requests == len(agent_calls) < len(run.calls)
    assert counts.user_tokens == sum(c.usage.completion_tokens for c in agent_calls)
    failed = [c for c in run.calls if c.parse_error]
    assert counts.parse_failures == len(failed) + sum(c.purpose.endswith(".retry")
                                                      for c in run.calls) >= 4
    assert Counter(c.purpose for c in failed)["rate.trust"] == 4
    saved = json.loads((tmp_path / "run" / "result.json").read_text(encoding="utf-8"))
    assert saved["usage"]["counts"] == counts.model_dump()
    assert saved["extra"]["mirage"]["statements"]
