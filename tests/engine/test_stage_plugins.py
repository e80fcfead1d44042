"""A package adds a stage kind and a preset as docs/procedures.md says: it declares its module
(and a function) in the ``jubensha.stages`` entry-point group, and ``jubensha play`` then
knows both by name without being told to import anything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# The stage of docs/procedures.md ("Adding a stage kind"), as a package would ship it.
PLUGIN = '''
from pathlib import Path
from typing import Literal

from jubensha.engine.decisions import Speak, Speech
from jubensha.engine.events import Spoke
from jubensha.engine.procedure import register_preset
from jubensha.engine.registry import StageSpec, register_stage
from jubensha.engine.stages import check_speech
from jubensha.engine.table import Table


class LastWordsSpec(StageSpec):
    kind: Literal["last_words"] = "last_words"
    only_accused: bool = True


@register_stage(LastWordsSpec)
async def run_last_words(spec: LastWordsSpec, table: Table) -> None:
    accused = {a.accused for a in table.state.accusations}
    for seat in table.seats:
        if spec.only_accused and seat not in accused:
            continue
        fallback = table.host_text("fallback_speech")
        action = await table.ask(seat, Speak(kind="statement", prompt="Any last words?"),
                                 fallback=lambda: Speech(text=fallback),
                                 check=check_speech(fallback))
        await table.emit(Spoke(speaker=seat, kind="statement", text=action.text))


def register_presets() -> None:
    register_preset("last-words", Path(__file__).with_name("last-words.yaml"))
'''

PRESET = """name: last-words
stages:
  - {kind: act, id: distribution, act: 1}
  - {kind: introduction}
  - {kind: last_words, only_accused: false}
  - {kind: vote}
  - {kind: reveal}
"""

ENTRY_POINTS = """[jubensha.stages]
last_words = last_words_plugin
presets = last_words_plugin:register_presets
"""


def _install(site: Path) -> None:
    """The plug-in as pip leaves it: a module and its distribution's metadata."""
    (site / "last_words_plugin.py").write_text(PLUGIN, encoding="utf-8")
    (site / "last-words.yaml").write_text(PRESET, encoding="utf-8")
    info = site / "last_words_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: last-words-plugin\n"
                                   "Version: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(ENTRY_POINTS, encoding="utf-8")


def _play(tmp_path: Path, *paths: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [*map(str, paths), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run(
        [sys.executable, "-c", "from jubensha.cli import app; app()", "play",
         "lighthouse-keeper", "--procedure", "last-words", "--model", "scripted",
         "--out", str(tmp_path / "run")],
        capture_output=True, text=True, check=False, timeout=300, env=env, cwd=tmp_path)


def test_an_installed_plug_in_adds_a_stage_kind_and_a_preset_by_name(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    _install(site)
    done = _play(tmp_path, site)
    assert done.returncode == 0, done.stderr[-2000:]
    events = [json.loads(line) for line in
              (tmp_path / "run" / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    last_words = [e["speaker"] for e in events
                  if e["stage"] == "last_words" and e["type"] == "spoke"]
    assert sorted(last_words) == sorted(json.loads(
        (tmp_path / "run" / "meta.json").read_text(encoding="utf-8"))["seats"])


def test_without_the_plug_in_the_preset_is_unknown(tmp_path: Path) -> None:
    done = _play(tmp_path)
    assert done.returncode != 0
    assert "no preset or file of that name" in done.stdout + done.stderr
    assert not (tmp_path / "run").exists()
