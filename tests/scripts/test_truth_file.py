"""A truth the user supplies — truth.yaml beside the source, or `scripts import --truth
FILE` — overrides the derived truth, fails with one clear line when it is wrong, and
`scripts show --truth` says which fact came from where."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.scripts import ScriptError, load_script, validate
from jubensha.scripts.importers import import_script

runner = CliRunner()


def run(*args: object):
    result = runner.invoke(app, ["scripts", *map(str, args)])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result


def mirage(root: Path, truth: str = "Nothing is known.") -> Path:
    """A MIRAGE script whose texts name no culprit and no victim."""
    folder = root / "En" / "Quiet Inn"
    folder.mkdir(parents=True)
    parts = {"Story": "You stay at the inn.", "Script": "It rains.", "Relationship": "",
             "Performance": "", "Purpose": "Find the truth", "Ability": ""}
    (folder / "script.json").write_text(json.dumps({"Ann": parts, "Bob": parts, "Cid": parts}),
                                        encoding="utf-8")
    (folder / "clues.json").write_text('{"Hall": ["A knife."]}', encoding="utf-8")
    (folder.parent / "Truth.json").write_text(json.dumps({"Quiet Inn": truth}),
                                              encoding="utf-8")
    return folder


def test_without_a_truth_file_nothing_is_guessed(tmp_path) -> None:
    script = import_script("mirage", mirage(tmp_path))
    assert script.murderers == [] and script.victims == [] and not script.metadata.has_truth
    assert "the texts name no murderer: none derived" in script.metadata.notes


def test_a_truth_yaml_beside_the_source_overrides(tmp_path) -> None:
    folder = mirage(tmp_path)
    (folder / "truth.yaml").write_text("murderers: [bob]\nvictims: [Vera Moss]\n"
                                       "note: the author's answer\n", encoding="utf-8")
    script = import_script("mirage", folder)
    assert script.murderers == ["Bob"] and [v.name for v in script.victims] == ["Vera Moss"]
    assert script.character("Bob").side == "murderer"
    assert script.character("Bob").killed == ["Vera Moss"]
    assert [(k.victim, k.killers) for k in script.truth.kills] == [("Vera Moss", ["Bob"])]
    assert script.metadata.has_truth and validate(script).ok
    stated = [d for d in script.metadata.derivations if d.origin == "file"]
    assert [(d.fact, d.value, d.source) for d in stated] == [
        ("murderers", ["Bob"], "truth.yaml"), ("victims", ["Vera Moss"], "truth.yaml")]
    assert script.metadata.notes[-1].endswith("the author's answer")


def test_the_file_overrides_a_derived_truth_and_marks_it(tmp_path) -> None:
    folder = mirage(tmp_path, "The real murderer is Ann. Ann killed Vera Moss. Vera Moss "
                              "was found dead.")
    assert import_script("mirage", folder).murderers == ["Ann"]
    (folder / "truth.yaml").write_text("murderers: [Cid]\n", encoding="utf-8")
    script = import_script("mirage", folder)
    assert script.murderers == ["Cid"] and [v.name for v in script.victims] == ["Vera Moss"]
    assert script.character("Ann").side == "civilian"
    derived = next(d for d in script.metadata.derivations
                   if d.fact == "murderers" and d.origin == "text")
    assert derived.value == ["Ann"] and derived.overridden_by == "truth.yaml"


def test_kills_and_offstage_victims(tmp_path) -> None:
    folder = mirage(tmp_path)
    (folder / "truth.yaml").write_text(
        "murderers: [Ann, Bob]\nvictims: [Vera, Walt, Xia]\nkilled_offstage: [Xia]\n"
        "kills:\n  - {victim: Vera, killers: [Ann]}\n  - {victim: Walt, killers: [Bob]}\n",
        encoding="utf-8")
    script = import_script("mirage", folder)
    assert {k.victim: k.killers for k in script.truth.kills} == {"Vera": ["Ann"],
                                                                 "Walt": ["Bob"]}
    assert script.truth.killed_offstage == ["Xia"] and validate(script).ok


@pytest.mark.parametrize(("text", "message"), [
    ("murderers: [Zed]\n", "murderers[0]: 'Zed' is not a character of the script (Ann, Bob, Cid)"),
    ("murderer: [Ann]\n", "murderer: unknown field (a truth file has murderers, victims"),
    ("murderers: Ann\n", "murderers: Input should be a valid list"),
    ("victims: [V]\nkilled_offstage: [W]\n", ("killed_offstage[0]: 'W' is not one of the "
                                              "victims (V)")),
    ("- Ann\n", "(top level): expected a mapping"),
    ("murderers: [Ann\n", "(file): invalid YAML"),
])
def test_a_wrong_truth_file_is_one_clear_line(tmp_path, text, message) -> None:
    folder = mirage(tmp_path)
    (folder / "truth.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(ScriptError) as info:
        import_script("mirage", folder)
    assert len(info.value.problems) == 1 and message in str(info.value)
    assert str(info.value).startswith(str(folder / "truth.yaml"))


def test_a_linked_truth_file_beside_the_source_is_refused(tmp_path) -> None:
    folder = mirage(tmp_path)
    (tmp_path / "elsewhere.yaml").write_text("murderers: [Ann]\n", encoding="utf-8")
    (folder / "truth.yaml").symlink_to(tmp_path / "elsewhere.yaml")
    with pytest.raises(ScriptError, match="symbolic link"):
        import_script("mirage", folder)


def test_import_with_truth_and_show_where_it_came_from(tmp_path) -> None:
    folder = mirage(tmp_path)
    truth = tmp_path / "answer.yaml"
    truth.write_text("murderers: [Ann]\nvictims: [Vera Moss]\n", encoding="utf-8")
    result = run("import", "mirage", folder, tmp_path / "out", "--truth", truth)
    assert result.exit_code == 0, result.output
    assert load_script(tmp_path / "out").murderers == ["Ann"]
    shown = run("show", tmp_path / "out", "--truth").output
    assert f"murderers: Ann (from a truth file the user supplied, {truth}" in shown
    assert f"victims: Vera Moss (from a truth file the user supplied, {truth}" in shown
    hidden = run("show", tmp_path / "out").output
    assert "truth file" not in hidden and "Ann (" not in hidden


def test_show_says_a_fact_was_derived_with_its_confidence(tmp_path) -> None:
    folder = mirage(tmp_path, "The real murderer is Ann. Ann killed Vera Moss. Vera Moss "
                              "was found dead.")
    assert run("import", "mirage", folder, tmp_path / "out").exit_code == 0
    shown = run("show", tmp_path / "out", "--truth").output
    assert "murderers: Ann (derived from the texts, En/Truth.json, confidence 0." in shown
    assert "candidate Ann: score" in shown


def test_truth_with_all_is_refused(tmp_path) -> None:
    mirage(tmp_path)
    truth = tmp_path / "answer.yaml"
    truth.write_text("murderers: [Ann]\n", encoding="utf-8")
    result = run("import", "mirage", tmp_path, tmp_path / "out", "--all", "--truth", truth)
    assert result.exit_code == 2 and "with --all, put a truth.yaml beside each" in result.output


def test_a_missing_truth_file_is_one_line(tmp_path) -> None:
    result = run("import", "mirage", mirage(tmp_path), tmp_path / "out", "--truth",
                 tmp_path / "nope.yaml")
    assert result.exit_code == 2
    assert f"{tmp_path / 'nope.yaml'}: (file): cannot read" in result.output


def test_an_undecided_fact_is_said_at_import_with_its_candidates(tmp_path) -> None:
    folder = mirage(tmp_path, "Ann shot Vera Moss. Bob shot Vera Moss.")
    result = run("import", "mirage", folder, tmp_path / "out")
    assert result.exit_code == 0
    line = next(x for x in result.output.splitlines() if "murderers: none derived" in x)
    assert line.startswith(str(folder)) and "Ann (" in line and "Bob (" in line
    assert "a truth.yaml beside the source (or --truth FILE) can say who" in line
    (folder / "truth.yaml").write_text("murderers: [Ann]\n", encoding="utf-8")
    result = run("import", "mirage", folder, tmp_path / "out", "--overwrite")
    assert "none derived" not in result.output


SHADOW = "root:$6$saltsalt$hashhashhash:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n"


def test_attack_truth_option_naming_a_fifo_a_device_or_a_link_is_refused_before_reading(
        tmp_path: Path) -> None:
    """`--truth FILE` goes through the bounded reader: a FIFO used to block forever,
    /dev/zero to end in MemoryError after 70 s at 2.5 GB, a link to /etc/shadow to echo a
    line of it."""
    import os

    folder = mirage(tmp_path)
    os.mkfifo(tmp_path / "truth.yaml")
    secret = tmp_path / "shadow"
    secret.write_text(SHADOW, encoding="utf-8")
    (tmp_path / "linked.yaml").symlink_to(secret)
    copied = tmp_path / "copied.yaml"
    copied.write_text(SHADOW, encoding="utf-8")
    said = {name: run("import", "mirage", folder, tmp_path / f"out-{n}", "--truth", path)
            for n, (name, path) in enumerate({
                "fifo": tmp_path / "truth.yaml", "device": Path("/dev/zero"),
                "link": tmp_path / "linked.yaml", "copy": copied}.items())}
    assert "not a regular file (a FIFO)" in said["fifo"].output
    assert "not a regular file (a device)" in said["device"].output
    assert "a symbolic link; only regular files are read" in said["link"].output
    assert "unknown field" in said["copy"].output  # told, without quoting the lines
    for result in said.values():
        assert result.exit_code != 0 and "$6$" not in result.output and "daemon" not in \
            result.output


def test_an_unknown_field_with_a_name_is_still_named(tmp_path: Path) -> None:
    truth = tmp_path / "truth.yaml"
    truth.write_text("murderes: [Bob]\n", encoding="utf-8")
    result = run("import", "mirage", mirage(tmp_path), tmp_path / "out", "--truth", truth)
    assert "murderes: unknown field" in result.output
