"""`jubensha play` and `jubensha replay` from the command line, and the seat syntax."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.runs.play import PlayError, parse_seat, plan_seats
from jubensha.scripts import DEFAULT_SCRIPT, find_script, load_script

TINY = str(Path(__file__).parents[1] / "engine" / "tiny_script.yaml")
runner = CliRunner()


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def test_play_streams_the_game_and_writes_the_run(tmp_path: Path) -> None:
    code, output = invoke("play", TINY, "--model", "scripted", "--seed", "4",
                          "--out", str(tmp_path / "run"))
    assert code == 0, output
    for words in ("── Self-introductions ──", "── Vote ──", "Winner:", "token usage"):
        assert words in output
    assert "To play with a real model" not in output  # the hint is for the local model
    result = json.loads((tmp_path / "run" / "result.json").read_text(encoding="utf-8"))
    assert result["winner"] in ("civilians", "murderers") and result["seed"] == 4


def test_play_with_no_script_plays_the_default_into_runs(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, output = invoke("play", "--model", "scripted")
    assert code == 0, output
    [folder] = (tmp_path / "runs").iterdir()
    assert re.fullmatch(rf"\d{{8}}-\d{{6}}-{DEFAULT_SCRIPT}", folder.name)
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    assert meta["procedure"]["name"] == "demo" and meta["script_id"] == DEFAULT_SCRIPT


def test_options_reach_the_run(tmp_path: Path) -> None:
    code, output = invoke("play", TINY, "--model", "scripted", "--procedure", "player",
                          "--rounds", "2", "--questions", "2", "--lang", "zh",
                          "--seat", "ann=naive:history_chars=300@scripted",
                          "--out", str(tmp_path / "run"))
    assert code == 0, output
    meta = json.loads((tmp_path / "run" / "meta.json").read_text(encoding="utf-8"))
    stages = [inner for s in meta["procedure"]["stages"] for inner in [s, *s.get("stages", [])]]
    questioning = [s for s in stages if s["kind"] == "questioning"]  # inside the acts block
    assert [(s["rounds"], s["questions"]) for s in questioning] == [(2, 2)]
    assert meta["language"] == "zh"
    assert meta["seats"]["Ann"]["architecture"] == "naive:history_chars=300"
    assert "请做自我介绍" in output


@pytest.mark.parametrize(("args", "words"), [
    (["no-such-mystery"], "no bundled script or file of that name"),
    ([TINY, "--model", "gpt-9"], "unknown model"),
    ([TINY, "--agents", "wizard"], "unknown architecture 'wizard'"),
    ([TINY, "--seat", "Zed=scripted"], "no such character"),
    ([TINY, "--seat", "Ann"], "write NAME=MODEL"),
    ([TINY, "--procedure", "marathon"], "no preset or file"),
    ([TINY, "--lang", "fr"], "--lang 'fr'"),
])
def test_bad_input_is_a_clear_message_and_exit_code_2(args: list[str], words: str) -> None:
    code, output = invoke("play", *args)
    assert code == 2
    assert words in " ".join(output.split()) and "Traceback" not in output


def test_replay_shows_the_run_as_it_was_shown_live(tmp_path: Path) -> None:
    code, live = invoke("play", TINY, "--model", "scripted", "--out", str(tmp_path / "run"))
    assert code == 0
    code, again = invoke("replay", str(tmp_path / "run"))
    assert code == 0

    def transcript(output: str) -> list[str]:
        lines = output.splitlines()
        first = next(i for i, line in enumerate(lines) if line.startswith("── "))
        end = next(i for i, line in enumerate(lines) if line.strip().startswith("votes"))
        return lines[first:end]

    assert transcript(again) == transcript(live) and len(transcript(live)) > 20


def test_replay_of_a_partial_run_and_of_nothing(tmp_path: Path) -> None:
    invoke("play", TINY, "--model", "scripted", "--out", str(tmp_path / "run"))
    (tmp_path / "run" / "result.json").unlink()
    code, output = invoke("replay", str(tmp_path / "run"))
    assert code == 0 and "This run did not finish." in output
    code, output = invoke("replay", str(tmp_path / "nothing"))
    assert code == 2 and "no such run folder" in output


def test_a_seat_may_be_named_by_a_first_or_last_name_that_fits_one_character() -> None:
    lighthouse = find_script("lighthouse-keeper")
    assert parse_seat("agnes=human", lighthouse)[0] == "Agnes Pike"
    assert parse_seat("Pike=naive@scripted", lighthouse)[0] == "Agnes Pike"
    tiny = load_script(TINY)
    twins = tiny.model_copy(update={"characters": [
        c.model_copy(update={"name": f"{c.name} Vance" if c.name in ("Ann", "Bob") else c.name})
        for c in tiny.characters]})
    with pytest.raises(PlayError, match="could be Ann Vance or Bob Vance"):
        parse_seat("vance=human", twins)
    assert parse_seat("bob=human", twins)[0] == "Bob Vance"


@pytest.mark.parametrize(("text", "expected"), [
    ("Ann=scripted", ("Ann", None, "scripted")),
    ("ann = naive@scripted", ("Ann", "naive", "scripted")),
    ("Ann=naive@", ("Ann", "naive", None)),
    ("Ann=naive:temperature=0.2@openai:gpt-4o-mini", ("Ann", "naive:temperature=0.2",
                                                      "openai:gpt-4o-mini")),
])
def test_seat_syntax(text: str, expected: tuple) -> None:
    assert parse_seat(text, load_script(TINY)) == expected


@pytest.mark.parametrize(("text", "problem"), [
    ("Ann", "write NAME=MODEL"), ("=scripted", "write NAME=MODEL"),
    ("Ann=", "write NAME=MODEL"), ("Ann=gpt-4", "unknown model"),
])
def test_seat_syntax_errors_say_what_is_wrong(text: str, problem: str) -> None:
    with pytest.raises(PlayError, match=problem):
        parse_seat(text, load_script(TINY))


def test_seats_default_then_override() -> None:
    plans = plan_seats(load_script(TINY), "naive", "local", ["Bob=scripted", "Cara=naive@"])
    assert {n: p.model for n, p in plans.items()} == {
        "Ann": "local", "Bob": "scripted", "Cara": "local", "Dan": "local"}
    with pytest.raises(PlayError, match="characters: Ann, Bob, Cara, Dan"):
        plan_seats(load_script(TINY), "naive", "local", ["Eve=scripted"])
