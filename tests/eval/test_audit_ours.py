"""Our own figure: the isolation audit finds no leak in any seat call of ours, in-game or
after the game, for every architecture on the procedure it was made for, on bundled and
imported scripts (WellPlay, MIRAGE, WhodunitBench, Conan), and at mixed tables.

The CI matrix is representative (each architecture once, scripts rotated); set
``JUBENSHA_AUDIT_FULL=N`` for every architecture on every procedure on the bundled
mysteries and N scripts per imported format and language (docs/isolation.md gives the
figures of N=1)."""

from __future__ import annotations

import asyncio
import os
from itertools import cycle
from pathlib import Path

import pytest

from jubensha.engine.procedure import find_procedure
from jubensha.eval.audit import AuditOptions
from jubensha.eval.judge import open_session
from jubensha.eval.registry import MetricContext, get_metric
from jubensha.eval.report import markdown_table
from jubensha.llm.fake import ScriptedModel
from jubensha.runlog.folder import read_run
from jubensha.runs.audit_command import audit_paths
from jubensha.runs.play import PlayConfig, plan_seats, play_game
from jubensha.scripts import Script, find_script
from jubensha.scripts.importers import discover, import_script

ARCHITECTURES = {"thinkthrice:mr+sr+sv1": "thinkthrice", "player": "player",
                 "werewolf": "demo", "ocot": "demo", "extractive": "demo", "naive": "demo",
                 "mirage": "mirage", "whodunit": "whodunit"}
"""Every architecture and the procedure it was made for."""
PROCEDURES = ["demo", "thinkthrice", "player", "mirage", "whodunit"]
BUNDLED = ["lighthouse-keeper", "tingsong-tea-estate", "halvard-observatory"]
FORMATS = {"wellplay": "wellplay", "mirage": "mirage", "whodunitbench": "whodunitbench",
           "conan": "conan"}
"""Importer -> dataset folder."""
FULL = int(os.environ.get("JUBENSHA_AUDIT_FULL", "0") or 0)
"""Imported scripts per format and language in the full matrix (0: the CI matrix)."""
MIXED = ["thinkthrice:mr+sr", "player", "werewolf", "ocot", "mirage", "whodunit", "naive",
         "extractive"]


def scripts(datasets: Path | None) -> list[tuple[str, Script]]:
    """(source, script): the bundled mysteries and one script per imported format and
    language (``FULL`` of each in the full matrix)."""
    found = [(name, find_script(name)) for name in BUNDLED]
    for fmt, folder in FORMATS.items():
        root = datasets / folder if datasets else None
        if root is None or not root.is_dir():
            continue
        per_language: dict[str, int] = {}
        for path in discover(fmt, root):
            script = import_script(fmt, path)
            if per_language.get(script.language, 0) < max(FULL, 1):
                per_language[script.language] = per_language.get(script.language, 0) + 1
                found.append((str(path), script))
            if min(per_language.get(lang, 0) for lang in ("en", "zh")) >= max(FULL, 1):
                break
    return found


def play(script: Script, source: str, procedure: str, out: Path,
         architecture: str = "naive", seats: tuple[str, ...] = ()) -> Path:
    plans = plan_seats(script, architecture, "scripted", seats)
    asyncio.run(play_game(PlayConfig(script=script, procedure=find_procedure(procedure),
                                     plans=plans, seed=5, script_source=source), out,
                          models={"scripted": ScriptedModel(seed=2)}))
    return out


def answer_after_the_game(folder: Path, script: Script) -> None:
    """The seats answer the WellPlay questions after the game (dialogue access)."""
    session = open_session(folder)
    try:
        context = MetricContext(script=script, run=read_run(folder), samples=1,
                                answerer=ScriptedModel(), calls=session.calls,
                                cache=session.cache)
        asyncio.run(get_metric("wellplay").compute(context))
    finally:
        session.close()


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ours")
    datasets = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"
    chosen = scripts(datasets if datasets.is_dir() else None)
    if FULL:
        pairs = [(s, (a, p)) for s in chosen for a in ARCHITECTURES for p in PROCEDURES]
    else:  # each architecture once, and each script at least once
        games = list(ARCHITECTURES.items())
        pairs = list(zip(cycle(chosen), games, strict=False))
        pairs += [(s, games[-1]) for s in chosen[len(games):]]
    for number, ((source, script), (architecture, procedure)) in enumerate(pairs):
        play(script, source, procedure, root / f"g{number}", architecture)
    for number, (source, script) in enumerate(chosen if FULL else chosen[2::3]):
        seats = tuple(f"{name}={arch}@" for name, arch in zip(script.names, cycle(MIXED),
                                                               strict=False))
        folder = play(script, source, "mirage" if number % 2 else "whodunit",
                      root / f"mixed{number}", seats=seats)
        if script.questions.choice:
            answer_after_the_game(folder, script)
    return root


def test_no_seat_call_of_ours_holds_text_it_could_not_know(played: Path) -> None:
    report = audit_paths([played], AuditOptions())
    assert report.checked > 0 and report.unordered == 0
    purposes = {row.purpose for row in report.rows}
    if list(played.glob("*/eval/calls.jsonl")):  # the seats' answers after the game too
        assert any(p.startswith("wellplay.answer") for p in purposes)
    assert report.flagged == 0, [(c.run, c.purpose, c.leak) for c in report.worst]
    architectures = {row.architecture for row in report.rows}
    assert set(ARCHITECTURES) <= architectures | {"extractive"}
    if FULL:
        print("\n".join(markdown_table(t) for t in report.tables()))
