"""Every procedure plays every act: each act's public text and sheets, its clue cards and
the stages the preset's paper gives an act, before anyone is asked who killed whom. The
engine holds the rule itself (a vote asked before the last act stops the game), and a
procedure that cannot play every act refuses the script before the game starts, in one line.

Checked over every preset × every multi-act script the project can load: the bundled
ones, a multi-act script imported from a MIRAGE-shaped release written here, and the
MIRAGE release's staged scripts when ``../shared/datasets`` is present."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Literal

import pytest
from engine_helpers import TableAgent, one_act, table_game, tiny
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.engine.acts import ActNotPlayed, playable_acts
from jubensha.engine.events import (
    Accused,
    ActStarted,
    ClueRevealed,
    Event,
    StageStarted,
    VoteCast,
)
from jubensha.engine.game import Game
from jubensha.engine.procedure import ProcedureError, find_procedure, parse_procedure, presets
from jubensha.engine.registry import StageSpec, register_stage
from jubensha.engine.stages import collect_ballots
from jubensha.engine.table import Table
from jubensha.scripts import Script, bundled_scripts, load_script
from jubensha.scripts.importers import discover, import_script

PRESETS = ["demo", "player", "thinkthrice", "whodunit", "mirage"]


def part(script: str) -> dict[str, str]:
    return {"Story": "You live at the inn.", "Script": script, "Relationship": "",
            "Performance": "Calm.", "Purpose": "Find the killer.", "Ability": ""}


def staged_release(root: Path) -> Path:
    """A three-stage script in the MIRAGE release's shape, each stage with its own texts and
    clues (some at places to search, some handed out)."""
    folder = root / "En" / "The Quiet Inn"
    folder.mkdir(parents=True)
    cast = ("Innkeeper Rao", "Cook Mei", "Porter Han")
    script = {f"Stage {n}": {name: part(f"In stage {n}, {name} remembers clue {n}.")
                             for name in cast} for n in (1, 2, 3)}
    clues = {f"Stage {n}": {"Cellar": [f"A cellar note of stage {n}."],
                            "Public Clue 1": [f"A public notice of stage {n}."]}
             for n in (1, 2, 3)}
    (folder / "script.json").write_text(json.dumps(script), encoding="utf-8")
    (folder / "clues.json").write_text(json.dumps(clues), encoding="utf-8")
    truth = ("Merchant Lu was found dead in the cellar. The real murderer of Merchant Lu is "
             "【Cook Mei】, who struck him with a ladle.")
    (root / "En" / "Truth.json").write_text(json.dumps({"The Quiet Inn": truth}),
                                             encoding="utf-8")
    return folder


def multi_act_scripts(tmp: Path) -> list[Script]:
    """Every multi-act script the project can load without the datasets."""
    bundled = [load_script(path) for path in bundled_scripts().values()]
    imported = import_script("mirage", staged_release(tmp))
    found = [s for s in [*bundled, tiny(), imported] if len(playable_acts(s)) > 1]
    assert {"halvard-observatory", "tiny-manor", imported.id} <= {s.id for s in found}
    return found


def play(script: Script, preset: str) -> tuple[Game, dict[str, TableAgent]]:
    game, agents = table_game(script, find_procedure(preset).with_options(rounds=1), seed=3)
    asyncio.run(game.run())
    return game, agents


def assert_every_act_played_before_the_vote(script: Script, events: list[Event]) -> None:
    acts = playable_acts(script)
    started = {e.act: e.index for e in events if isinstance(e, ActStarted)}
    later = [n for n in acts if n > 1]
    assert set(later) <= set(started), f"acts {later} started: {sorted(started)}"
    sheets = [e for e in events if isinstance(e, ActStarted) and e.sheet]
    assert all(isinstance(e.audience, list) and len(e.audience) == 1 for e in sheets)
    for character in script.characters:
        got = [e.sheet for e in sheets if e.audience == [character.name]]
        assert got == character.acts, character.name
    dealt = {e.clue_id for e in events if isinstance(e, ClueRevealed)}
    handed = {c.id for c in script.clues if not c.location}
    assert handed <= dealt, f"clue cards never dealt: {sorted(handed - dealt)}"
    last = started.get(acts[-1], 0)
    culprit = [e for e in events if isinstance(e, VoteCast | Accused)]
    assert culprit and all(e.index > last for e in culprit)


@pytest.mark.parametrize("preset", PRESETS)
def test_every_preset_plays_every_act_of_every_multi_act_script(preset: str,
                                                                tmp_path: Path) -> None:
    for script in multi_act_scripts(tmp_path):
        game, _ = play(script, preset)
        assert_every_act_played_before_the_vote(script, game.table.events)
        assert game.table.state.act == playable_acts(script)[-1]


@pytest.mark.parametrize("preset", PRESETS)
def test_every_preset_plays_every_stage_of_the_mirage_releases_staged_scripts(
        preset: str, datasets: Path) -> None:
    staged = [s for s in (import_script("mirage", folder)
                          for folder in discover("mirage", datasets / "mirage"))
              if len(playable_acts(s)) > 1]
    assert staged, "the MIRAGE release has staged scripts"
    for script in staged:
        game, _ = play(script, preset)
        assert_every_act_played_before_the_vote(script, game.table.events)


def test_the_second_victim_is_voted_on_only_after_the_act_that_finds_him() -> None:
    script = load_script(bundled_scripts()["halvard-observatory"])
    for preset in ("demo", "player", "whodunit"):
        game, agents = play(script, preset)
        events = game.table.events
        act2 = next(e.index for e in events if isinstance(e, ActStarted) and e.act == 2)
        quill = [e for e in events if isinstance(e, VoteCast) and e.victim == "Henry Quill"]
        assert quill and all(e.index > act2 for e in quill)
        clara = agents["Clara Vale"].observed
        assert any(isinstance(e, ActStarted) and e.act == 2 and e.sheet for e in clara)


def test_questioning_in_a_later_act_carries_the_act_in_its_stage() -> None:
    game, _ = play(tiny(), "player")
    stages = [e.stage for e in game.table.events if isinstance(e, StageStarted)]
    assert stages == ["distribution", "introduction", "clues", "questioning", "clues-act2",
                      "questioning-act2", "vote", "reveal"]
    titles = {e.stage: e.title for e in game.table.events if isinstance(e, StageStarted)}
    assert titles["questioning-act2"] == titles["questioning"] == "Questioning"


def test_a_one_act_script_plays_each_block_once() -> None:
    game, _ = play(one_act(), "thinkthrice")
    stages = [e.stage for e in game.table.events if isinstance(e, StageStarted)]
    assert stages == ["distribution", "self_introduction", "initial_questioning",
                      "open_questioning", "clue_cards", "open_questioning-2", "vote", "reveal"]


def test_acts_a_release_counts_but_gives_no_content_are_not_played() -> None:
    script = one_act().model_copy(update={"acts": [*one_act().acts, *(
        tiny().acts[0].model_copy(update={"number": n, "public_text": ""}) for n in (2, 3))]})
    assert playable_acts(script) == [1]
    old = parse_procedure({"name": "short", "stages": [{"kind": "vote"}]}, "short")
    game, _ = table_game(script, old)
    asyncio.run(game.run())
    assert not any(isinstance(e, ActStarted) for e in game.table.events)


# -- refusing a procedure that cannot play every act ---------------------------------------
ONE_ACT_ONLY = {"name": "old-demo", "stages": [
    {"kind": "introduction"}, {"kind": "questioning"}, {"kind": "clues"}, {"kind": "vote"},
    {"kind": "reveal"}]}


def test_a_procedure_that_never_plays_act_two_refuses_the_script_in_one_line() -> None:
    procedure = parse_procedure(ONE_ACT_ONLY, "old.yaml")
    with pytest.raises(ProcedureError) as refused:
        table_game(load_script(bundled_scripts()["halvard-observatory"]), procedure)
    message = str(refused.value)
    assert "\n" not in message
    assert "'halvard-observatory' is played in 2 acts (1, 2)" in message
    assert "never plays act 2" in message
    assert f"presets that play every act: {', '.join(presets())}" in message


def test_a_vote_before_the_last_act_is_refused() -> None:
    early = parse_procedure({"name": "early", "stages": [
        {"kind": "act", "act": 1}, {"kind": "vote"}, {"kind": "act"}, {"kind": "reveal"}]},
        "early.yaml")
    with pytest.raises(ProcedureError, match="votes before act 2 is played"):
        table_game(tiny(), early)
    table_game(one_act(), early)  # one act: nothing to refuse


def test_a_vote_inside_the_acts_block_is_a_vote_before_the_last_act() -> None:
    every_act = parse_procedure({"name": "each", "stages": [
        {"kind": "acts", "stages": [{"kind": "questioning"}, {"kind": "vote"}]}]}, "each.yaml")
    with pytest.raises(ProcedureError, match="votes before act 2 is played"):
        table_game(tiny(), every_act)


def test_play_refuses_before_the_game_and_leaves_no_run_folder(tmp_path: Path) -> None:
    path = tmp_path / "old.yaml"
    path.write_text(json.dumps(ONE_ACT_ONLY), encoding="utf-8")
    result = CliRunner().invoke(app, ["play", "halvard-observatory", "--model", "scripted",
                                      "-p", str(path), "--out", str(tmp_path / "run")])
    assert result.exit_code == 2
    assert "never plays act 2" in result.output and "Winner" not in result.output
    assert not (tmp_path / "run").exists()


# -- the engine's own rule -----------------------------------------------------------------
class SneakyVoteSpec(StageSpec):
    """A stage kind that votes but does not say so (``decides`` left False)."""

    kind: Literal["test_sneaky_vote"] = "test_sneaky_vote"


@register_stage(SneakyVoteSpec)
async def run_sneaky_vote(spec: SneakyVoteSpec, table: Table) -> None:
    await collect_ballots(table, None, None)


def test_the_engine_stops_a_vote_asked_before_the_last_act() -> None:
    sneaky = parse_procedure({"name": "sneaky", "stages": [
        {"kind": "act", "act": 1}, {"kind": "test_sneaky_vote"}, {"kind": "act"}]}, "sneaky")
    game, agents = table_game(tiny(), sneaky)
    with pytest.raises(ActNotPlayed, match="in act 1, but 'tiny-manor' has 2 acts"):
        asyncio.run(game.run())
    assert not any(d.type == "vote" for agent in agents.values() for d in agent.decisions)


def test_the_same_stage_kind_votes_once_every_act_is_played() -> None:
    late = parse_procedure({"name": "late", "stages": [
        {"kind": "act", "act": 1}, {"kind": "act"}, {"kind": "test_sneaky_vote"}]}, "late")
    game, _ = table_game(tiny(), late)
    asyncio.run(game.run())
    assert len([e for e in game.table.events if isinstance(e, VoteCast)]) == 4


# -- the acts block in a procedure file ------------------------------------------------------
@pytest.mark.parametrize(("stages", "field"), [
    ([{"kind": "acts", "stages": [{"kind": "questioning", "rounds": 0}]}],
     "stages[0].stages[0].rounds"),
    ([{"kind": "acts", "stages": [{"kind": "nope"}]}], "stages[0].stages[0].kind"),
    ([{"kind": "acts", "stages": []}], "stages[0].stages"),
    ([{"kind": "acts", "stages": [{"kind": "acts", "stages": [{"kind": "clues"}]}]}],
     "stages[0].stages"),
])
def test_errors_inside_an_acts_block_name_their_field(stages: list[Any], field: str) -> None:
    with pytest.raises(ProcedureError) as refused:
        parse_procedure({"name": "p", "stages": stages}, "mine.yaml")
    assert f"mine.yaml: {field}: " in str(refused.value)


def test_rounds_and_questions_reach_the_stages_of_an_acts_block() -> None:
    block = find_procedure("player").with_options(rounds=2, questions=3).stages[2]
    questioning = block.substages()[1]
    assert (questioning.rounds, questioning.questions) == (2, 3)
