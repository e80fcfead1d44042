"""Attack: a shared batch's lies are pooled. A ``result.json`` edited to say the civilians
(here: the murderers) won changed the win rate after ``runs reindex``; a game whose
``calls.jsonl`` was answered by another model while its ``meta.json`` claims ``scripted``
was pooled; a game folder that is a link to a run outside the batch was indexed. Now
``runs reindex`` and ``runs report`` count a game only when its result agrees with its
events and its calls with its meta.json, and never through a link."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.runlog.consistency import call_models
from jubensha.runs.index import BatchIndex

runner = CliRunner()


def jubensha(*args: object):  # type: ignore[no-untyped-def]
    result = runner.invoke(app, [str(arg) for arg in args])
    assert "Traceback" not in result.output, result.output
    return result


def batch(tmp_path: Path) -> Path:
    """A batch of two lighthouse-keeper games (the scripted fake, seeds 0 and 1)."""
    spec = tmp_path / "experiment.yaml"
    spec.write_text("scripts: [lighthouse-keeper]\nmodels: [scripted]\nseeds: [0, 1]\n"
                    "embedder: none\nmetrics: []\n", encoding="utf-8")
    root = tmp_path / "batch"
    assert jubensha("runs", "batch", spec, "--out", root).exit_code == 0
    return root


def games(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if (p / "result.json").is_file())


def statuses(root: Path) -> dict[str, tuple[str, str | None]]:
    with BatchIndex.of(root) as index:
        return {row.name: (row.status, row.error) for row in index.rows()}


def report(root: Path) -> dict:  # type: ignore[type-arg]
    result = jubensha("runs", "report", root, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def finished_games(report_data: dict) -> int:  # type: ignore[type-arg]
    return sum(group["finished"] for group in report_data["groups"])


def test_an_edited_result_is_refused_by_reindex_and_report(tmp_path: Path) -> None:
    root = batch(tmp_path)
    first = games(root)[0]
    assert finished_games(report(root)) == 2
    result = json.loads((first / "result.json").read_text(encoding="utf-8"))
    result["winner"] = "murderers" if result["winner"] == "civilians" else "civilians"
    (first / "result.json").write_text(json.dumps(result), encoding="utf-8")
    assert finished_games(report(root)) == 1, "report: the index is checked against it"
    assert jubensha("runs", "reindex", root).exit_code == 0
    status, error = statuses(root)[first.name]
    assert status == "failed" and error is not None and "events.jsonl's reveal" in error
    assert finished_games(report(root)) == 1


def test_calls_answered_by_another_model_than_meta_seats_are_refused(tmp_path: Path) -> None:
    root = batch(tmp_path)
    first = games(root)[0]
    calls = first / "calls.jsonl"
    records = [json.loads(line) for line in calls.read_text(encoding="utf-8").splitlines()]
    for record in records:
        if record["model"] == "scripted":
            record["model"] = "openai:gpt-4o"
    calls.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert jubensha("runs", "reindex", root).exit_code == 0
    status, error = statuses(root)[first.name]
    assert status == "failed" and error is not None and "'openai:gpt-4o'" in error
    assert "meta.json seats 'scripted'" in error
    assert finished_games(report(root)) == 1


def test_a_game_folder_linked_to_a_run_outside_is_not_indexed(tmp_path: Path) -> None:
    root = batch(tmp_path)
    first = games(root)[0]
    elsewhere = tmp_path / "elsewhere"
    shutil.move(first, elsewhere)
    first.symlink_to(elsewhere, target_is_directory=True)
    assert jubensha("runs", "reindex", root).exit_code == 0
    status, error = statuses(root)[first.name]
    assert status == "failed" and error is not None and "symbolic link" in error
    assert finished_games(report(root)) == 1


def test_an_untouched_batch_counts_every_game(tmp_path: Path) -> None:
    root = batch(tmp_path)
    assert jubensha("runs", "reindex", root).exit_code == 0
    assert {status for status, _ in statuses(root).values()} == {"finished"}
    assert finished_games(report(root)) == 2


def test_the_report_reads_seats_and_models_from_either_way_of_writing_a_call(
        tmp_path: Path) -> None:
    """The report reads each call's seat and model from the start of its line as the log
    writes it, and a line written any other way whole; a torn last line is skipped."""
    root = batch(tmp_path)
    first = games(root)[0]
    calls = first / "calls.jsonl"
    lines = calls.read_text(encoding="utf-8").splitlines()
    assert lines[1].startswith('{"index":1,"time":')
    records = [json.loads(line) for line in lines]
    expected = [(r["seat"], r["model"]) for r in records]
    assert list(call_models(calls)) == expected
    spaced = [json.dumps(r) for r in records]
    calls.write_text("\n".join(spaced) + '\n{"index": 99, "se', encoding="utf-8")
    assert list(call_models(calls)) == expected
    canonical = lines[1].replace('"model":"scripted"', '"model":"openai:gpt-4o"')
    calls.write_text("\n".join([lines[0], canonical, *lines[2:]]) + "\n", encoding="utf-8")
    assert finished_games(report(root)) == 1
