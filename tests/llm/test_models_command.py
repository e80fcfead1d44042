"""`jubensha models` and choosing the default model with JUBENSHA_MODEL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.llm.catalog import KNOWN, status

runner = CliRunner()
TINY = str(Path(__file__).parents[1] / "engine" / "tiny_script.yaml")


def test_models_lists_each_known_model_with_its_state_and_needs(tmp_path: Path) -> None:
    result = runner.invoke(app, ["models", "--format", "json"],
                           env={"JUBENSHA_CACHE": str(tmp_path)})
    assert result.exit_code == 0, result.output
    rows = {row["spec"]: row for row in json.loads(result.output)}
    assert set(rows) == {"local", "local:qwen2.5-coder-1.5b"}
    for row in rows.values():
        model = next(m for m in KNOWN.values() if m.title == row["title"])
        assert row["ready"] == (row["bytes"] is not None)
        if not row["ready"]:
            assert row["needs"] == model.install
    assert rows["local:qwen2.5-coder-1.5b"]["languages"] == ["en", "zh"]

    table = runner.invoke(app, ["models"], env={"COLUMNS": "250",
                                                "JUBENSHA_CACHE": str(tmp_path)})
    assert "local:qwen2.5-coder-1.5b" in table.output and "JUBENSHA_MODEL" in table.output


@pytest.mark.parametrize("columns", [40, 60, 80, 100])
def test_the_model_list_never_cuts_a_spec_a_person_must_type(columns: int,
                                                             tmp_path: Path) -> None:
    table = runner.invoke(app, ["models"], env={"COLUMNS": str(columns),
                                                "JUBENSHA_CACHE": str(tmp_path)})
    assert table.exit_code == 0, table.output
    shown = {line.strip("│┃ ").split(" ")[0] for line in table.output.splitlines()}
    assert {status(model).spec for model in KNOWN.values()} <= shown


def test_jubensha_model_names_the_default_model_of_play(tmp_path: Path) -> None:
    result = runner.invoke(app, ["play", TINY, "--embedder", "none", "--out",
                                 str(tmp_path / "run")], env={"JUBENSHA_MODEL": "scripted"})
    assert result.exit_code == 0, result.output
    meta = json.loads((tmp_path / "run" / "meta.json").read_text(encoding="utf-8"))
    assert {seat["model"] for seat in meta["seats"].values()} == {"scripted"}


def test_exact_mode_is_a_model_option() -> None:
    from jubensha.llm.registry import ModelOptions, parse_model_spec

    model = parse_model_spec("local", ModelOptions(exact=True))
    assert model.exact is True
    assert parse_model_spec("local", ModelOptions()).exact is False
