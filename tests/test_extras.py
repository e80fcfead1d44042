"""Optional extras: the core plays and scores without any of them, and a feature whose
extra is missing says in one line which command installs it. The packages of the extras
are hidden from a child process (an import finder that refuses them), as on a machine where
only ``pip install jubensha`` ran."""

from __future__ import annotations

import json
import os
import pkgutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import jubensha
from jubensha.extras import EXTRAS

ROOT = Path(__file__).parents[1]
TINY = str(ROOT / "tests" / "engine" / "tiny_script.yaml")
HIDE = '''
import sys
from importlib.abc import MetaPathFinder

class Hidden(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {hidden!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Hidden())
'''
NEEDS_AN_EXTRA = ("jubensha.web", "jubensha.runs.plots", "jubensha.runs.html",
                  "jubensha.runs.ray_executor", "jubensha.runs.process_executor",
                  "jubensha.eval.inspect_task")
"""Modules that are an extra's feature through and through."""


def run(code: str, *args: str, hidden: set[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-c", HIDE.format(hidden=hidden) + code, *args],
                          env=env, cwd=cwd, capture_output=True, text=True, timeout=300,
                          check=False)


CLI = "from jubensha.cli import app\napp()\n"


def test_every_extra_named_in_the_code_is_declared() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"]["optional-dependencies"]
    assert {extra for extra, _ in EXTRAS.values()} <= set(declared)
    assert {"local", "web", "ocr", "plots", "stats", "ratings", "player-logs", "ray"} \
        <= set(declared)
    everything = " ".join(declared["all"])
    for extra in ("local", "web", "ocr", "plots", "stats", "ratings", "player-logs"):
        assert extra in everything
    assert "jubensha[all]" in declared["test"] and "jubensha[local]" in declared["local-qwen"]


def test_the_core_imports_without_any_extra(tmp_path: Path) -> None:
    modules = sorted(name for _, name, _ in pkgutil.walk_packages(jubensha.__path__,
                                                                  "jubensha.")
                     if not name.startswith(NEEDS_AN_EXTRA))
    code = "import importlib\nfor name in {modules!r}:\n    importlib.import_module(name)\n"
    done = run(code.format(modules=modules), hidden=set(EXTRAS), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]


def test_the_core_plays_and_scores_a_game_without_any_extra(tmp_path: Path) -> None:
    played = run(CLI, "play", "lighthouse-keeper", "--model", "scripted", "--out",
                 str(tmp_path / "run"), hidden=set(EXTRAS), cwd=tmp_path)
    assert played.returncode == 0, played.stderr[-3000:]
    scored = run(CLI, "eval", "all", str(tmp_path / "run"), "--format", "json",
                 hidden=set(EXTRAS), cwd=tmp_path)
    assert scored.returncode == 0, scored.stderr[-3000:]
    statuses = {row["metric"]: row["status"]
                for row in json.loads(scored.stdout)["summary"]["statuses"]}
    assert statuses["culprit-rank"] == statuses["similarity"] == "scored"


def test_serve_without_the_web_extra_says_how_to_install_it(tmp_path: Path) -> None:
    done = run(CLI, "serve", "--port", "0", hidden={"fastapi", "uvicorn", "starlette"},
               cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == ("error: jubensha serve needs fastapi, which is not "
                                   "installed: pip install 'jubensha[web]'")


@pytest.mark.parametrize(("command", "hidden", "extra"), [
    (["play", TINY, "--model", "local", "--embedder", "none", "--out", "run"], "xllamacpp",
     "local"),
])
def test_a_model_whose_extra_is_missing_stops_the_game_in_one_line(
        tmp_path: Path, command: list[str], hidden: str, extra: str) -> None:
    done = run(CLI, *command, hidden={hidden}, cwd=tmp_path)
    assert done.returncode == 3, done.stderr[-2000:]
    assert f"pip install 'jubensha[{extra}]'" in done.stderr
    assert "Traceback" not in done.stderr
