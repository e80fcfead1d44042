"""A game recorded with the fake plays back from its cassette into identical events."""

from __future__ import annotations

import asyncio
from pathlib import Path

from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.engine.procedure import find_procedure
from jubensha.runlog.folder import read_run
from jubensha.runs.play import PlayConfig, plan_seats, play_game
from jubensha.scripts import bundled_scripts, load_script


def stable(run_dir: Path) -> list[dict]:
    return [e.model_dump(mode="json", exclude={"time"}) for e in read_run(run_dir).events]


def test_a_replayed_game_has_identical_events(tmp_path: Path) -> None:
    script = load_script(bundled_scripts()["halvard-observatory"])
    cassette = tmp_path / "cassette.jsonl"

    def play(model: str, out: Path, record: Path | None = None) -> None:
        plans = plan_seats(script, "naive", model)
        asyncio.run(play_game(PlayConfig(script=script, procedure=find_procedure("player"),
                                         plans=plans, seed=3, record=record), out))

    play("scripted", tmp_path / "recorded", record=cassette)
    play(f"replay:{cassette}", tmp_path / "replayed")
    assert stable(tmp_path / "replayed") == stable(tmp_path / "recorded")
    calls = read_run(tmp_path / "replayed").calls
    assert calls and {c.origin for c in calls} == {"replay"}
    assert [c.raw for c in calls] == [c.raw for c in read_run(tmp_path / "recorded").calls]


def test_record_and_replay_from_the_command_line(tmp_path: Path) -> None:
    tiny = str(Path(__file__).parents[1] / "engine" / "tiny_script.yaml")
    cassette = tmp_path / "c.jsonl"
    runner = CliRunner()
    first = runner.invoke(app, ["play", tiny, "--model", "scripted", "--record", str(cassette),
                                "--out", str(tmp_path / "a")])
    second = runner.invoke(app, ["play", tiny, "--model", f"replay:{cassette}",
                                 "--out", str(tmp_path / "b")])
    assert first.exit_code == second.exit_code == 0, second.output
    assert stable(tmp_path / "a") == stable(tmp_path / "b")
    missing = runner.invoke(app, ["play", tiny, "--model", f"replay:{tmp_path / 'none.jsonl'}"])
    assert missing.exit_code == 2 and "Traceback" not in missing.output
