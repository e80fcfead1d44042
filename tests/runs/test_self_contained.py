"""A run folder is self-contained: it keeps the script it was played with (its hash in
meta.json), and evaluation, the audit, reports, replays and the web review read that copy
and nothing that meta.json names elsewhere. A folder from before copies were kept is read
only against a script the person names with ``--script``."""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.engine.procedure import find_procedure
from jubensha.llm.fake import ScriptedModel
from jubensha.runlog.folder import META, SCRIPT, RunError, read_run
from jubensha.runlog.script import NoScriptCopy, played_script
from jubensha.runs.play import PlayConfig, plan_seats, play_game
from jubensha.scripts import load_script, save_script

TINY = Path(__file__).parents[1] / "engine" / "tiny_script.yaml"
MARKER = "Quillon Vexmoor"
"""Text that only the decoy script holds."""
runner = CliRunner()


def decoy(folder: Path) -> Path:
    """Another script with the same characters, whose every private text holds MARKER."""
    script = load_script(TINY)
    characters = [c.model_copy(update={"story": f"{c.story} {MARKER} {c.name} knows it all.",
                                       "secrets": [f"{MARKER} saw {c.name} in the attic."]})
                  for c in script.characters]
    truth = script.truth.model_copy(update={"narrative": f"{MARKER} did it with poison."})
    return save_script(script.model_copy(update={"characters": characters, "truth": truth}),
                       folder / "decoy" / "script.yaml")


def play(out: Path) -> Path:
    script = load_script(TINY)
    asyncio.run(play_game(PlayConfig(script=script, procedure=find_procedure("demo"),
                                     plans=plan_seats(script, "naive", "scripted"), seed=3,
                                     script_source=str(TINY)), out,
                          models={"scripted": ScriptedModel()}))
    return out


def point_meta_at(run: Path, source: str, **changes: object) -> None:
    meta = json.loads((run / META).read_text(encoding="utf-8"))
    meta.update({"script_source": source, **changes})
    (run / META).write_text(json.dumps(meta), encoding="utf-8")


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return play(tmp_path_factory.mktemp("runs") / "game")


def test_the_folder_keeps_the_script_it_was_played_with(played: Path) -> None:
    data = (played / SCRIPT).read_bytes()
    meta = json.loads((played / META).read_text(encoding="utf-8"))
    assert meta["script_sha256"] == hashlib.sha256(data).hexdigest()
    assert played_script(read_run(played)) == load_script(TINY)


def test_a_meta_json_naming_another_script_never_puts_it_into_a_prompt_or_output(
        played: Path, tmp_path: Path) -> None:
    """The reproduced attack: meta.json's script_source names another script on the disk.
    eval, audit, runs report, replay and the web review run on the folder; not one word
    of the other script reaches a judge's prompt, a file of the folder or an output."""
    from tests.web.web_helpers import client

    runs = tmp_path / "runs"
    run = runs / "game"
    shutil.copytree(played, run)
    point_meta_at(run, str(decoy(tmp_path)))
    outputs = [runner.invoke(app, command) for command in (
        ["eval", "all", str(run), "--judge", "scripted", "--embedder", "scripted"],
        ["audit", str(run), "--format", "json"],
        ["runs", "report", str(runs), "--format", "md"],
        ["replay", str(run), "--verbose"])]
    assert [o.exit_code for o in outputs] == [0, 0, 0, 0], [o.output for o in outputs]
    with client(runs) as web:
        review = web.get("/review/game")
    assert review.status_code == 200
    assert "Ann hid the bloody gloves under the coal scuttle." in review.text  # the copy's
    prompts = (run / "eval" / "calls.jsonl").read_text(encoding="utf-8")
    assert "Ann struck Lord Vale with the brass candlestick" in prompts  # judged on the copy
    for text in [o.output for o in outputs] + [review.text]:
        assert MARKER not in text
    for path in run.rglob("*"):
        if path.is_file():
            assert MARKER.encode() not in path.read_bytes(), path


def test_a_changed_copy_and_a_folder_without_one_are_read_only_with_script(
        played: Path, tmp_path: Path) -> None:
    changed = tmp_path / "changed"
    shutil.copytree(played, changed)
    (changed / SCRIPT).write_text(decoy(tmp_path).read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(RunError, match="does not match the hash in meta.json"):
        played_script(read_run(changed))
    old = tmp_path / "old"
    shutil.copytree(played, old)
    (old / SCRIPT).unlink()
    point_meta_at(old, str(decoy(tmp_path)), script_sha256="")
    with pytest.raises(NoScriptCopy, match="pass --script"):
        played_script(read_run(old))
    refused = runner.invoke(app, ["eval", "identification", str(old)])
    assert refused.exit_code == 2 and "holds no copy of the script" in refused.output
    named = runner.invoke(app, ["eval", "identification", str(old), "--script", str(TINY),
                                "--format", "json"])
    assert named.exit_code == 0, named.output
    audited = runner.invoke(app, ["audit", str(old), "--script", str(TINY)])
    assert audited.exit_code == 0, audited.output


@pytest.mark.parametrize("name", ["events.jsonl", "calls.jsonl", "meta.json", SCRIPT])
def test_a_link_inside_a_run_folder_is_refused_not_followed(
        played: Path, tmp_path: Path, name: str) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("sk-outside-the-folder\n", encoding="utf-8")
    run = tmp_path / "run"
    shutil.copytree(played, run)
    target = tmp_path / "elsewhere"
    shutil.copy(run / name, target)
    (run / name).unlink()
    (run / name).symlink_to(target)
    outputs = [runner.invoke(app, ["eval", "identification", str(run)]),
               runner.invoke(app, ["audit", str(run)]),
               runner.invoke(app, ["replay", str(run)])]
    said = [" ".join(o.output.split()) for o in outputs]
    if name != SCRIPT:  # replay never reads the script
        assert all(o.exit_code == 2 for o in outputs), said
    assert all("a symbolic link" in text for text, o in zip(said, outputs, strict=True)
               if o.exit_code == 2)


def test_an_eval_folder_linked_elsewhere_is_never_written_through(
        played: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(played, run, ignore=shutil.ignore_patterns("eval"))
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "calls.jsonl").write_text("precious line without newline", encoding="utf-8")
    (run / "eval").symlink_to(victim)
    done = runner.invoke(app, ["eval", "identification", str(run)])
    assert done.exit_code == 2 and "a symbolic link" in done.output
    assert (victim / "calls.jsonl").read_text(encoding="utf-8") == \
        "precious line without newline"
    assert sorted(p.name for p in victim.iterdir()) == ["calls.jsonl"]


@pytest.mark.parametrize("spec", ["local:/tmp/elsewhere/model.gguf", "local:../weights.gguf",
                                  "replay:/home/someone/cassette.jsonl"])
def test_a_seat_model_naming_a_file_is_never_loaded_from_the_folders_word(
        played: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: str) -> None:
    """Re-voting asks each seat's own model again; a folder naming a model file gets the
    person asked to choose the model instead, and no loader is handed the path."""
    from jubensha.llm.local import LocalModel
    from jubensha.llm.replay import ReplayModel

    def loaded(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a loader was handed {args}")

    monkeypatch.setattr(LocalModel, "named", classmethod(loaded))
    monkeypatch.setattr(ReplayModel, "load", classmethod(loaded))
    run = tmp_path / "run"
    shutil.copytree(played, run, ignore=shutil.ignore_patterns("eval"))
    meta = json.loads((run / META).read_text(encoding="utf-8"))
    point_meta_at(run, str(TINY), seats={name: {**seat, "model": spec}
                                         for name, seat in meta["seats"].items()})
    refused = runner.invoke(app, ["eval", "revote", str(run)])
    assert refused.exit_code == 2
    assert "pass --seat-model" in " ".join(refused.output.split())
    chosen = runner.invoke(app, ["eval", "revote", str(run), "--seat-model", "scripted"])
    assert chosen.exit_code == 0, chosen.output


def test_a_known_local_model_name_is_no_file_of_the_folders() -> None:
    from jubensha.llm.registry import named_file

    assert [named_file(s) for s in ("local", "local:qwen2.5-coder-1.5b", "openai:gpt-4o",
                                    "scripted")] == [None] * 4
    assert named_file("local:/x/y.gguf") == "/x/y.gguf"
    assert named_file("replay:c.jsonl") == "c.jsonl"
