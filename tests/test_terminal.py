"""Nothing a script, a model or a person wrote reaches the terminal as a control sequence:
``play``, ``scripts show`` and ``replay`` print a script title, a model's reply and a human
seat's input with their escape sequences removed, while the project's own styling still
works."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml
from rich.text import Text
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.llm.fake import ScriptedModel
from jubensha.runs.html import render_html
from jubensha.runs.index import GameRow
from jubensha.runs.ratings import rate, render_leaderboard
from jubensha.runs.report import build_report, render
from jubensha.terminal import Terminal, plain_text, printable

TINY = Path(__file__).parent / "engine" / "tiny_script.yaml"
TITLE = "\x1b]0;pwned\x07\x1b[2JThe Tiny\x9b31m Manor\u202e"
REPLY = "Evening.\x1b[8m hidden \x1b[0m\x1b]52;c;Y3VybCBldmls\x07 I was in the hall."
TYPED = "I was \x1b[1Aupstairs\x08\x08 all night."
runner = CliRunner()


def hostile_script(tmp_path: Path) -> Path:
    data = yaml.safe_load(TINY.read_text(encoding="utf-8"))
    data["title"] = TITLE
    data["characters"][1]["story"] += " \x1b[31mRed text\x1b[0m."
    path = tmp_path / "script.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def assert_clean(output: str) -> None:
    assert not [c for c in output if c != "\n" and printable(c) != c], repr(output[:300])


def test_printable_keeps_text_and_drops_what_a_terminal_would_act_on() -> None:
    assert printable(TITLE) == "]0;pwned[2JThe Tiny31m Manor"
    assert printable("雪地\t惊情\n") == "雪地\t惊情\n"


def test_the_terminal_keeps_its_own_styling_and_drops_the_texts_escapes() -> None:
    out = io.StringIO()
    terminal = Terminal(file=out, force_terminal=True, width=80)
    terminal.print(Text(REPLY, style="bold"))
    shown = out.getvalue()
    assert shown.startswith("\x1b[1m") and "\x1b[8m" not in shown and "\x07" not in shown
    assert "hidden" in shown and "I was in the hall." in shown


def test_play_scripts_show_and_replay_print_no_control_sequence(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = hostile_script(tmp_path)
    model = ScriptedModel(replies={"introduction": [REPLY] * 4})
    monkeypatch.setattr("jubensha.runs.commands.build_models",
                        lambda plans, options: {"scripted": model})
    lines = [TYPED] * 40
    played = runner.invoke(app, ["play", str(script), "--model", "scripted", "--embedder",
                                 "none", "--seat", "Bob=human", "--out", str(tmp_path / "run")],
                           input="".join(f"{line}\n" for line in lines))
    shown = runner.invoke(app, ["scripts", "show", str(script), "--full", "--truth"])
    replayed = runner.invoke(app, ["replay", str(tmp_path / "run"), "--verbose"])
    for result in (played, shown, replayed):
        assert result.exit_code == 0, result.output
        assert_clean(result.output)
    assert "The Tiny31m Manor" in shown.output and "Red text" in shown.output
    assert "I was in the hall." in played.output and "I was in the hall." in replayed.output
    assert "I was [1Aupstairs all night." in replayed.output


ESCAPES = ("\x1b]0;pwned\x07", "\x1b[2J", "\x1b]8;;http://evil.example/\x1b\\",
           "\x9b31m", "\x1bP1$r\x1b\\", "\x1b]52;c;Y3VybCBldmls\x07")


def assert_plain(text: str) -> None:
    """No escape sequence and no control character but tab and newline, nor what a
    stripped sequence would leave behind (``]0;pwned``, ``[2J``)."""
    assert_clean(text)
    for left in ("]0;", "pwned", "[2J", "]8;;", "evil.example", "]52;"):
        assert left not in text, (left, text[:300])


def test_plain_text_removes_whole_sequences_and_keeps_the_text() -> None:
    assert plain_text(TITLE) == "The Tiny Manor"
    assert plain_text("a\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\ b") == "alink b"
    assert plain_text("\x1b]0;no end\nnext line") == "\nnext line"
    assert plain_text("雪地\t惊情\n[1] **Ann**: (ok)") == "雪地\t惊情\n[1] **Ann**: (ok)"


def test_attack_escapes_in_a_title_clue_or_reply_are_not_written_into_files_for_people(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Terminal-title, clear-screen and hyperlink sequences from a script's title, clues
    and model replies used to be written raw into transcript.md and Markdown/CSV/HTML
    reports, where `cat` ran them."""
    script = hostile_script(tmp_path)
    data = yaml.safe_load(script.read_text(encoding="utf-8"))
    data["clues"][0]["text"] += "".join(ESCAPES)
    script.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    reply = "".join(ESCAPES) + " I was in the hall."
    model = ScriptedModel(replies={"introduction": [reply] * 4, "statement": [reply] * 20})
    monkeypatch.setattr("jubensha.runs.commands.build_models",
                        lambda plans, options: {"scripted": model})
    played = runner.invoke(app, ["play", str(script), "--model", "scripted", "--embedder",
                                 "none", "--out", str(tmp_path / "run")])
    assert played.exit_code == 0, played.output
    transcript = (tmp_path / "run" / "transcript.md").read_text(encoding="utf-8")
    assert "I was in the hall." in transcript and "The Tiny Manor" in transcript
    assert_plain(transcript)
    hostile = "".join(ESCAPES) + "The Tiny Manor"
    rows = [GameRow(id=str(n), position=n, name=f"g{n}", script=hostile, procedure="demo",
                    architecture="naive", model="scripted", seed=n, status="finished",
                    winner="civilians", settings={"seats": {
                        "Ann": {"name": "Ann", "architecture": "naive" + ESCAPES[0],
                                "model": "scripted"},
                        "Bob": {"name": "Bob", "architecture": "naive", "model": "scripted"}},
                        "murderers": ["Bob"]}) for n in range(2)]
    report = build_report(rows, batch=hostile)
    for fmt in ("md", "csv"):
        assert_plain(render(report, fmt))  # type: ignore[arg-type]
        assert_plain(render_leaderboard(rate(rows, batch=hostile), fmt))  # type: ignore[arg-type]
    assert_clean(render(report, "json"))  # data: each escape written as \u001b, never raw
    assert_plain(render_html(tmp_path / "batch", rows, tmp_path / "report.html"))
