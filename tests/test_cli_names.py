"""Commands agree on names: every command that takes a script takes a bundled id, a file or
a folder; `scripts validate` alone checks the bundled mysteries; a batch spec's unknown
architecture is told what a batch accepts (not `human`); no error says its prefix twice;
no run-folder header or folder for a game that never started."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.scripts import DEFAULT_SCRIPT, bundled_scripts

runner = CliRunner()


def test_validate_takes_bundled_ids_and_defaults_to_all_of_them() -> None:
    one = runner.invoke(app, ["scripts", "validate", DEFAULT_SCRIPT])
    assert one.exit_code == 0 and "1 script(s): 0 error(s)" in one.output
    every = runner.invoke(app, ["scripts", "validate"])
    assert every.exit_code == 0
    assert f"{len(bundled_scripts())} script(s): 0 error(s)" in every.output
    unknown = runner.invoke(app, ["scripts", "validate", "no-such-mystery"])
    assert unknown.exit_code == 2 and "no bundled script or file" in unknown.stderr


def test_caption_takes_a_bundled_id() -> None:
    result = runner.invoke(app, ["scripts", "caption", DEFAULT_SCRIPT, "--ocr-lang", "eng"])
    assert "no such file" not in result.output and "Traceback" not in result.output


def test_a_bad_model_is_one_line_with_one_prefix_and_no_folder(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = runner.invoke(app, ["play", "--model", "local:/no/such.gguf", "--out", str(out)])
    assert result.exit_code == 2
    [line] = result.output.strip().splitlines()
    assert line.count("model 'local:/no/such.gguf'") == 1
    assert "→" not in result.output and not out.exists()


def test_a_batch_spec_lists_what_a_batch_accepts(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"scripts: [{DEFAULT_SCRIPT}]\narchitectures: [nope, human]\n"
                    "models: scripted\n", encoding="utf-8")
    result = runner.invoke(app, ["runs", "batch", str(spec), "--out", str(tmp_path / "b")])
    assert result.exit_code == 2
    unknown = next(line for line in result.output.splitlines() if "'nope'" in line)
    accepted = unknown.split("a batch plays ")[1]
    assert "naive" in accepted and "human," not in accepted and "human seats play only" in accepted
    assert "'human' would be played by a person" in result.output


def test_a_spec_error_listing_the_models_is_one_line_without_escaped_breaks(
        tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"scripts: [{DEFAULT_SCRIPT}]\narchitectures: [naive]\n"
                    "models: [bogus:thing]\n", encoding="utf-8")
    result = runner.invoke(app, ["runs", "batch", str(spec), "--out", str(tmp_path / "b")])
    assert result.exit_code == 2
    [line] = result.output.strip().splitlines()
    assert "\\n" not in line and str(spec) in line
    assert "A model is one of: local (" in line and "; openai:<model> (" in line
