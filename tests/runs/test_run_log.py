"""The run folder is the contract: what each file holds, that it is written as the game goes,
and that finished and partial runs read back and render the same transcript."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from jubensha.engine.events import Event
from jubensha.engine.procedure import find_procedure
from jubensha.llm.fake import ScriptedModel
from jubensha.runlog.folder import RunError, RunResult, read_run
from jubensha.runs.play import PlayConfig, plan_seats, play_game, replay_transcript
from jubensha.scripts import load_script

TINY = Path(__file__).parents[1] / "engine" / "tiny_script.yaml"


def play(out: Path, sinks: list = ()) -> RunResult:
    script = load_script(TINY)
    plans = plan_seats(script, "naive", "scripted")
    return asyncio.run(play_game(PlayConfig(script=script, procedure=find_procedure("demo"),
                                            plans=plans, seed=9, script_source=str(TINY)), out,
                                 models={"scripted": ScriptedModel()}, sinks=sinks))


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "game"
    play(out)
    return out


def test_a_finished_run_has_every_file(finished: Path) -> None:
    names = sorted(p.name for p in finished.iterdir())
    assert names == ["calls.jsonl", "events.jsonl", "meta.json", "result.json",
                     "script.played.yaml", "transcript.md"]


def test_meta_says_what_was_played(finished: Path) -> None:
    meta = json.loads((finished / "meta.json").read_text(encoding="utf-8"))
    assert meta["script_id"] == "tiny-manor" and meta["seed"] == 9
    assert meta["procedure"]["name"] == "demo"
    assert meta["seats"]["Ann"] == {"architecture": "naive", "model": "scripted", "guard": False}
    assert sorted(meta["order"]) == ["Ann", "Bob", "Cara", "Dan"]
    assert {"python", "jubensha"} <= set(meta["versions"]) and meta["started"]


def test_calls_record_purpose_seat_prompt_reply_and_parsed_object(finished: Path) -> None:
    run = read_run(finished)
    purposes = {call.purpose for call in run.calls}
    assert purposes == {"introduction", "ask", "answer", "statement", "vote"}
    vote = next(call for call in run.calls if call.purpose == "vote")
    assert vote.seat and vote.messages and vote.raw
    assert vote.parsed["target"] in ("Ann", "Bob", "Cara", "Dan")
    assert vote.usage.prompt_tokens > 0
    assert [call.index for call in run.calls] == list(range(len(run.calls)))


def test_result_sums_usage_per_seat_and_purpose(finished: Path) -> None:
    run = read_run(finished)
    assert run.finished and run.result is not None
    usage = run.result.usage
    assert usage.calls == len(run.calls)
    assert usage.total.prompt_tokens == sum(c.usage.prompt_tokens for c in run.calls)
    assert usage.seats["Ann"].completion_tokens == sum(
        c.usage.completion_tokens for c in run.calls if c.seat == "Ann")
    assert set(usage.purposes) == {"introduction", "ask", "answer", "statement", "vote"}
    assert run.result.events == len(run.events) and run.result.failures == 0
    assert run.result.votes[0].ballots.keys() == {"Ann", "Bob", "Cara", "Dan"}


def test_events_are_on_disk_as_soon_as_they_happen(tmp_path: Path) -> None:
    out = tmp_path / "game"
    seen_on_disk: list[int] = []

    def count(event: Event) -> None:
        lines = (out / "events.jsonl").read_text(encoding="utf-8").splitlines()
        seen_on_disk.append(len(lines) - 1 - event.index)

    play(out, sinks=[count])
    assert seen_on_disk and set(seen_on_disk) == {0}


def test_the_transcript_renders_again_identically(finished: Path) -> None:
    assert replay_transcript(finished) == (finished / "transcript.md").read_text(
        encoding="utf-8")
    text = (finished / "transcript.md").read_text(encoding="utf-8")
    assert text.startswith("# The Tiny Manor") and "## Self-introductions" in text


def test_a_partial_run_reads_back_and_replays(finished: Path, tmp_path: Path) -> None:
    partial = tmp_path / "partial"
    shutil.copytree(finished, partial)
    (partial / "result.json").unlink()
    (partial / "transcript.md").unlink()
    events = (partial / "events.jsonl").read_text(encoding="utf-8")
    lines = events.splitlines(keepends=True)
    (partial / "events.jsonl").write_text("".join(lines[:20]) + lines[20][:25],
                                          encoding="utf-8")
    run = read_run(partial)
    assert not run.finished and run.truncated == ["events.jsonl"]
    assert [e.index for e in run.events] == list(range(20))
    transcript = replay_transcript(partial)
    assert transcript.endswith("_The run stopped here (unfinished)._\n")


def test_a_broken_line_inside_a_log_names_the_file_and_line(finished: Path,
                                                            tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(finished, broken)
    lines = (broken / "events.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = "{not json\n"
    (broken / "events.jsonl").write_text("".join(lines), encoding="utf-8")
    with pytest.raises(RunError, match=r"events.jsonl:3: not a valid record"):
        read_run(broken)


def test_a_folder_that_is_no_run_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="not a run folder"):
        read_run(tmp_path)
    with pytest.raises(RunError, match="no such run folder"):
        read_run(tmp_path / "missing")
