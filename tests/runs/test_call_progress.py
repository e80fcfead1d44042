"""A progress bar learns of model calls through the callback it is handed: a game, a batch
and an evaluation tell it of each of theirs, and nothing else does."""

from __future__ import annotations

import asyncio
from pathlib import Path

from jubensha.engine.procedure import find_procedure
from jubensha.eval.judge import open_session
from jubensha.llm.base import GenerateConfig
from jubensha.llm.calls import NOT_A_CALL, CallLog, CallRecord
from jubensha.llm.fake import ScriptedModel
from jubensha.runlog.folder import read_run
from jubensha.runs.batch import Batch
from jubensha.runs.play import PlayConfig, plan_seats, play_game
from jubensha.runs.spec import load_spec
from jubensha.scripts import load_script

TINY = Path(__file__).parents[1] / "engine" / "tiny_script.yaml"


def test_a_game_tells_its_callback_of_every_model_call(tmp_path: Path) -> None:
    script = load_script(TINY)
    told: list[CallRecord] = []
    asyncio.run(play_game(PlayConfig(script=script, procedure=find_procedure("demo"),
                                     plans=plan_seats(script, "naive", "scripted")),
                          tmp_path / "game", models={"scripted": ScriptedModel()},
                          on_call=told.append))
    logged = [r for r in read_run(tmp_path / "game").calls if r.model != NOT_A_CALL]
    assert logged and [r.index for r in told] == [r.index for r in logged]


def test_a_log_without_a_callback_tells_nobody(tmp_path: Path) -> None:
    told: list[CallRecord] = []
    with_callback, without = CallLog(on_call=told.append), CallLog()
    record = CallRecord(model="m", messages=[], config=GenerateConfig())
    without.append(record.model_copy())
    with_callback.append(record.model_copy())
    with_callback.append(record.model_copy(update={"model": NOT_A_CALL}))  # no model call
    assert len(told) == 1


def test_a_batch_tells_its_callback_of_its_games_calls(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"scripts: [{TINY}]\narchitectures: [naive]\nmodels: scripted\n"
                    "seeds: [0, 1]\nembedder: none\n", encoding="utf-8")
    batch = Batch.open(load_spec(spec), tmp_path / "batch")
    told: list[CallRecord] = []
    try:
        summary = asyncio.run(batch.run(on_call=told.append))
    finally:
        batch.close()
    assert summary.finished == 2 and len(told) == summary.spent.calls > 0


def test_an_evaluation_session_tells_its_callback(tmp_path: Path) -> None:
    told: list[CallRecord] = []
    session = open_session(tmp_path, told.append)
    try:
        session.calls.append(CallRecord(model="judge", messages=[], config=GenerateConfig()))
    finally:
        session.close()
    assert [r.model for r in told] == ["judge"]
