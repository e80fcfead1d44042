"""A package adds a stage kind, a kind of decision and a preset as docs/procedures.md says:
it declares its module (and a function) in the ``jubensha.stages`` entry-point group, and
``jubensha play`` then knows them by name without being told to import anything. Its new
kind of move is asked of agents that were never written for it: each answers with the
kind's default (built from its own vote); tests/engine/test_decision_kinds.py tries the
rest of a kind's contract."""

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

from pydantic import Field

from jubensha.engine import (
    BaseAction,
    BaseDecision,
    CastVote,
    DecisionKind,
    Speak,
    Speech,
    Spoke,
    StageSpec,
    Table,
    check_speech,
    register_decision,
    register_stage,
)
from jubensha.engine.procedure import register_preset


class Wager(BaseDecision):
    """Name the seat you suspect among ``candidates``, and how sure you are."""

    type: Literal["wager"] = "wager"
    candidates: list[str]


class Stake(BaseAction):
    type: Literal["stake"] = "stake"
    target: str | None = None
    confidence: int = Field(0, ge=0, le=100)


async def wager_by_vote(agent, decision, seen):
    """An agent written before wagers: its own vote, staked at 50."""
    vote = await agent.decide(CastVote(candidates=decision.candidates, stage=decision.stage))
    return Stake(target=vote.target, confidence=50)


register_decision(DecisionKind("wager", Wager, (Stake,), default=wager_by_vote,
                               fallback=lambda decision: Stake(target=None, confidence=0)))


class WagerSpec(StageSpec):
    kind: Literal["wagers"] = "wagers"


@register_stage(WagerSpec)
async def run_wagers(spec: WagerSpec, table: Table) -> None:
    stakes = table.state.extra.setdefault("wagers", {})
    for seat in table.seats:
        action = await table.ask(seat, Wager(candidates=table.others(seat)))
        stakes[seat] = action.model_dump(mode="json")


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
  - {kind: wagers}
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
    seats = json.loads((tmp_path / "run" / "meta.json").read_text(encoding="utf-8"))["seats"]
    assert sorted(last_words) == sorted(seats)
    wagers = json.loads((tmp_path / "run" / "result.json").read_text(encoding="utf-8"))[
        "extra"]["wagers"]
    assert sorted(wagers) == sorted(seats)
    for seat, stake in wagers.items():  # the naive agent knows no wager: its vote, at 50
        assert stake["type"] == "stake" and stake["confidence"] == 50
        assert stake["target"] in set(seats) - {seat}
    assert not [e for e in events if e["type"] == "failure" and e["purpose"] == "wager"]


def test_without_the_plug_in_the_preset_is_unknown(tmp_path: Path) -> None:
    done = _play(tmp_path)
    assert done.returncode != 0
    assert "no preset or file of that name" in done.stdout + done.stderr
    assert not (tmp_path / "run").exists()
