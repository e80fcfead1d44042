"""The solver agent wins every generated game, in every procedure and both languages: the
facts each proof needs reach the table in play (cards dealt or found, testimony told);
generated scripts play cleanly with the model-free agents and the scripted fake too."""

from __future__ import annotations

import asyncio

import pytest

from jubensha.agents.registry import make_agent
from jubensha.engine.events import Failure
from jubensha.engine.game import Game, GameResult, Seat
from jubensha.engine.procedure import find_procedure, presets
from jubensha.llm.fake import ScriptedModel
from jubensha.scripts import bundled_scripts, load_script
from jubensha.scripts.generate.build import Request, mystery, write
from jubensha.scripts.model import Script

LEVELS = ("easy", "medium", "hard")


def play(script: Script, preset: str, architecture: str, seed: int = 0,
         model: bool = False) -> tuple[Game, GameResult]:
    seats = {name: Seat(make_agent(architecture), model=ScriptedModel(seed=1) if model else None)
             for name in script.names}
    game = Game(script, find_procedure(preset), seats, seed=seed)
    return game, asyncio.run(game.run())


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("preset", presets())
def test_the_solver_wins_every_generated_game(preset: str, lang: str) -> None:
    for seed, level in enumerate(LEVELS):
        script = write(mystery(Request(seed=seed + 40, players=4 + seed, acts=1 + seed % 2,
                                       level=level)), lang)  # type: ignore[arg-type]
        _, result = play(script, preset, "solver", seed=seed)
        assert result.winner == "civilians", (script.id, preset)
        ballots = [b for record in result.votes for voter, b in record.ballots.items()
                   if voter not in script.murderers]
        assert ballots and set(ballots) == set(script.murderers), (script.id, preset)


@pytest.mark.parametrize("architecture", ["extractive", "naive"])
@pytest.mark.parametrize("preset", presets())
def test_generated_scripts_play_every_procedure_cleanly(preset: str, architecture: str) -> None:
    for lang in ("en", "zh"):
        script = write(mystery(Request(seed=5, players=5, acts=2, level="hard")), lang)
        game, result = play(script, preset, architecture, model=architecture == "naive")
        failed = [e for e in game.table.events if isinstance(e, Failure)]
        assert failed == [] and result.votes, (lang, preset)


def test_on_a_script_in_no_fact_language_it_plays_as_the_extractive_agent() -> None:
    script = load_script(bundled_scripts()["lighthouse-keeper"])
    _, solver = play(script, "demo", "solver")
    _, extractive = play(script, "demo", "extractive")
    assert solver.votes == extractive.votes
