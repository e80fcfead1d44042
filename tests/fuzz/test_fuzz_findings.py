"""Each bug the fuzzer (``test_fuzz_loaders.py``) found, as a plain regression test: the
smallest input that showed it and the one-line error it must give now."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from jubensha.agents.player_star.sensors import load_sensors
from jubensha.cli import app
from jubensha.eval.playerlogs import TRANSCRIPT_COLUMNS, PlayerLogError, read_transcript
from jubensha.llm.calls import read_calls
from jubensha.llm.replay import CassetteError, ReplayModel
from jubensha.llm.wrappers import PriceTable
from jubensha.runlog.folder import RunError, read_run
from jubensha.runs.importers.player_log import PlayerLogImportError, import_player_log
from jubensha.runs.spec import load_spec
from jubensha.runs.spec_schema import SpecError
from jubensha.safeload import DocumentError, read_document
from jubensha.scripts.importers import discover, import_script
from jubensha.scripts.io import ScriptError, load_script
from tests.fuzz.shapes import TINY, conan, player_log, run, wellplay, whodunitbench, xlsx


def write(folder: Path, files: dict[str, bytes]) -> Path:
    for name, content in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(content)
    return folder


def test_a_cassette_that_is_not_utf8_is_a_cassette_error(tmp_path):
    path = tmp_path / "cassette.jsonl"
    path.write_bytes(b"\xff\xfe\x00{}\n")
    with pytest.raises(CassetteError, match=r"cassette.jsonl:1: "):
        ReplayModel.load(path)


def test_an_importer_never_reads_a_file_through_a_link(tmp_path):
    """A Conan purpose file linked to a file elsewhere was read into the script."""
    (tmp_path / "secret.txt").write_text("the key", encoding="utf-8")
    files = conan()
    del files["english/data_final/001-Tiny/purpose/Bob.txt"]
    write(tmp_path / "data", files)
    link = tmp_path / "data" / "english" / "data_final" / "001-Tiny" / "purpose" / "Bob.txt"
    link.parent.mkdir()
    link.symlink_to(tmp_path / "secret.txt")
    with pytest.raises(ScriptError, match="Bob.txt: \\(file\\): reached through a symbolic"):
        import_script("conan", tmp_path / "data" / "english" / "data_final" / "001-Tiny")


def test_an_importer_never_reads_a_file_inside_a_linked_folder(tmp_path):
    """A folder of the script linked elsewhere: its files are regular, the way to them is not."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "Bob.txt").write_text("the key", encoding="utf-8")
    files = {k: v for k, v in conan().items() if "/purpose/" not in k}
    write(tmp_path / "data", files)
    script = tmp_path / "data" / "english" / "data_final" / "001-Tiny"
    (script / "purpose").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(ScriptError, match="reached through a symbolic link \\(purpose\\)"):
        import_script("conan", script)


def test_a_dataset_folder_linked_elsewhere_is_not_discovered_but_a_linked_root_is(tmp_path):
    write(tmp_path / "data", conan())
    outside = tmp_path / "outside" / "data_final"
    outside.parent.mkdir()
    (tmp_path / "data" / "english" / "data_final").rename(outside)
    (tmp_path / "data" / "english" / "data_final").symlink_to(outside, target_is_directory=True)
    assert discover("conan", tmp_path / "data") == []  # reached through a link inside
    (tmp_path / "root").symlink_to(tmp_path / "data", target_is_directory=True)
    assert discover("conan", tmp_path / "root" / "english" / "data_final") != []  # the way in


def test_a_corrupt_workbook_part_is_a_player_log_error(tmp_path):
    """A damaged compressed part raised zlib.error out of openpyxl."""
    data = bytearray(player_log()["logs/Tiny/Tiny.xlsx"])
    start = data.index(b"xl/worksheets/sheet1.xml") + len(b"xl/worksheets/sheet1.xml")
    data[start:start + 40] = b"\xff" * 40  # the sheet's deflated bytes
    path = tmp_path / "Tiny.xlsx"
    path.write_bytes(bytes(data))
    with pytest.raises(PlayerLogError, match="Tiny.xlsx: "):
        read_transcript(path)


def test_a_workbook_whose_manifest_cannot_be_read_is_one_line(tmp_path):
    """openpyxl's message for a workbook whose part names are broken runs to three lines;
    the error printed them, two naming no file (found by the fuzzing's long run)."""
    data = bytearray(player_log()["logs/Tiny/Tiny.xlsx"])
    data[-6:-2] = b"\xff\xfe\x00n"  # the zip's offset of its central directory
    path = tmp_path / "Tiny.xlsx"
    path.write_bytes(bytes(data))
    with pytest.raises(PlayerLogError) as error:
        read_transcript(path)
    assert len(str(error.value).splitlines()) == 1, str(error.value)
    assert str(error.value).startswith(f"{path}: ")


def test_a_header_of_huge_cells_is_one_short_line(tmp_path):
    path = tmp_path / "Tiny.xlsx"
    path.write_bytes(xlsx([("x" * 30_000, "y\nz")]))
    with pytest.raises(PlayerLogError) as error:
        read_transcript(path)
    assert len(str(error.value).splitlines()) == 1 and len(str(error.value)) < 600


def test_a_field_named_with_a_line_break_stays_on_its_line(tmp_path):
    """A key holding '\\r' split a spec error into a line that named no file; a key that
    is no field name is not quoted at all now (it may be a line of another file)."""
    path = tmp_path / "spec.yaml"
    path.write_text(json.dumps({"scripts": ["lighthouse-keeper"], "a\rb": 1}), "utf-8")
    with pytest.raises(SpecError) as error:
        load_spec(path)
    assert len(str(error.value).splitlines()) == 1
    assert "(a key that is no field name, not shown): unknown field" in str(error.value)


def test_a_huge_unknown_field_is_cut_in_the_script_error(tmp_path):
    data = yaml.safe_load(TINY)
    data["x" * 5000 + "\u2028"] = 1
    path = tmp_path / "script.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ScriptError) as error:
        load_script(path)
    [line] = str(error.value).splitlines()
    assert line.startswith(str(path)) and len(line) < 1000


def test_a_wellplay_script_given_as_an_object_names_its_file(tmp_path):
    files = wellplay()
    files["Tiny/json/Ann.json"] = json.dumps({"script": {}, "victims": ["Vic"]}).encode()
    write(tmp_path, files)
    with pytest.raises(ScriptError, match=r"Ann.json: script: expected a list"):
        import_script("wellplay", tmp_path / "Tiny")


@pytest.mark.parametrize("name", ["options.yaml", "prices.yaml", "sensors.yaml"])
def test_a_yaml_error_is_one_line(tmp_path, name):
    """PyYAML's problem text holds a line break ('...\\n  in "<unicode string>"')."""
    path = tmp_path / name
    path.write_bytes(b"a: \x03")
    with pytest.raises(DocumentError) as error:
        read_document(path)
    assert len(str(error.value).splitlines()) == 1


def test_an_unknown_stage_is_quoted_short(tmp_path):
    rows = [TRANSCRIPT_COLUMNS, (0, "self introduction stage", "Li", "all", "I am Li.", ""),
            (1, "x" * 5000, "Li", "Wang", "Where?", "")]
    (tmp_path / "Tiny").mkdir()
    (tmp_path / "Tiny" / "Tiny.xlsx").write_bytes(xlsx(rows))
    with pytest.raises(PlayerLogImportError) as error:
        import_player_log(tmp_path / "Tiny" / "Tiny.xlsx", tmp_path / "out")
    assert len(str(error.value)) < 400


def test_a_log_line_nested_too_deeply_is_a_run_error(tmp_path):
    """The torn-line check parsed it again with json and hit Python's recursion limit."""
    files = {n.removeprefix("run/"): c for n, c in run().items()}
    write(tmp_path, files)
    with (tmp_path / "events.jsonl").open("ab") as log:
        log.write(b"[" * 5000 + b"]" * 5000 + b"\n")
    with pytest.raises(RunError, match="events.jsonl:"):
        read_run(tmp_path)
    calls = tmp_path / "calls.jsonl"
    calls.write_bytes(calls.read_bytes() + b"[" * 5000 + b"]" * 5000 + b"\n")
    with pytest.raises(ValueError, match="calls.jsonl:"):
        read_calls(calls)


def test_a_last_log_line_with_a_number_too_long_to_convert_is_a_run_error(tmp_path):
    """The torn-line check parsed it again with json, which refuses integers of more than
    4,300 digits with a ValueError that escaped (found by a ``--long`` run)."""
    files = {n.removeprefix("run/"): c for n, c in run().items()}
    write(tmp_path, files)
    with (tmp_path / "calls.jsonl").open("ab") as log:
        log.write(b'{"index": ' + b"9" * 5000 + b"}\n")
    with pytest.raises(RunError, match="calls.jsonl:"):
        read_run(tmp_path)


def test_a_spec_naming_a_script_too_long_for_a_path_is_a_spec_error(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(json.dumps({"scripts": ["9" * 5000], "procedures": ["p" * 5000]}), "utf-8")
    with pytest.raises(SpecError) as error:
        load_spec(path)
    assert all(len(line) < 1000 for line in str(error.value).splitlines())


def test_a_whodunitbench_role_named_by_a_number_is_read_as_text(tmp_path):
    files = whodunitbench()
    data = json.loads(files["TINY/env_p_all.json"])
    data["role"][1]["name"], data["role"][1]["self"] = 7, 8
    files["TINY/env_p_all.json"] = json.dumps(data).encode()
    write(tmp_path, files)
    script = import_script("whodunitbench", tmp_path / "TINY")
    assert script.characters[1].name == "7" and script.characters[1].extra["self"] == "8"


@pytest.mark.parametrize("name", ["/etc/passwd", "../../secret", "..", "a\\b"])
def test_a_wellplay_character_name_is_never_a_path_out(tmp_path, name):
    """character_name ['/etc/passwd'] made the importer read /etc/passwd.json."""
    (tmp_path / "secret.json").write_text(json.dumps({"script": ["the key"]}), "utf-8")
    files = wellplay()
    files["Tiny/json/script_info.json"] = json.dumps({"character_name": ["Ann", name]}).encode()
    write(tmp_path / "data", files)
    with pytest.raises(ScriptError, match=r"character_name\[1\]: .* not a plain file name"):
        import_script("wellplay", tmp_path / "data" / "Tiny")


def test_price_and_sensor_errors_never_echo_a_huge_field(tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text(yaml.safe_dump({"x" * 70_000: {"input_per_1m": -1}}), "utf-8")
    sensors = tmp_path / "sensors.yaml"
    sensors.write_text(yaml.safe_dump([{"9" * 5000: 1}] * 20), "utf-8")
    for load, path in ((PriceTable.load, prices), (load_sensors, sensors)):
        with pytest.raises(ValueError) as error:
            load(path)
        assert str(path) in str(error.value) and len(str(error.value)) < 1000


def test_metric_options_of_the_wrong_shape_are_refused_when_read(tmp_path):
    """`eval factual --options` with `factual: 5` was a pydantic traceback in the metric."""
    path = tmp_path / "options.yaml"
    path.write_text("revote: {samples: x}\nfactual: 5\nsomething-else: 1\n", "utf-8")
    result = CliRunner().invoke(app, ["eval", "factual", str(tmp_path), "--options", str(path),
                                      "--judge", "scripted"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "options.yaml: revote.samples: Extra inputs are not permitted (and 2 more)" in \
        " ".join(result.output.split())
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump({"scripts": ["lighthouse-keeper"],
                                    "metric_options": {"factual": 5}}), "utf-8")
    with pytest.raises(SpecError, match="metric_options.factual: Input should be"):
        load_spec(spec)
