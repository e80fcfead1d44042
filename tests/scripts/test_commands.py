"""`jubensha scripts ...` through the real CLI: readable output, one clear line per problem,
non-zero exit codes, and never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.scripts import bundled_scripts, load_script
from jubensha.scripts.io import save_script
from jubensha.scripts.model import Candidate, Derivation

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MALFORMED = FIXTURES / "malformed"
TEAHOUSE = FIXTURES / "thinkthrice" / "清风茶馆.json"
runner = CliRunner()


def run(*args: str):
    result = runner.invoke(app, ["scripts", *map(str, args)])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result


@pytest.mark.parametrize("name", list(bundled_scripts()))
def test_show_prints_the_mystery_as_a_player_reads_it(name: str) -> None:
    result = run("show", name)
    script = load_script(bundled_scripts()[name])
    assert result.exit_code == 0
    shown = result.output
    assert script.title in shown and script.background.strip() in shown
    for character in script.characters:
        assert f"- {character.name}" in shown and character.description in shown
    for clue in script.clues:
        assert (clue.caption or clue.text if clue.image else clue.text) in shown
    assert "questions:" in shown and "the solution is hidden" in shown
    assert not any(line.startswith(("murderers:", "note:")) for line in shown.splitlines())
    for character in script.characters:
        assert character.story.strip() not in shown and character.mission not in shown


def test_show_reveals_the_solution_and_its_derivation_only_with_truth(tmp_path) -> None:
    script = load_script(bundled_scripts()["lighthouse-keeper"])
    script.metadata.derivations.append(Derivation(
        fact="murderers", value=script.murderers, source="Truth.json", confidence=0.91,
        evidence="She struck him on the landing.", method="a kill sentence",
        candidates=[Candidate(name=script.murderers[0], score=6.5, confidence=0.91,
                              derived=True)]))
    save_script(script, tmp_path / "s")
    hidden = run("show", tmp_path / "s")
    assert f"murderers: {script.murderers[0]}" not in hidden.output
    assert "confidence" not in hidden.output
    shown = run("show", tmp_path / "s", "--truth")
    assert f"murderers: {', '.join(script.murderers)}" in shown.output
    assert (f"murderers: {script.murderers[0]} (derived from the texts, Truth.json, "
            "confidence 0.91)") in shown.output
    assert "She struck him on the landing." in shown.output
    assert f"candidate {script.murderers[0]}: score 6.5, confidence 0.91 (derived)" in \
        shown.output


def test_show_prints_markup_in_a_script_as_text(tmp_path) -> None:
    script = load_script(bundled_scripts()["lighthouse-keeper"])
    script.title = "The [/] [bold]Gull[/bold] Rock"
    script.characters[0].aliases.append("Tommy [/red]")
    save_script(script, tmp_path / "s")
    result = run("show", tmp_path / "s", "--full", "--truth")
    assert result.exit_code == 0, result.output
    assert "The [/] [bold]Gull[/bold] Rock" in result.output and "Tommy [/red]" in result.output


def test_show_a_file_with_full_texts(tmp_path) -> None:
    run("import", "thinkthrice", TEAHOUSE, tmp_path / "teahouse")
    result = run("show", tmp_path / "teahouse", "--full", "--truth")
    assert result.exit_code == 0
    assert "林默" in result.output and "murderer" in result.output
    assert "victims: 周掌柜" in result.output
    assert "民国十年秋" in result.output  # the background, printed with --full


def test_show_an_unknown_name_is_one_clear_line() -> None:
    result = run("show", "no-such-mystery")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("error: no-such-mystery: (name): no bundled script or file")


@pytest.mark.parametrize(("fixture", "line"), [
    ("truncated.yaml", "(file): invalid YAML at line 5, column 1"),
    ("truncated.json", "(file): invalid JSON at line 1"),
    ("missing_characters.yaml", "characters: Field required"),
    ("unknown_holder.yaml", "clues[0].holder: 'Zed' is not a character (or 'public')"),
    ("wrong_type.yaml", "characters: Input should be a valid list"),
])
def test_validate_reports_exactly_one_error_per_malformed_file(fixture, line) -> None:
    result = run("validate", MALFORMED / fixture)
    assert result.exit_code == 1
    problem, summary = result.output.splitlines()
    assert problem.startswith(f"{MALFORMED / fixture}: {line}")
    assert summary == "1 script(s): 1 error(s), 0 warning(s)"


def test_validate_passes_good_scripts_and_prints_warnings(tmp_path) -> None:
    good = run("validate", *bundled_scripts().values())
    assert good.exit_code == 0 and "0 error(s)" in good.output
    script = json.loads(TEAHOUSE.read_text(encoding="utf-8"))
    script["角色"][0]["角色"] = "平民"
    script["角色"][1]["角色"] = "凶手"
    (tmp_path / "game.json").write_text(json.dumps(script, ensure_ascii=False), "utf-8")
    run("import", "thinkthrice", tmp_path / "game.json", tmp_path / "out")
    yaml_file = tmp_path / "out" / "script.yaml"
    text = yaml_file.read_text(encoding="utf-8").replace("side: murderer", "side: civilian")
    yaml_file.write_text(text, encoding="utf-8")
    warned = run("validate", yaml_file)
    assert warned.exit_code == 0
    assert f"{yaml_file}: truth.murderers: warning: characters marked murderer" in warned.output


def test_validate_walks_a_folder_of_script_folders(tmp_path) -> None:
    run("import", "thinkthrice", TEAHOUSE, tmp_path / "a")
    run("import", "thinkthrice", TEAHOUSE, tmp_path / "b")
    result = run("validate", tmp_path)
    assert result.exit_code == 0 and "2 script(s): 0 error(s)" in result.output


def test_import_one_script_writes_valid_yaml(tmp_path) -> None:
    result = run("import", "thinkthrice", TEAHOUSE, tmp_path / "teahouse")
    assert result.exit_code == 0 and "imported 1 of 1" in result.output
    assert load_script(tmp_path / "teahouse").murderers == ["林默"]


def test_import_all_reports_each_failure_and_finishes_the_batch(tmp_path) -> None:
    source = tmp_path / "games"
    source.mkdir()
    (source / "good.json").write_text(TEAHOUSE.read_text(encoding="utf-8"), encoding="utf-8")
    bad = json.loads(TEAHOUSE.read_text(encoding="utf-8"))
    bad["线索"] = "not a list"
    (source / "bad.json").write_text(json.dumps(bad, ensure_ascii=False), encoding="utf-8")
    result = run("import", "thinkthrice", source, tmp_path / "out", "--all")
    assert result.exit_code == 1
    assert f"{source / 'bad.json'}: 线索: expected a list, found a string" in result.output
    assert "imported 1 of 2 script(s)" in result.output
    assert (tmp_path / "out" / "thinkthrice-good" / "script.yaml").is_file()


def test_import_copies_images_next_to_the_script(datasets, tmp_path) -> None:
    result = run("import", "whodunitbench", datasets / "whodunitbench" / "DAMAIF",
                 tmp_path / "damaif")
    assert result.exit_code == 0
    script = load_script(tmp_path / "damaif")
    images = [c.image for c in script.clues if c.image]
    assert images and all((tmp_path / "damaif" / image).is_file() for image in images)


def test_import_all_of_a_dataset(datasets, tmp_path) -> None:
    result = run("import", "mirage", datasets / "mirage", tmp_path, "--all")
    assert result.exit_code == 0 and "imported 12 of 12" in result.output
    assert run("validate", tmp_path).exit_code == 0


@pytest.mark.parametrize(("args", "line"), [
    (("import", "nope", "x", "y"), "nope: (format): unknown format; one of: wellplay, conan"),
    (("import", "conan", "/no/such/dir", "y"), "/no/such/dir: (file): no such file or folder"),
    (("import", "mirage", "/no/such/dir", "y", "--all"), "/no/such/dir: (folder): no such folder"),
    (("import", "thinkthrice", MALFORMED / "thinkthrice_truncated.json", "y"),
     f"{MALFORMED / 'thinkthrice_truncated.json'}: (file): invalid JSON at line 5"),
])
def test_import_errors_are_one_clear_line(tmp_path, args, line) -> None:
    result = run(*args[:3], tmp_path / args[3], *args[4:])
    assert result.exit_code == 2  # bad input: on stderr, no empty table, no "imported 0"
    assert result.stderr.startswith(f"error: {line}") and result.stdout == ""


def test_schema_prints_and_writes_the_json_schema(tmp_path) -> None:
    printed = run("schema")
    assert printed.exit_code == 0
    schema = json.loads(printed.output)
    assert schema["title"] == "Script" and "characters" in schema["properties"]
    out = tmp_path / "schema" / "script.json"
    assert run("schema", "--out", out).exit_code == 0
    assert json.loads(out.read_text(encoding="utf-8")) == schema


@pytest.mark.datasets
def test_import_prints_each_warning_it_counts(datasets: Path, tmp_path: Path) -> None:
    source = datasets / "mirage" / "En" / "Bride in Filial Dress"
    result = run("import", "mirage", source, tmp_path / "bride")
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.output.splitlines() if ": warning: " in line]
    [row] = [line for line in result.output.splitlines() if "Bride" in line and "│" in line]
    counted = int(row.strip("│ ").split("│")[-1])
    assert counted > 0 and len(warnings) == counted
    assert all(line.startswith(str(tmp_path / "bride")) for line in warnings)


@pytest.mark.parametrize("script_id", list(bundled_scripts()))
def test_show_full_prints_no_character_sheet_without_truth(script_id: str) -> None:
    def bare(text: str) -> str:  # the terminal wraps lines, Chinese ones between characters
        return "".join(text.split())

    script = load_script(bundled_scripts()[script_id])
    sheets = [text for c in script.characters
              for text in (c.mission, c.story, *(s.text for s in c.acts)) if text.strip()]
    lines = {bare(line)[:40] for text in sheets for line in text.splitlines()
             if len(bare(line)) > 40}
    hidden = run("show", script_id, "--full")
    assert hidden.exit_code == 0
    assert not [line for line in lines if line in bare(hidden.output)]
    assert f"{len(script.characters)} character sheets hidden" in " ".join(hidden.output.split())
    shown = bare(run("show", script_id, "--full", "--truth").output)
    assert all(line in shown for line in lines)


def test_show_full_hides_the_murderers_confession() -> None:
    output = run("show", "lighthouse-keeper", "--full").output
    assert "You killed Elias Thorne" not in output
    assert "(the solution is hidden; --truth shows it)" in output
