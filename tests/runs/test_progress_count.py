"""The terminal's count holds: the stages a game announces are the ones the total counts
(a clue-card stage of a script with no cards is neither played nor counted), the calls
end at N/N, and a vote says how many have cast their ballot."""

from __future__ import annotations

import asyncio
import io

import pytest
from rich.console import Console

from jubensha.agents.registry import make_agent
from jubensha.engine import StageStarted
from jubensha.engine.decisions import CastVote
from jubensha.engine.game import Game, Seat
from jubensha.engine.procedure import find_procedure
from jubensha.jobs import CallBar
from jubensha.llm import ScriptedModel
from jubensha.runs.progress import Progress
from jubensha.scripts.bundled import bundled_scripts, find_script
from jubensha.scripts.model import Script


def without_clues(script: Script) -> Script:
    return script.model_copy(update={"clues": [], "id": f"{script.id}-no-clues"})


SCRIPTS = [*(find_script(name) for name in bundled_scripts()),
           without_clues(find_script("lighthouse-keeper"))]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda s: s.id)
def test_the_stage_total_is_the_stages_the_game_announces(script: Script) -> None:
    procedure = find_procedure("demo")
    bar = CallBar(Console(file=io.StringIO()), "playing")
    progress = Progress(bar, procedure.stage_count(script), script.language)
    game = Game(script, procedure, {n: Seat(make_agent("naive"), model=ScriptedModel())
                                    for n in script.names}, seed=0,
                sinks=[progress.on_event])
    asyncio.run(game.run())
    started = [e for e in game.table.events if isinstance(e, StageStarted)]
    assert len(started) == procedure.stage_count(script)
    assert progress.stage == progress.stages == len(started)


def test_a_script_without_clue_cards_counts_no_clue_stage() -> None:
    procedure = find_procedure("demo")
    script = find_script("lighthouse-keeper")
    kinds = [s.kind for s in procedure.announced_stages(without_clues(script))]
    assert "clues" in [s.kind for s in procedure.announced_stages(script)]
    assert "clues" not in kinds


def test_a_vote_says_how_many_have_cast() -> None:
    bar = CallBar(Console(file=io.StringIO()), "playing")
    progress = Progress(bar, 7, "en")
    ballot = CastVote(candidates=["A", "B", "C", "D", "E"])
    done = [progress.on_ask(name, ballot) for name in "ABCDE"]
    done[0]()
    done[1]()
    note = bar.progress.tasks[0].fields["note"]
    assert "3 players (2/5 done)" in note, note
