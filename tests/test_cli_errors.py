"""One convention for every command's errors (docs/index.md, "Errors and exit codes"):
bad input is an ``error: `` line on stderr, nothing on stdout, and exit code 2, whichever
command was given it; a check that ran and found problems exits 1 with its report."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app

runner = CliRunner()
DOC = Path(__file__).parents[1] / "docs" / "index.md"


@pytest.mark.parametrize("args", [
    ["scripts", "show", "nosuch"],
    ["scripts", "validate", "/nonexistent.yaml"],
    ["scripts", "caption", "nosuch"],
    ["scripts", "import", "thinkthrice", "/nonexistent.json", "{tmp}/out"],
    ["scripts", "schema", "--out", "{tmp}/file/inside.json"],
    ["play", "nosuch"],
    ["play", "--seat", "Nobody=human"],
    ["replay", "/nonexistent"],
    ["eval", "all", "/nonexistent"],
    ["audit", "/nonexistent"],
    ["runs", "report", "/nonexistent"],
    ["runs", "batch", "/nonexistent.yaml"],
])
def test_bad_input_is_an_error_line_on_stderr_and_exit_code_2(args: list[str],
                                                               tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder", encoding="utf-8")
    result = runner.invoke(app, [arg.format(tmp=tmp_path) for arg in args])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("error: "), result.stderr


def test_a_check_that_found_problems_exits_1_with_its_report_on_stdout(tmp_path: Path) -> None:
    broken = tmp_path / "script.yaml"
    broken.write_text("title: [unclosed\n", encoding="utf-8")
    result = runner.invoke(app, ["scripts", "validate", str(broken)])
    assert result.exit_code == 1 and "1 error(s)" in result.stdout


def test_the_exit_codes_are_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    for code in ("| 0 |", "| 1 |", "| 2 |", "| 3 |", "| 4 |", "| 130 |"):
        assert code in text


def test_a_chinese_game_says_its_error_line_in_chinese(tmp_path: Path) -> None:
    tiny = Path(__file__).parent / "engine" / "tiny_script.yaml"
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "notes.txt").write_text("mine", encoding="utf-8")
    args = ["play", str(tiny), "--model", "scripted", "--embedder", "none",
            "--out", str(tmp_path / "used")]
    chinese = runner.invoke(app, [*args, "--lang", "zh"])
    assert chinese.exit_code == 2 and chinese.stdout == ""
    assert chinese.stderr.startswith("错误："), chinese.stderr
    assert "文件夹不是空的" in chinese.stderr and "not empty" not in chinese.stderr
    english = runner.invoke(app, args)
    assert english.stderr.startswith("error: ") and "not empty" in english.stderr
