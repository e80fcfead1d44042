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
from jubensha.terminal import Terminal, printable

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
