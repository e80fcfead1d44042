"""meta.json carries the run folder's format version: folders written before versions were
recorded still read, and a folder of a newer format is refused in one line, unparsed."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.engine.procedure import find_procedure
from jubensha.llm.fake import ScriptedModel
from jubensha.runlog.folder import RUN_FORMAT, RunError, read_run
from jubensha.runs.play import PlayConfig, plan_seats, play_game, replay_transcript
from jubensha.scripts import load_script

TINY = Path(__file__).parents[1] / "engine" / "tiny_script.yaml"


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "game"
    script = load_script(TINY)
    asyncio.run(play_game(PlayConfig(script=script, procedure=find_procedure("demo"),
                                     plans=plan_seats(script, "naive", "scripted"), seed=3), out,
                          models={"scripted": ScriptedModel()}))
    return out


def _with_meta(source: Path, target: Path, **changes: object) -> Path:
    shutil.copytree(source, target)
    meta = json.loads((target / "meta.json").read_text(encoding="utf-8"))
    meta.update(changes)
    meta = {k: v for k, v in meta.items() if v is not None}
    (target / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return target


def test_a_new_run_folder_records_its_format(finished: Path) -> None:
    meta = json.loads((finished / "meta.json").read_text(encoding="utf-8"))
    assert meta["format_version"] == RUN_FORMAT >= 1


def test_a_folder_written_before_versions_reads_and_replays_the_same(finished: Path,
                                                                      tmp_path: Path) -> None:
    old = _with_meta(finished, tmp_path / "old", format_version=None)
    assert "format_version" not in (old / "meta.json").read_text(encoding="utf-8")
    run, now = read_run(old), read_run(finished)
    assert run.meta is not None and run.meta.format_version == 0
    assert (run.events, run.calls, run.result) == (now.events, now.calls, now.result)
    assert replay_transcript(old) == replay_transcript(finished)


def test_a_folder_of_a_newer_format_is_refused_before_its_logs_are_parsed(
        finished: Path, tmp_path: Path) -> None:
    newer = _with_meta(finished, tmp_path / "newer", format_version=RUN_FORMAT + 1,
                       seats="a shape this version does not know")
    with (newer / "events.jsonl").open("a", encoding="utf-8") as log:
        log.write('{"type": "an_event_from_the_future"}\n')
    with pytest.raises(RunError) as caught:
        read_run(newer)
    message = str(caught.value)
    assert message.startswith(f"{newer / 'meta.json'}: run folder format {RUN_FORMAT + 1} "
                              "is newer than this jubensha reads")
    assert "\n" not in message


def test_the_replay_command_says_so_in_one_line(finished: Path, tmp_path: Path) -> None:
    newer = _with_meta(finished, tmp_path / "newer", format_version=RUN_FORMAT + 1)
    result = CliRunner().invoke(app, ["replay", str(newer)])
    assert result.exit_code != 0
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and f"format {RUN_FORMAT + 1} is newer" in lines[0], result.output
