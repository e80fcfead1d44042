"""The key folder and file (``serve.key``, ``batch.key``) are checked before a byte is read:
attacks on the state folder (a sparse multi-GB key, a symbolic link, a folder others may
write, a key others may read, a file where the folder should be, a FIFO as the key) are
each one clear error naming the path and the fix; what a key signs passes for nothing else."""

from __future__ import annotations

import os
import resource
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.signing import KEY_BYTES, KeyFileError, load_key, sign, verify


def test_a_key_is_made_private_on_first_use_and_read_again(tmp_path: Path) -> None:
    folder = tmp_path / "state" / "jubensha"
    key = load_key(folder, "serve.key")
    assert len(key) == KEY_BYTES and load_key(folder, "serve.key") == key
    assert folder.stat().st_mode & 0o777 == 0o700
    assert (folder / "serve.key").stat().st_mode & 0o777 == 0o600


def test_a_sparse_multi_gigabyte_key_is_refused_before_it_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    folder.mkdir(mode=0o700)
    with (folder / "serve.key").open("wb") as out:
        out.truncate(2_000_000_000)
    (folder / "serve.key").chmod(0o600)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    with pytest.raises(KeyFileError, match=r"holds 2,000,000,000 bytes, not a key of 32"):
        load_key(folder, "serve.key")
    assert time.monotonic() - started < 1
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000  # kB


def test_a_symlinked_state_folder_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "state").symlink_to(real)
    with pytest.raises(KeyFileError, match=r"state: a symbolic link; name the folder itself"):
        load_key(tmp_path / "state", "serve.key")
    assert not (real / "serve.key").exists()


def test_a_state_folder_others_may_write_is_refused_with_the_fix(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    folder.mkdir()
    folder.chmod(0o777)
    with pytest.raises(KeyFileError, match=r"others may write to it \(mode 777\).*chmod 700"):
        load_key(folder, "serve.key")
    assert not (folder / "serve.key").exists()


def test_a_key_others_may_read_is_refused_with_the_fix(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    load_key(folder, "serve.key")
    (folder / "serve.key").chmod(0o644)
    with pytest.raises(KeyFileError, match=r"others may read it \(mode 644\).*chmod 600"):
        load_key(folder, "serve.key")


def test_a_state_path_that_is_a_file_or_a_key_that_is_a_fifo_says_so(tmp_path: Path) -> None:
    (tmp_path / "state").write_text("not a folder")
    with pytest.raises(KeyFileError, match=r"state: not a folder; name a folder"):
        load_key(tmp_path / "state", "serve.key")
    folder = tmp_path / "fifo-state"
    folder.mkdir(mode=0o700)
    os.mkfifo(folder / "serve.key", 0o600)
    with pytest.raises(KeyFileError, match=r"serve.key: not a regular file"):
        load_key(folder, "serve.key")


def test_serve_refuses_a_bad_state_folder_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "state").write_text("not a folder")
    result = CliRunner().invoke(app, ["serve", "--runs", str(tmp_path / "runs"),
                                      "--state", str(tmp_path / "state")])
    assert result.exit_code == 2
    assert result.output.strip().startswith("error: ") and "not a folder" in result.output
    assert "Traceback" not in result.output and "File exists" not in result.output


def test_a_signature_holds_for_its_key_data_and_purpose_only() -> None:
    key, other = b"k" * KEY_BYTES, b"o" * KEY_BYTES
    signature = sign(key, "table", b"data")
    assert verify(key, "table", b"data", signature)
    assert not verify(other, "table", b"data", signature)
    assert not verify(key, "batch spec", b"data", signature)
    assert not verify(key, "table", b"date", signature)
    assert not verify(key, "table", b"data", "\ud800")
