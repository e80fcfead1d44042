"""Attack: a shared batch folder chooses files outside itself. Its spec.yaml said
``wrappers.cache: /some/other.db`` (``runs resume`` added a ``replies`` table to an
unrelated SQLite database) and ``wrappers.prices: /etc/passwd`` (read, then a
``ValueError`` traceback). Now the spec a batch folder holds names files outside it only
when the user's own key signed it (the user ran ``runs batch``) or the user's settings list
the folder; anything else is refused in one line per path before work starts. And any spec
naming a database that is no reply cache, or a file that is no price table, is refused
before the first game."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app

runner = CliRunner()
PRICES = "gpt-4o-mini: {input_per_1m: 0.15, output_per_1m: 0.6}\n"


def as_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, who: str,
            settings: str = "") -> None:
    """Commands from now on run with ``who``'s settings folder (and so their batch.key)."""
    folder = tmp_path / f"config-{who}"
    folder.mkdir(exist_ok=True, mode=0o700)
    (folder / "settings.yaml").write_text(settings, encoding="utf-8")
    monkeypatch.setenv("JUBENSHA_CONFIG", str(folder))


def jubensha(*args: object):
    result = runner.invoke(app, [str(arg) for arg in args])
    assert "Traceback" not in result.output, result.output
    return result


def start_batch(tmp_path: Path, wrappers: str = "") -> Path:
    """A one-game batch of the bundled lighthouse-keeper, played to the end."""
    spec = tmp_path / "spec" / "experiment.yaml"
    spec.parent.mkdir(exist_ok=True)
    spec.write_text("scripts: [lighthouse-keeper]\nmodels: [scripted]\nembedder: none\n"
                    + wrappers, encoding="utf-8")
    root = tmp_path / "batch"
    result = jubensha("runs", "batch", spec, "--out", root)
    assert result.exit_code == 0, result.output
    return root


def unrelated_database(path: Path) -> bytes:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
        db.execute("INSERT INTO notes VALUES ('my own notes')")
    return path.read_bytes()


def edit_spec(root: Path, wrappers: str) -> None:
    """Add ``wrappers`` to the batch folder's spec.yaml by hand (its signature line goes)."""
    text = (root / "spec.yaml").read_text(encoding="utf-8")
    kept = [line for line in text.splitlines() if not line.startswith("# signed")]
    (root / "spec.yaml").write_text("\n".join(kept) + "\n" + wrappers, encoding="utf-8")


def test_attack_a_shared_batch_folder_naming_a_cache_and_prices_outside_it_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    as_user(tmp_path, monkeypatch, "stranger")
    root = start_batch(tmp_path)
    other = tmp_path / "other.db"
    before = unrelated_database(other)
    edit_spec(root, f"wrappers: {{cache: {other}, prices: /etc/passwd}}\n")
    games = sorted(path.name for path in root.iterdir())
    as_user(tmp_path, monkeypatch, "me")
    for command in ("resume", "reindex"):
        result = jubensha("runs", command, root)
        assert result.exit_code == 2
        lines = result.output.strip().splitlines()
        fields = [re.search(r"spec\.yaml: ([\w.]+): ", line).group(1) for line in lines]
        assert fields == ["wrappers.cache", "wrappers.prices"]
        assert all("is outside the batch folder" in line for line in lines)
        assert "root:" not in result.output
    assert other.read_bytes() == before  # no table added
    assert sorted(path.name for path in root.iterdir()) == games  # nothing played


def test_the_users_own_batch_resumes_with_its_cache_and_prices_outside_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    as_user(tmp_path, monkeypatch, "me")
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "prices.yaml").write_text(PRICES, encoding="utf-8")
    root = start_batch(tmp_path, "wrappers: {cache: ../cache/, prices: prices.yaml}\n")
    assert (tmp_path / "cache" / "replies.sqlite").is_file()
    assert jubensha("runs", "resume", root).exit_code == 0
    assert jubensha("runs", "reindex", root).exit_code == 0


def test_a_hand_edited_spec_may_name_files_outside_only_in_folders_the_settings_list(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    as_user(tmp_path, monkeypatch, "me")
    root = start_batch(tmp_path)
    shared = tmp_path / "shared"
    edit_spec(root, f"wrappers: {{cache: {shared}/replies.sqlite}}\n")
    refused = jubensha("runs", "resume", root)
    assert refused.exit_code == 2 and "wrappers.cache" in refused.output
    assert "folders:" in refused.output and not shared.exists()
    as_user(tmp_path, monkeypatch, "me", f"folders: [{shared}]\n")
    assert jubensha("runs", "resume", root).exit_code == 0


def test_a_spec_naming_a_database_that_is_no_reply_cache_or_a_file_that_is_no_price_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    as_user(tmp_path, monkeypatch, "me")
    other = tmp_path / "other.db"
    before = unrelated_database(other)
    spec = tmp_path / "experiment.yaml"
    spec.write_text(f"scripts: [lighthouse-keeper]\nmodels: [scripted]\n"
                    f"wrappers: {{cache: {other}, prices: {other}}}\n", encoding="utf-8")
    result = jubensha("runs", "batch", spec, "--out", tmp_path / "batch")
    assert result.exit_code == 2
    assert "wrappers.cache: " in result.output and "not a reply cache" in result.output
    assert "wrappers.prices: price table" in result.output
    assert other.read_bytes() == before and not (tmp_path / "batch").exists()
