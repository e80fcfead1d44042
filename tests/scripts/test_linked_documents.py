"""A YAML or JSON file that is a symbolic link out of its folder is not read, so no error
can quote what it points at: a shared folder's ``spec.yaml`` linked to ``/etc/shadow``
used to print one ``unknown field`` line per account, and a link to a secrets file
printed the secret as a field name. A link to a file beside it in the same folder is
read as usual."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from jubensha.agents.player_star.sensors import load_sensors
from jubensha.cli import app
from jubensha.engine.procedure import ProcedureError, find_procedure, load_procedure
from jubensha.eval.cli_helpers import read_options
from jubensha.llm.wrappers import PriceTable
from jubensha.runs.spec import load_spec
from jubensha.runs.spec_schema import SpecError
from jubensha.safeload import DocumentError, read_document
from jubensha.scripts.io import ScriptError, load_script

SECRET = "sk-VICTIM-SECRET-TOKEN-123"
SHADOW = "root:*:20228:0:99999:7:::"
runner = CliRunner()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside the shared folder, shaped like a secrets file and a shadow file."""
    secret = tmp_path / "home" / "secrets.yaml"
    secret.parent.mkdir()
    secret.write_text(f"{SECRET}: 1\n{SHADOW}\ndaemon: x\n", encoding="utf-8")
    return secret


def shared(tmp_path: Path, name: str, target: Path) -> Path:
    folder = tmp_path / "shared"
    folder.mkdir(exist_ok=True)
    link = folder / name
    link.symlink_to(target)
    return link


def refused(error: BaseException | str) -> None:
    text = str(error)
    assert SECRET not in text and "root:" not in text and "daemon" not in text, text
    assert "symbolic link that leads outside its folder" in text, text


def test_read_document_refuses_a_link_out_of_its_folder(tmp_path: Path, outside: Path) -> None:
    with pytest.raises(DocumentError) as caught:
        read_document(shared(tmp_path, "spec.yaml", outside))
    refused(caught.value)
    relative = shared(tmp_path, "up.yaml", Path("..") / "home" / outside.name)
    with pytest.raises(DocumentError) as caught:
        read_document(relative)
    refused(caught.value)


def test_a_link_to_a_file_beside_it_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    (folder / "real.yaml").write_text("a: 1\n", encoding="utf-8")
    (folder / "spec.yaml").symlink_to("real.yaml")
    assert read_document(folder / "spec.yaml") == {"a": 1}


def test_every_reader_of_yaml_refuses_a_link_out(tmp_path: Path, outside: Path) -> None:
    readers = [
        (lambda p: load_spec(p), SpecError, "spec.yaml"),
        (lambda p: load_procedure(p), ProcedureError, "procedure.yaml"),
        (lambda p: find_procedure(str(p)), ProcedureError, "proc2.yaml"),
        (lambda p: load_script(p), ScriptError, "script.yaml"),
        (lambda p: PriceTable.load(p), Exception, "prices.yaml"),
        (lambda p: load_sensors(p), Exception, "sensors.yaml"),
    ]
    for read, error, name in readers:
        with pytest.raises(error) as caught:
            read(shared(tmp_path, name, outside))
        refused(caught.value)


def test_an_options_file_that_links_out_is_refused(tmp_path: Path, outside: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(typer.Exit):
        read_options(shared(tmp_path, "options.yaml", outside))
    refused(capsys.readouterr().err)


def test_a_script_folder_whose_script_yaml_links_out_is_refused(tmp_path: Path,
                                                                 outside: Path) -> None:
    link = shared(tmp_path, "script.yaml", outside)
    with pytest.raises(ScriptError) as caught:
        load_script(link.parent)
    refused(caught.value)


@pytest.mark.parametrize("args", [
    ["runs", "batch", "{shared}/spec.yaml", "--out", "{tmp}/out"],
    ["scripts", "validate", "{shared}/script.yaml"],
    ["play", "lighthouse-keeper", "-p", "{shared}/procedure.yaml", "--out", "{tmp}/game"],
])
def test_the_commands_print_nothing_of_a_linked_file(tmp_path: Path, outside: Path,
                                                     args: list[str]) -> None:
    for name in ("spec.yaml", "script.yaml", "procedure.yaml"):
        shared(tmp_path, name, outside)
    result = runner.invoke(app, [a.format(shared=tmp_path / "shared", tmp=tmp_path)
                                 for a in args])
    assert result.exit_code != 0
    refused(result.output + result.stderr)


def test_a_spec_naming_a_linked_procedure_does_not_print_it(tmp_path: Path,
                                                            outside: Path) -> None:
    shared(tmp_path, "procedure.yaml", outside)
    spec = tmp_path / "shared" / "batch.yaml"
    spec.write_text("scripts: [lighthouse-keeper]\nprocedures: [procedure.yaml]\n",
                    encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        load_spec(spec)
    refused(caught.value)


def test_a_regular_file_of_shadow_lines_shows_no_line_as_a_field(tmp_path: Path) -> None:
    """What a link in the folder is refused for, a file's own lines are hidden from too:
    a key that is no field name is never quoted (spec, procedure and script alike)."""
    for name, read, error in (("spec.yaml", load_spec, SpecError),
                              ("procedure.yaml", load_procedure, ProcedureError),
                              ("script.yaml", load_script, ScriptError)):
        path = tmp_path / name
        path.write_text(f"{SHADOW}\nbin:*:20228:0:99999:7:::\n", encoding="utf-8")
        with pytest.raises(error) as caught:
            read(path)
        assert "root:" not in str(caught.value) and "bin:" not in str(caught.value)
