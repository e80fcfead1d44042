"""Whole games: every preset on every bundled mystery, determinism, who sees what, and how
failed or invalid decisions are replaced and recorded so the game always ends."""

from __future__ import annotations

import asyncio
from itertools import pairwise
from typing import Any

import pytest
from engine_helpers import TableAgent, one_act, table_game, tiny

from jubensha.agents.registry import make_agent
from jubensha.engine.agent import Agent, CharacterSheet
from jubensha.engine.decisions import Decision, Questions, Speech, Vote
from jubensha.engine.events import (
    ActStarted,
    ClueRevealed,
    Failure,
    GameEnded,
    Spoke,
    StageStarted,
    VoteCast,
)
from jubensha.engine.game import Game, GameSetupError, Seat
from jubensha.engine.procedure import find_procedure, parse_procedure
from jubensha.llm.base import ModelError
from jubensha.llm.calls import CallLog
from jubensha.llm.fake import ScriptedModel
from jubensha.scripts import bundled_scripts, load_script

PRESETS = ["demo", "player", "thinkthrice"]


def run(game: Game) -> Any:
    return asyncio.run(game.run())


def stable(events: list) -> list[dict]:
    """Events without their wall-clock time, for comparing two games."""
    return [event.model_dump(mode="json", exclude={"time"}) for event in events]


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("script_id", list(bundled_scripts()))
def test_every_preset_plays_to_the_end_on_every_bundled_mystery(script_id: str,
                                                                 preset: str) -> None:
    script = load_script(bundled_scripts()[script_id])
    model = ScriptedModel(seed=1)
    log = CallLog()
    seats = {name: Seat(make_agent("naive"), model=log.seat(model, name))
             for name in script.names}
    game = Game(script, find_procedure(preset), seats, seed=5)
    result = run(game)
    events = game.table.events
    assert result.failures == 0, [e.error for e in events if isinstance(e, Failure)]
    ended = [e for e in events if isinstance(e, GameEnded)]
    assert len(ended) == 1 and ended[0].audience == "public"
    assert result.winner in ("civilians", "murderers")
    speakers = {e.speaker for e in events if isinstance(e, Spoke)}
    assert speakers == set(script.names)
    victims = [v.name for v in script.victims] if len(script.victims) > 1 else [None]
    assert [o.victim for o in result.outcomes] == victims
    votes = [e for e in events if isinstance(e, VoteCast)]
    assert len(votes) >= len(script.names) * len(victims)
    assert {r.seat for r in log.sink.records} == set(script.names)


def test_the_same_seed_plays_the_same_game() -> None:
    def play(seed: int) -> tuple[list[str], list[dict]]:
        script = tiny()
        model = ScriptedModel()
        seats = {n: Seat(make_agent("naive"), model=model) for n in script.names}
        game = Game(script, find_procedure("demo"), seats, seed=seed)
        run(game)
        return game.table.seats, stable(game.table.events)

    assert play(3) == play(3)
    orders = {tuple(play(seed)[0]) for seed in range(6)}
    assert len(orders) > 1


def test_each_seat_observes_exactly_the_events_visible_to_it() -> None:
    game, agents = table_game(tiny(), "thinkthrice")
    run(game)
    events = game.table.events
    for name, agent in agents.items():
        assert [e.index for e in agent.observed] == [e.index for e in events
                                                     if e.visible_to(name)]
    held = next(e for e in events if isinstance(e, ClueRevealed) and e.clue_id == "c2")
    assert held.audience == ["Bob"]
    assert [n for n, a in agents.items() if held.index in {e.index for e in a.observed}] == ["Bob"]


def test_votes_and_failures_are_log_only_and_the_reveal_is_public() -> None:
    game, agents = table_game(tiny(), "demo", reply=lambda agent, d: (
        Speech(text="") if d.type == "speak" and agent.name == "Cara" else None))
    run(game)
    events = game.table.events
    assert any(isinstance(e, Failure) for e in events)
    for agent in agents.values():
        assert not any(isinstance(e, VoteCast | Failure) for e in agent.observed)
        assert isinstance(agent.observed[-1], GameEnded)


def test_a_new_act_sends_each_sheet_to_its_owner_only() -> None:
    game, agents = table_game(tiny(), "thinkthrice")
    run(game)
    sheets = [e for e in game.table.events if isinstance(e, ActStarted) and e.sheet]
    assert {(e.act, tuple(e.audience)) for e in sheets} == {(2, ("Ann",)), (2, ("Bob",))}
    assert game.table.state.act == 2
    public = [e for e in agents["Cara"].observed if isinstance(e, ActStarted)]
    assert [(e.act, e.sheet) for e in public] == [(1, None), (2, None)]
    released = [e.clue_id for e in game.table.events if isinstance(e, ClueRevealed)]
    assert sorted(released) == ["c1", "c2", "c3", "c4"]


def test_agents_get_their_sheet_never_the_script() -> None:
    game, agents = table_game(tiny(), "demo")
    run(game)
    for name, agent in agents.items():
        sheet = agent.seat.sheet
        assert type(sheet) is CharacterSheet and sheet.me.name == name
        assert all(act.act <= 1 for act in sheet.me.acts)
        assert name not in [o.name for o in sheet.others]
    assert len({agent.seat.seed for agent in agents.values()}) == 4


def test_clue_stage_can_leave_located_clues_hidden() -> None:
    procedure = parse_procedure({"name": "p", "stages": [{"kind": "clues",
                                                          "located": "skip"}]}, "test")
    game, _ = table_game(one_act(), procedure)
    run(game)
    assert [e.clue_id for e in game.table.events if isinstance(e, ClueRevealed)] == ["c1", "c2"]


def test_an_act_that_does_not_exist_is_skipped() -> None:
    script = load_script(bundled_scripts()["lighthouse-keeper"])
    procedure = parse_procedure({"name": "p", "stages": [{"kind": "act"}, {"kind": "vote"}]},
                                "test")
    game, _ = table_game(script, procedure)
    run(game)
    assert [e.kind for e in game.table.events if isinstance(e, StageStarted)] == ["vote"]


def test_introduction_follow_ups_let_every_other_seat_ask_one_question() -> None:
    procedure = parse_procedure({"name": "p", "stages": [
        {"kind": "introduction", "follow_ups": True}]}, "test")
    game, _ = table_game(one_act(), procedure)
    run(game)
    questions = [(e.speaker, e.to) for e in game.table.events
                 if isinstance(e, Spoke) and e.kind == "question"]
    assert len(questions) == 12
    assert all(asker != target for asker, target in questions)


def test_hot_seat_questioning_and_private_pairs() -> None:
    procedure = parse_procedure({"name": "p", "stages": [
        {"kind": "questioning", "targets": "each", "questions": 2, "audience": "pair"}]}, "test")
    game, agents = table_game(one_act(), procedure)
    run(game)
    questions = [e for e in game.table.events if isinstance(e, Spoke) and e.kind == "question"]
    assert len(questions) == 4 * 3 * 2
    for event in questions:
        assert sorted(event.audience) == sorted([event.speaker, event.to])
    answers = [e for e in game.table.events if isinstance(e, Spoke) and e.kind == "answer"]
    assert [a.reply_to for a in answers] == [q.index for q in questions]
    dan_saw = {e.index for e in agents["Dan"].observed}
    assert all((q.index in dan_saw) == ("Dan" in q.audience) for q in questions)


def test_not_last_forbids_asking_the_same_seat_twice_in_a_row() -> None:
    procedure = parse_procedure({"name": "p", "stages": [
        {"kind": "questioning", "rounds": 3, "may_ask": "not_last"}]}, "test")
    game, agents = table_game(one_act(), procedure)
    run(game)
    for name in agents:
        targets = [e.to for e in game.table.events
                   if isinstance(e, Spoke) and e.kind == "question" and e.speaker == name]
        assert len(targets) == 3 and all(a != b for a, b in pairwise(targets))


def test_several_victims_get_one_vote_each() -> None:
    script = load_script(bundled_scripts()["halvard-observatory"])
    game, _ = table_game(script, "player")
    result = run(game)
    assert [o.victim for o in result.outcomes] == [v.name for v in script.victims]
    per_victim = {o.victim: o.murderers for o in result.outcomes}
    assert all(per_victim.values())
    votes = [e for e in game.table.events if isinstance(e, VoteCast)]
    assert {e.victim for e in votes} == set(per_victim)


def test_murderers_are_not_offered_themselves_under_player_rules() -> None:
    game, agents = table_game(tiny(), "player")
    run(game)
    ann_votes = [d for d in agents["Ann"].decisions if d.type == "vote"]
    bob_votes = [d for d in agents["Bob"].decisions if d.type == "vote"]
    assert "Ann" not in ann_votes[0].candidates and "Bob" in bob_votes[0].candidates


def test_a_tie_leads_to_one_revote_among_the_tied() -> None:
    def vote(agent: Agent, decision: Decision) -> Vote | None:
        if decision.type != "vote":
            return None
        if decision.round == 2:
            return Vote(target="Ann")
        return Vote(target="Ann" if agent.name in ("Bob", "Cara") else "Bob")

    procedure = parse_procedure({"name": "p", "voting": {"ties": "revote"},
                                 "stages": [{"kind": "vote"}, {"kind": "reveal"}]}, "test")
    game, agents = table_game(one_act(), procedure, reply=vote)
    result = run(game)
    assert [r.round for r in result.votes] == [1, 2]
    assert result.votes[0].ballots == {"Ann": "Bob", "Bob": "Ann", "Cara": "Ann", "Dan": "Bob"}
    assert sorted(agents["Dan"].decisions[-1].candidates) == ["Ann", "Bob"]
    assert result.outcomes[0].eliminated == ["Ann"] and result.winner == "civilians"


def test_votes_are_asked_concurrently() -> None:
    started: list[str] = []
    everyone = asyncio.Event()

    class Waiting(TableAgent):
        async def decide(self, decision: Decision) -> Any:
            if decision.type == "vote":
                started.append(self.name)
                if len(started) == 4:
                    everyone.set()
                await asyncio.wait_for(everyone.wait(), 2)
            return await super().decide(decision)

    script = one_act()
    procedure = parse_procedure({"name": "p", "stages": [{"kind": "vote"}]}, "test")
    game = Game(script, procedure, {n: Seat(Waiting()) for n in script.names})
    result = run(game)
    assert result.failures == 0 and len(started) == 4


# -- failures ------------------------------------------------------------------------------
def failures(game: Game) -> list[Failure]:
    return [e for e in game.table.events if isinstance(e, Failure)]


def test_an_agent_that_raises_gets_a_fallback_and_a_failure_record() -> None:
    def broken(agent: Agent, decision: Decision) -> None:
        if agent.name == "Dan":
            raise RuntimeError("model fell over")

    game, _ = table_game(tiny(), "demo", reply=broken)
    result = run(game)
    recorded = failures(game)
    assert {f.seat for f in recorded} == {"Dan"}
    purposes = {f.purpose for f in recorded}
    assert {"introduction", "ask", "statement", "vote"} <= purposes <= {
        "introduction", "ask", "answer", "statement", "vote"}
    assert all("model fell over" in f.error for f in recorded)
    assert result.failures == len(recorded) and result.winner != "none"
    dan_says = [e.text for e in game.table.events if isinstance(e, Spoke) and e.speaker == "Dan"]
    assert dan_says[0] == "I have nothing more to add for now."
    assert result.votes[0].ballots["Dan"] is None


def test_invalid_actions_are_corrected_and_recorded() -> None:
    def invalid(agent: Agent, decision: Decision) -> Any:
        if decision.type == "ask":
            return Questions(target="Nobody", questions=["a?", "b?", "c?"])
        if decision.type == "vote":
            return Vote(target="The Gardener's Cat")
        if decision.type == "speak" and decision.kind == "introduction":
            return Vote(target="Ann")
        return None

    game, _ = table_game(tiny(), "demo", reply=invalid)
    result = run(game)
    errors = {(f.purpose, f.error.split(":")[0]) for f in failures(game)}
    assert errors == {("ask", "invalid action"), ("vote", "invalid action"),
                      ("introduction", "returned Vote, expected Speech")}
    questions = [e for e in game.table.events if isinstance(e, Spoke) and e.kind == "question"]
    assert len(questions) == 4 * 2 and all(q.to != q.speaker for q in questions)  # 2 acts
    assert all(target is None for target in result.votes[0].ballots.values())
    # every ballot was the table's: the game is no result, and so has no winner
    assert result.outcomes[0].eliminated == [] and result.degraded and result.winner == "none"


def test_a_seat_that_takes_too_long_falls_back() -> None:
    class Slow(TableAgent):
        async def decide(self, decision: Decision) -> Any:
            if self.name == "Bob" and decision.type == "vote":
                await asyncio.sleep(5)
            return await super().decide(decision)

    script = one_act()
    procedure = parse_procedure({"name": "p", "stages": [{"kind": "vote"}]}, "test")
    game = Game(script, procedure, {n: Seat(Slow()) for n in script.names},
                decision_timeout_s=0.05)
    result = run(game)
    assert [(f.seat, f.error) for f in failures(game)] == [("Bob", "TimeoutError")]
    assert result.votes[0].ballots["Bob"] is None


@pytest.mark.parametrize("reply", ["not json at all", ModelError("service unavailable")])
def test_a_model_returning_garbage_or_erroring_still_finishes(reply: Any) -> None:
    script = tiny()
    model = ScriptedModel(replies={"*": lambda request: reply})
    seats = {n: Seat(make_agent("naive"), model=model) for n in script.names}
    game = Game(script, find_procedure("demo"), seats, seed=2)
    result = run(game)
    purposes = {f.purpose for f in failures(game)}
    expected = {"ask", "vote"} if isinstance(reply, str) else {
        "ask", "vote", "introduction", "answer", "statement"}
    assert purposes == expected
    assert any(isinstance(e, GameEnded) for e in game.table.events)
    assert result.failures == len(failures(game))


def test_seats_must_match_the_characters() -> None:
    script = tiny()
    with pytest.raises(GameSetupError, match="missing \\['Dan'\\]"):
        Game(script, find_procedure("demo"),
             {n: Seat(TableAgent()) for n in script.names if n != "Dan"})
