"""The WhodunitBench way of playing: introductions, a discussion where each seat shares its
clues and questions one chosen seat, reasoning in the "Modus operandi: ... Motive: ..."
format, and a vote in turn that everyone hears; whole games on the bundled mysteries and on
imported WhodunitBench scripts, under both the whodunit and the mirage presets."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from engine_helpers import one_act, table_game

from jubensha.agents.registry import make_agent
from jubensha.engine.agent import Agent
from jubensha.engine.decisions import Decision, Speech, Vote
from jubensha.engine.events import ClueRevealed, Failure, GameEnded, Spoke, VoteCast
from jubensha.engine.game import Game, Seat
from jubensha.engine.procedure import find_procedure, parse_procedure
from jubensha.engine.stages_whodunit import parse_reasoning
from jubensha.llm.base import Request
from jubensha.llm.calls import CallLog
from jubensha.llm.fake import ScriptedModel
from jubensha.scripts import Script, bundled_scripts, load_script
from jubensha.scripts.importers import discover, import_script

REASONING = {"en": "Modus operandi: struck him with the candlestick.\nMotive: revenge.",
             "zh": "作案手法：用烛台击打。\n作案动机：报复。"}


def run(game: Game) -> Any:
    return asyncio.run(game.run())


def test_reasoning_is_parsed_in_either_language_and_order() -> None:
    assert parse_reasoning("Modus operandi: poison in the tea.\nMotive: the will.") == {
        "method": "poison in the tea.", "motive": "the will."}
    assert parse_reasoning("**Motive:** money **Modus operandi:** a rope") == {
        "method": "a rope", "motive": "money"}
    assert parse_reasoning("作案手法：下毒\n作案动机：遗产") == {"method": "下毒", "motive": "遗产"}
    assert parse_reasoning("I think Ann did it because of money.") is None
    assert parse_reasoning("Motive: money") is None


def test_discussion_shares_clues_then_questions_one_chosen_seat() -> None:
    game, agents = table_game(one_act(), parse_procedure({"name": "d", "stages": [
        {"kind": "discussion"}]}, "d"))
    run(game)
    spoken = [e for e in game.table.events if isinstance(e, Spoke)]
    for seat in game.table.seats:
        mine = [i for i, e in enumerate(spoken) if e.speaker == seat and e.kind != "answer"]
        share, question = spoken[mine[0]], spoken[mine[1]]
        assert share.kind == "clue_share" and question.kind == "question"
        assert question.to != seat
        answer = spoken[mine[1] + 1]
        assert answer.kind == "answer" and answer.speaker == question.to
        assert all(e.audience == "public" for e in (share, question, answer))
    asks = [d for d in agents["Ann"].decisions if d.type == "ask"]
    assert asks and "Ann" not in asks[0].candidates


def test_reasoning_in_the_wrong_format_is_kept_and_recorded_as_a_failure() -> None:
    def reply(agent: Agent, decision: Decision) -> Speech | None:
        if decision.type == "speak" and decision.kind == "reasoning":
            name = agent.seat.sheet.me.name
            return Speech(text=REASONING["en"] if name != "Dan" else "Ann did it.")
        return None

    game, _ = table_game(one_act(), parse_procedure({"name": "r", "stages": [
        {"kind": "reasoning"}]}, "r"), reply=reply)
    result = run(game)
    failures = [e for e in game.table.events if isinstance(e, Failure)]
    assert [f.seat for f in failures] == ["Dan"] and "format" in failures[0].error
    said = {e.speaker: e.text for e in game.table.events if isinstance(e, Spoke)}
    assert said["Dan"] == "Ann did it."
    record = result.extra["whodunit"]["reasoning"]
    assert record["Ann"] == {"method": "struck him with the candlestick.",
                             "motive": "revenge.", "formatted": True}
    assert record["Dan"]["formatted"] is False


def test_votes_are_cast_in_turn_and_each_is_heard_before_the_next() -> None:
    def reply(agent: Agent, decision: Decision) -> Vote | None:
        return Vote(target="Ann") if decision.type == "vote" else None

    game, agents = table_game(one_act(), parse_procedure({"name": "v", "stages": [
        {"kind": "open_vote"}, {"kind": "reveal"}]}, "v"), reply=reply)
    result = run(game)
    ballots = [e for e in game.table.events if isinstance(e, Spoke) and e.kind == "accusation"]
    assert [b.speaker for b in ballots] == game.table.seats
    assert all(b.text == "I think the killer is: Ann" and b.audience == "public"
               for b in ballots)
    last = agents[game.table.seats[-1]]
    heard = [e for e in last.observed if isinstance(e, Spoke) and e.kind == "accusation"]
    assert len(heard) == len(game.table.seats)
    assert all(isinstance(e, VoteCast) and e.audience == [] for e in game.table.events
               if e.type == "vote_cast")
    assert result.outcomes[0].eliminated == ["Ann"] and result.winner == "civilians"


def formatted_model(seed: int = 1) -> ScriptedModel:
    """The scripted fake, with reasoning in the required format (in the prompt's language)."""
    def reasoning(request: Request) -> str:
        text = request.messages[-1].text
        return REASONING["zh" if "作案手法" in text else "en"]

    return ScriptedModel(seed=seed, replies={"reasoning": reasoning})


def play(script: Script, preset: str, arch: str, rounds: int | None = None) -> tuple[Any, Game]:
    model = formatted_model()
    log = CallLog()
    seats = {n: Seat(make_agent(arch), model=log.seat(model, n)) for n in script.names}
    game = Game(script, find_procedure(preset).with_options(rounds=rounds), seats, seed=4)
    return run(game), game


@pytest.mark.parametrize("script_id", list(bundled_scripts()))
def test_whodunit_games_finish_on_every_bundled_mystery(script_id: str) -> None:
    script = load_script(bundled_scripts()[script_id])
    result, game = play(script, "whodunit", "whodunit")
    events = game.table.events
    assert result.failures == 0, [e.error for e in events if isinstance(e, Failure)]
    assert sum(isinstance(e, GameEnded) for e in events) == 1
    kinds = {e.kind for e in events if isinstance(e, Spoke)}
    assert {"introduction", "clue_share", "question", "answer", "reasoning",
            "accusation"} <= kinds
    assert all(r["formatted"] for r in result.extra["whodunit"]["reasoning"].values())


def whodunit_scripts(datasets: Any) -> list[Script]:
    root = datasets / "whodunitbench"
    return [import_script("whodunitbench", p) for p in discover("whodunitbench", root)]


@pytest.mark.datasets
def test_games_finish_on_imported_whodunitbench_scripts_under_both_presets(datasets: Any
                                                                           ) -> None:
    for script in whodunit_scripts(datasets):
        for preset, arch in (("whodunit", "whodunit"), ("mirage", "mirage")):
            result, game = play(script, preset, arch, rounds=1)
            events = game.table.events
            assert sum(isinstance(e, GameEnded) for e in events) == 1, (script.id, preset)
            assert result.failures == 0, (script.id, preset, [
                e.error for e in events if isinstance(e, Failure)][:3])
            images = [e for e in events if isinstance(e, ClueRevealed) and e.image]
            assert len(images) == sum(bool(c.image) for c in script.clues)
