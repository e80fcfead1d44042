"""A run, batch or import folder is never overwritten or mixed: a folder that is not empty
is refused unless --overwrite, which empties only a folder this project wrote and never one
holding an input; a file in the way or a folder that cannot be created is one line, exit 2;
a batch never writes over its input spec."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from jubensha.cli import app

FIXTURES = Path(__file__).parents[1]
TINY = str(FIXTURES / "engine" / "tiny_script.yaml")
TEAHOUSE = str(FIXTURES / "fixtures" / "thinkthrice" / "清风茶馆.json")
runner = CliRunner()


def play(out: Path, *extra: str):
    return runner.invoke(app, ["play", TINY, "--model", "scripted", "--embedder", "none",
                               "--out", str(out), *extra])


def one_error_line(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    [line] = result.stderr.strip().splitlines()
    return line


def test_a_used_run_folder_is_refused_and_kept(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert play(out).exit_code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    line = one_error_line(play(out, "--seed", "3"))
    assert "not empty" in line and "--overwrite" in line
    assert "→" not in runner.invoke(app, ["play", TINY, "--out", str(out)]).stdout
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


def test_overwrite_empties_the_run_folder_first(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert play(out).exit_code == 0
    (out / "eval").mkdir()
    (out / "eval" / "old.json").write_text("{}", encoding="utf-8")
    assert play(out, "--seed", "3", "--overwrite").exit_code == 0
    events = [json.loads(line) for line in (out / "events.jsonl").read_text("utf-8").splitlines()]
    assert [e["index"] for e in events] == list(range(len(events)))
    assert sum(e["type"] == "game_ended" for e in events) == 1
    assert not (out / "eval").exists()
    assert json.loads((out / "meta.json").read_text("utf-8"))["seed"] == 3


def test_overwrite_never_empties_a_foreign_folder_or_one_holding_an_input(tmp_path: Path) -> None:
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("precious", encoding="utf-8")
    line = one_error_line(play(foreign, "--overwrite"))
    assert "empties only a folder this command wrote" in line
    assert (foreign / "thesis.tex").read_text(encoding="utf-8") == "precious"
    run = tmp_path / "run"
    assert play(run, "--record", str(run / "cassette.jsonl")).exit_code == 0
    line = one_error_line(play(run, "--overwrite", "--model", f"replay:{run / 'cassette.jsonl'}"))
    assert "an input of this command" in line and (run / "cassette.jsonl").is_file()


def test_a_file_or_an_impossible_path_is_one_line(tmp_path: Path) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x", encoding="utf-8")
    assert "is a file, not a folder" in one_error_line(play(a_file))
    assert "cannot create the folder" in one_error_line(play(a_file / "run"))
    assert a_file.read_text(encoding="utf-8") == "x"


SPEC = f"""# my experiment: keep this comment
scripts: [{TINY}]
architectures: [naive]
models: scripted
seeds: [0]
embedder: none
"""


def test_a_batch_never_writes_over_its_input_spec(tmp_path: Path,
                                                  monkeypatch) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    line = one_error_line(runner.invoke(app, ["runs", "batch", "spec.yaml", "--out", "."]))
    assert "input" in line and spec.read_text(encoding="utf-8") == SPEC
    other = tmp_path / "mine"
    other.mkdir()
    (other / "a.txt").write_text("x", encoding="utf-8")
    assert "not empty" in one_error_line(
        runner.invoke(app, ["runs", "batch", "spec.yaml", "--out", "mine"]))
    assert "is a file" in one_error_line(
        runner.invoke(app, ["runs", "batch", "spec.yaml", "--out", "mine/a.txt"]))


def test_a_batch_folder_resumes_or_is_overwritten(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    out = tmp_path / "batch"
    args = ["runs", "batch", str(spec), "--out", str(out)]
    assert runner.invoke(app, args).exit_code == 0
    [game] = [p for p in out.iterdir() if p.is_dir()]
    first = (game / "meta.json").read_text(encoding="utf-8")
    again = runner.invoke(app, args)
    assert again.exit_code == 0 and (game / "meta.json").read_text(encoding="utf-8") == first
    (out / "stray.txt").write_text("x", encoding="utf-8")
    assert runner.invoke(app, [*args, "--overwrite"]).exit_code == 0
    assert not (out / "stray.txt").exists() and (game / "result.json").is_file()


def test_imports_refuse_a_used_destination(tmp_path: Path) -> None:
    dest = tmp_path / "teahouse"
    assert runner.invoke(app, ["scripts", "import", "thinkthrice", TEAHOUSE, str(dest)]
                         ).exit_code == 0
    refused = runner.invoke(app, ["scripts", "import", "thinkthrice", TEAHOUSE, str(dest)])
    assert refused.exit_code == 2 and "not empty" in refused.stderr
    assert refused.stdout == ""  # no empty table, no "imported 0 of 1"
    again = runner.invoke(app, ["scripts", "import", "thinkthrice", TEAHOUSE, str(dest),
                                "--overwrite"])
    assert again.exit_code == 0 and "imported 1 of 1" in again.stdout
    used = tmp_path / "used"
    used.mkdir()
    (used / "meta.json").write_text("{}", encoding="utf-8")
    log = tmp_path / "Sin.xlsx"
    log.write_bytes(b"not a workbook")
    line = one_error_line(runner.invoke(app, ["runs", "import", "player-log", str(log),
                                              str(used)]))
    assert "not empty" in line and (used / "meta.json").read_text(encoding="utf-8") == "{}"


def test_a_bad_import_source_is_stderr_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    result = runner.invoke(app, ["scripts", "import", "thinkthrice", str(bad),
                                 str(tmp_path / "out")])
    assert result.exit_code == 2 and "bad.json" in result.stderr
    assert result.stdout == ""
