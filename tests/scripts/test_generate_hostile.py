"""``scripts generate`` against what a stranger's folder or server may hold: ``--overwrite``
empties only a folder the command wrote (a file named ``generated.yaml`` proves nothing)
and never follows an ``--out`` that is a link; ``--model`` against a server whose reply is
nested past the JSON parser's depth ends cleanly, the stories kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.llm import registry
from jubensha.scripts.generate.batch import MANIFEST
from tests.llm.fake_server import FakeOpenAIServer, Reply

runner = CliRunner()


def generate(*args: object) -> tuple[int, str]:
    result = runner.invoke(app, ["scripts", "generate", *map(str, args)])
    return result.exit_code, result.output + result.stderr


def test_overwrite_refuses_a_folder_that_only_holds_a_file_named_like_the_manifest(
        tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / MANIFEST).write_text("scripts: []\n", encoding="utf-8")
    (folder / "thesis.tex").write_text("years of work", encoding="utf-8")
    (folder / "photos").mkdir()
    (folder / "photos" / "a.jpg").write_bytes(b"jpg")
    code, output = generate("--out", folder, "--overwrite")
    assert code == 1 and "is not a script it lists" in output, output
    assert (folder / "thesis.tex").read_text(encoding="utf-8") == "years of work"
    assert (folder / "photos" / "a.jpg").exists()


def test_overwrite_refuses_a_listed_folder_holding_other_files(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    assert generate("--out", out)[0] == 0
    [script] = [p for p in out.iterdir() if p.is_dir()]
    (script / "notes.txt").write_text("mine", encoding="utf-8")
    code, output = generate("--out", out, "--overwrite")
    assert code == 1 and "notes.txt is not a script it wrote" in output, output
    assert (script / "notes.txt").exists()
    (script / "notes.txt").unlink()
    assert generate("--out", out, "--overwrite", "--seed", "3")[0] == 0


def test_overwrite_never_follows_an_out_link(tmp_path: Path) -> None:
    real = tmp_path / "gen"
    assert generate("--out", real)[0] == 0
    link = tmp_path / "link"
    link.symlink_to(real)
    before = sorted(p.name for p in real.iterdir())
    code, output = generate("--out", link, "--overwrite", "--seed", "4")
    assert code == 1 and "a symbolic link" in output, output
    assert sorted(p.name for p in real.iterdir()) == before


def test_overwrite_refuses_a_manifest_that_is_a_link(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    assert generate("--out", out)[0] == 0
    elsewhere = tmp_path / "manifest.yaml"
    (out / MANIFEST).rename(elsewhere)
    (out / MANIFEST).symlink_to(elsewhere)
    code, output = generate("--out", out, "--overwrite")
    assert code == 1 and MANIFEST in output, output


def test_a_reply_nested_too_deeply_ends_cleanly(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The reply ended the command in a ``RecursionError`` traceback."""
    monkeypatch.setattr(registry, "ModelOptions", Quick)
    nested = Reply(raw=b'{"a":' * 60_000 + b"1" + b"}" * 60_000, stream=False)
    with FakeOpenAIServer(lambda _: nested) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        result = runner.invoke(app, ["scripts", "generate", "--players", "3", "--model",
                                     "openai:m", "--out", str(tmp_path / "gen")])
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    assert result.exit_code == 0, result.output
    assert "kept the template's" in result.output and "the model failed" in result.output
    assert len(server.requests) == 3


class Quick(registry.ModelOptions):
    """No retries: the server's reply is the same every time."""

    max_retries: int = 0
