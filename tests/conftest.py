"""Shared fixtures: where the real datasets are, skipping cleanly when they are absent; and
``--long`` (or ``JUBENSHA_LONG_TESTS=1``), which makes the fuzzing, fault and crash suites
run more iterations."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ROOT.parent / "shared" / "datasets"
SESSION_CONFIG = pytest.StashKey[str]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--long", action="store_true",
                     help="More iterations of the fuzzing, fault-injection and crash suites "
                          "(same as JUBENSHA_LONG_TESTS=1).")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--long"):
        os.environ["JUBENSHA_LONG_TESTS"] = "1"
    # module- and session-scoped fixtures run before the per-test settings folder below:
    # they get one of the session's, so no test reads or writes the user's (batch.key)
    config.stash[SESSION_CONFIG] = os.environ["JUBENSHA_CONFIG"] = tempfile.mkdtemp(
        prefix="jubensha-config-")


def pytest_unconfigure(config: pytest.Config) -> None:
    if SESSION_CONFIG in config.stash:
        shutil.rmtree(config.stash[SESSION_CONFIG], ignore_errors=True)


@pytest.fixture(scope="session")
def datasets() -> Path:
    """The ../shared/datasets folder; tests that use it skip when it is absent."""
    if not DATASETS.is_dir():
        pytest.skip("../shared/datasets is not present")
    return DATASETS


@pytest.fixture(autouse=True)
def _own_cache_dir(tmp_path_factory: pytest.TempPathFactory,
                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Measured model speeds and joined models go to a folder of the test's, never the
    user's cache; the user's settings (which server gets which key) are never read."""
    monkeypatch.setenv("JUBENSHA_CACHE", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setenv("JUBENSHA_CONFIG", str(tmp_path_factory.mktemp("config")))
