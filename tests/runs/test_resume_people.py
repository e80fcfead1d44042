"""A terminal game with a person at the table stopped with Ctrl-C plays on with
``play --resume``, as the message says: the person's moves are kept as they are made
(``people.jsonl``), answered again from there while the model calls are answered from
the call log, and then the game goes on live at the terminal to its end."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from jubensha.engine.events import Spoke
from jubensha.runlog.folder import RunError, read_run
from jubensha.runlog.moves import Answer, MovesLog

ROOT = Path(__file__).parents[2]
FIRST_WORDS = "I keep the light, and I was on the rocks at ten."


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "jubensha.cli", *args]


ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "200"}


@pytest.mark.skipif(os.name != "posix", reason="SIGINT to a subprocess needs POSIX")
def test_ctrl_c_then_resume_plays_on_with_the_persons_moves(tmp_path: Path) -> None:
    out = tmp_path / "run"
    process = subprocess.Popen(
        command("play", "--seat", "Tom Hale=human", "--model", "scripted", "--embedder",
                "none", "--out", str(out)),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=ENV)
    shown: list[str] = []
    reader = threading.Thread(target=lambda: shown.extend(iter(
        lambda: process.stdout.read(1) if process.stdout else "", "")), daemon=True)
    reader.start()

    def wait_for_prompts(count: int) -> None:
        deadline = time.monotonic() + 60
        while "".join(shown).count("›") < count:
            assert time.monotonic() < deadline and process.poll() is None, "".join(shown)
            time.sleep(0.05)

    try:
        assert process.stdin is not None
        wait_for_prompts(1)
        process.stdin.write(FIRST_WORDS + "\n")
        process.stdin.flush()
        wait_for_prompts(2)  # asked the next decision: waiting for the person
        process.send_signal(signal.SIGINT)
        process.wait(timeout=15)
    finally:
        process.kill()
    reader.join(5)
    stopped = " ".join("".join(shown).split())
    assert process.returncode == 130
    assert f"jubensha play --resume {out}" in stopped
    moves = [json.loads(line) for line in (out / "people.jsonl").read_text().splitlines()]
    assert [move["seat"] for move in moves] == ["Tom Hale"]

    resumed = subprocess.run(command("play", "--resume", str(out)), input="1\n" * 60,
                             capture_output=True, text=True, env=ENV, timeout=300,
                             check=False)
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-2000:]
    assert "1 move(s) of the people at the table answered from their log" in " ".join(
        resumed.stdout.split())
    run = read_run(out)
    said = [e.text for e in run.events if isinstance(e, Spoke) and e.speaker == "Tom Hale"]
    assert run.finished and said.count(FIRST_WORDS) == 1 and len(said) > 1
    assert len((out / "people.jsonl").read_text().splitlines()) > 1  # every move, again
    assert (tmp_path / "run.partial-1" / "people.jsonl").is_file()  # the attempt, kept


def _moves(path: Path, *lines: bytes) -> MovesLog:
    path.write_bytes(b"".join(lines))
    return MovesLog(path)


def test_a_moves_file_is_read_as_every_log_of_a_run_folder(tmp_path: Path) -> None:
    """One reader (``runlog.folder.read_jsonl``): a last line cut off as it was written is
    skipped; any other bad line names the file and the line, and stops the resume."""
    one = Answer(seat="Ann", decision=1, left=True).model_dump_json().encode() + b"\n"
    two = Answer(seat="Bob", decision=1, left=True).model_dump_json().encode() + b"\n"
    assert MovesLog(tmp_path / "none.jsonl").read() == {}
    read = _moves(tmp_path / "torn.jsonl", one, two, two[:12]).read()
    assert {seat: len(answers) for seat, answers in read.items()} == {"Ann": 1, "Bob": 1}
    with pytest.raises(RunError, match=r"spoiled\.jsonl:2: not a valid record"):
        _moves(tmp_path / "spoiled.jsonl", one, b'{"seat": 3}\n', two).read()
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "torn.jsonl")
    with pytest.raises(RunError, match="a symbolic link"):
        MovesLog(tmp_path / "link.jsonl").read()
