"""A script file is untrusted: it can point at no file outside its folder, and no content
(deep nesting, alias bombs, huge numbers, broken characters, wrong types) crashes or hangs
the program. Every problem is the project's one-line error naming the file and field."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.safeload import DocumentError, parse_document
from jubensha.scripts import load_script
from jubensha.scripts.importers import copy_assets
from jubensha.scripts.importers.common import parse_options
from jubensha.scripts.io import ScriptError, check_script, read_data

TINY = Path(__file__).parents[1] / "engine" / "tiny_script.yaml"
runner = CliRunner()


def with_image(tmp_path: Path, image: str) -> Path:
    data = yaml.safe_load(TINY.read_text(encoding="utf-8"))
    data["clues"].append({"id": "card", "text": "", "image": image})
    folder = tmp_path / "script"
    folder.mkdir(exist_ok=True)
    (folder / "script.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    return folder


@pytest.mark.parametrize("image", ["../../../../etc/passwd", "/etc/passwd", "~/.ssh/id_rsa",
                                   "img/../../outside.png"])
def test_an_image_path_outside_the_script_folder_is_refused(tmp_path, image):
    (tmp_path / "outside.png").write_bytes(b"secret")
    folder = with_image(tmp_path, image)
    with pytest.raises(ScriptError) as error:
        load_script(folder)
    assert "clues[4].image" in str(error.value)
    _, report, _ = check_script(folder)
    assert not report.ok


def test_a_symlink_out_of_the_folder_and_a_non_image_are_refused(tmp_path):
    folder = with_image(tmp_path, "img/card.png")
    (folder / "img").mkdir()
    (folder / "img" / "card.png").symlink_to("/etc/passwd")
    with pytest.raises(ScriptError, match="outside the script's folder"):
        load_script(folder)
    (folder / "img" / "card.png").unlink()
    (folder / "img" / "card.png").write_text("root:x:0:0")
    with pytest.raises(ScriptError, match="not a readable image"):
        load_script(folder)
    Image.new("RGB", (2, 2)).save(folder / "img" / "card.png")
    assert load_script(folder).clues[-1].image == "img/card.png"


def test_play_refuses_a_script_whose_image_leaves_its_folder(tmp_path):
    folder = with_image(tmp_path, "/etc/passwd")
    result = runner.invoke(app, ["play", str(folder), "-p", "whodunit", "-a", "whodunit",
                                 "--model", "scripted", "--out", str(tmp_path / "run")])
    assert result.exit_code == 2 and "clues[4].image" in result.output
    assert not (tmp_path / "run").exists()


def test_copying_assets_never_follows_a_link_out(tmp_path):
    folder = with_image(tmp_path, "img/card.png")
    (folder / "img").mkdir()
    (folder / "img" / "card.png").symlink_to("/etc/passwd")
    script = load_script(TINY)
    script.clues[0].image = "img/card.png"
    with pytest.raises(ScriptError, match="outside"):
        copy_assets(script, folder / "script.yaml", tmp_path / "dest")
    assert not (tmp_path / "dest" / "img" / "card.png").exists()


def test_whodunitbench_import_skips_a_symlinked_card(tmp_path, datasets):
    source = datasets / "whodunitbench" / "BOLIWU2"
    copy = tmp_path / "BOLIWU2"
    (copy / "img").mkdir(parents=True)
    for path in source.glob("*.json"):
        (copy / path.name).write_bytes(path.read_bytes())
    (copy / "img" / "image_1.png").symlink_to("/etc/passwd")
    result = runner.invoke(app, ["scripts", "import", "whodunitbench", str(copy),
                                 str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert not list((tmp_path / "out").rglob("image_1.png"))


@pytest.mark.parametrize("text, problem", [
    ("a: " + "[" * 30_000 + "]" * 30_000, "nested"),
    ("[" * 5_000 + "]" * 5_000, "nested"),
    ("id: " + "9" * 5_000, "digits"),
    ('a: &a ["x","x","x","x","x","x","x","x","x"]\n' + "\n".join(
        f'{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},'
        f'*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},'
        f'*{chr(97 + i)}]' for i in range(9)), "expands"),
])
def test_hostile_yaml_is_one_error_in_bounded_time(tmp_path, text, problem):
    path = tmp_path / "script.yaml"
    path.write_text(text, encoding="utf-8")
    started = time.perf_counter()
    with pytest.raises(ScriptError) as error:
        read_data(path)
    assert problem in str(error.value) and time.perf_counter() - started < 5
    assert len(str(error.value)) < 400


def test_hostile_json_is_one_error(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 5000 + "]" * 5000, encoding="utf-8")
    surrogate = tmp_path / "surrogate.json"
    surrogate.write_text('{"id": "a", "title": "\\ud800"}', encoding="utf-8")
    for path in (deep, surrogate):
        with pytest.raises(ScriptError):
            read_data(path)


def test_the_c_loader_never_sees_deep_flow_nesting():
    """PyYAML's C loader segfaults on ~30,000 nested brackets: run it in a child process
    through our loader, which must refuse the document before parsing it."""
    code = ("from jubensha.safeload import parse_document, DocumentError\n"
            "try:\n    parse_document('a: ' + '[' * 40000 + ']' * 40000)\n"
            "except DocumentError as e:\n    print('refused', e)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(
                              Path(__file__).parents[2] / "src")})
    assert done.returncode == 0 and "refused" in done.stdout


def test_a_question_given_as_a_number_is_read_as_text():
    assert parse_options(42) == ("42", {})
    assert parse_options(None) == ("", {})


def test_an_error_never_echoes_a_huge_value(tmp_path):
    path = tmp_path / "script.yaml"
    path.write_text("title: x\nid: \"" + "y" * 500_000 + "\n  bad: [", encoding="utf-8")
    with pytest.raises(ScriptError) as error:
        load_script(path)
    assert len(str(error.value)) < 600


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(list("[]{}:,-&*!|>'\"\n #a1é中\\")), max_size=300))
def test_fuzzed_yaml_ends_in_data_or_the_projects_error(text):
    try:
        parse_document(text)
    except DocumentError:
        pass


@settings(max_examples=100, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=30))
def test_fuzzed_script_data_loads_or_fails_with_a_script_error(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "script.json"
    path.write_text(json.dumps({"id": "x", "title": "t", "language": "en",
                                "characters": data}), encoding="utf-8")
    try:
        load_script(path)
    except ScriptError:
        pass
