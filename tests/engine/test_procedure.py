"""Procedures are data: presets, YAML files, clear errors, options, and new stage kinds."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Literal

import pytest
from engine_helpers import one_act, table_game

from jubensha.engine.events import HostSpoke
from jubensha.engine.procedure import (
    Procedure,
    ProcedureError,
    find_procedure,
    load_procedure,
    parse_procedure,
    presets,
)
from jubensha.engine.registry import StageSpec, UnknownName, register_stage, stage_kind
from jubensha.engine.table import Table


def test_presets_are_listed() -> None:
    assert {"demo", "player", "thinkthrice"} <= set(presets())


def flat(procedure: Procedure) -> list[StageSpec]:
    """The stages in the order they are listed, those inside an ``acts`` block included."""
    return [spec for top in procedure.stages for spec in [top, *top.substages()]]


def test_thinkthrice_follows_the_papers_eight_stages() -> None:
    procedure = find_procedure("thinkthrice")
    core = [(s.kind, s.id) for s in flat(procedure) if s.kind != "acts"]
    assert core == [("act", "distribution"), ("introduction", "self_introduction"),
                    ("questioning", "initial_questioning"),
                    ("questioning", "open_questioning"), ("clues", "clue_cards"),
                    ("questioning", "open_questioning"), ("vote", ""), ("reveal", "")]
    rounds = [getattr(s, "rounds", None) for s in flat(procedure) if s.kind == "questioning"]
    assert rounds == [1, 2, 3]
    assert procedure.stages[2].targets == "each"
    assert procedure.voting.method == "plurality" and procedure.voting.self_vote == "allowed"
    assert procedure.stage_ids() == [
        "distribution", "self_introduction", "initial_questioning", "open_questioning",
        "acts", "clue_cards", "open_questioning-2", "vote", "reveal"]


def test_thinkthrice_repeats_its_clue_cards_and_three_rounds_in_each_later_act() -> None:
    block = find_procedure("thinkthrice").stages[4]
    assert block.kind == "acts"
    assert [(s.kind, getattr(s, "rounds", None)) for s in block.substages()] == [
        ("clues", None), ("questioning", 3)]


def test_player_preset_uses_three_rounds_one_question_and_the_half_vote_rule() -> None:
    procedure = find_procedure("player")
    questioning = [s for s in flat(procedure) if s.kind == "questioning"]
    assert [(s.rounds, s.questions) for s in questioning] == [(3, 1)]
    voting = procedure.voting
    assert (voting.method, voting.threshold, voting.self_vote) == (
        "threshold", 0.5, "not_murderers")
    assert [s.kind for s in procedure.stages][-2:] == ["vote", "reveal"]


def test_player_plays_each_act_as_more_plot_then_questioning() -> None:
    kinds = [(s.kind, [c.kind for c in s.substages()]) for s in find_procedure("player").stages]
    assert kinds == [("act", []), ("introduction", []), ("acts", ["clues", "questioning"]),
                     ("vote", []), ("reveal", [])]


def test_demo_is_short() -> None:
    kinds = [s.kind for s in flat(find_procedure("demo"))]
    assert kinds == ["act", "introduction", "acts", "clues", "questioning", "statement",
                     "vote", "reveal"]


def test_rounds_and_questions_apply_to_open_rounds_only() -> None:
    procedure = find_procedure("thinkthrice").with_options(rounds=4, questions=2)
    questioning = [s for s in flat(procedure) if s.kind == "questioning"]
    assert [(s.targets, s.rounds, s.questions) for s in questioning] == [
        ("each", 1, 2), ("choose", 4, 2), ("choose", 4, 2)]


def test_a_yaml_procedure_file_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(
        "name: mine\nvoting: {ties: revote}\nstages:\n"
        "  - kind: introduction\n    follow_ups: true\n"
        "  - {kind: statement, speech: reasoning}\n  - {kind: accusation}\n"
        "  - {kind: vote}\n", encoding="utf-8")
    procedure = find_procedure(str(path))
    assert [s.kind for s in procedure.stages] == ["introduction", "statement", "accusation",
                                                  "vote"]
    assert procedure.stages[0].follow_ups and procedure.voting.ties == "revote"
    again = Procedure.model_validate(procedure.model_dump(mode="json"))
    assert again == procedure


@pytest.mark.parametrize(("text", "field", "words"), [
    ("name: x\nstages:\n  - {kind: dance}\n", "stages[0].kind", "unknown stage kind 'dance'"),
    ("name: x\nstages:\n  - {kind: questioning, rounds: 0}\n", "stages[0].rounds",
     "greater than or equal to 1"),
    ("name: x\nstages:\n  - {kind: vote, colour: red}\n", "stages[0].colour", "unknown field"),
    ("name: x\nstages: []\n", "stages", "non-empty"),
    ("stages:\n  - {kind: vote}\n", "name", "required"),
    ("name: x\nvoting: {ties: coin}\nstages:\n  - {kind: vote}\n", "voting.ties", "none"),
])
def test_errors_name_the_file_the_field_and_the_problem(tmp_path: Path, text: str, field: str,
                                                        words: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ProcedureError) as caught:
        load_procedure(path)
    message = str(caught.value)
    assert f"{path}: {field}:" in message and words in message


def test_unknown_preset_lists_the_presets() -> None:
    with pytest.raises(ProcedureError, match="presets: demo, .*player, .*thinkthrice"):
        find_procedure("marathon")


def test_broken_yaml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("name: x\nstages: [\n", encoding="utf-8")
    with pytest.raises(ProcedureError, match="invalid YAML at line"):
        load_procedure(path)


class ChimeSpec(StageSpec):
    kind: Literal["test_chime"] = "test_chime"
    times: int = 1


@register_stage(ChimeSpec)
async def run_chime(spec: ChimeSpec, table: Table) -> None:
    for _ in range(spec.times):
        await table.announce(f"chime at act {table.state.act}")


def test_a_stage_kind_registered_elsewhere_is_usable_from_yaml() -> None:
    assert stage_kind("test_chime").spec is ChimeSpec
    procedure = parse_procedure({"name": "bells", "stages": [{"kind": "test_chime",
                                                             "times": 2}]}, "inline")
    game, agents = table_game(one_act(), procedure)
    asyncio.run(game.run())
    chimes = [e for e in game.table.events if isinstance(e, HostSpoke)]
    assert [e.text for e in chimes] == ["chime at act 1"] * 2
    assert all(len(agent.observed) == 3 for agent in agents.values())


def test_unknown_kind_lookup_lists_known_kinds() -> None:
    with pytest.raises(UnknownName, match="known: .*questioning"):
        stage_kind("nope")
