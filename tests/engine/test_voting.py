"""Voting rules, as hand-worked tables: ballots in, eliminations and winners out."""

from __future__ import annotations

import asyncio
import random

import pytest

from jubensha.engine.agent import Agent
from jubensha.engine.decisions import Action, CastVote, Decision, Vote
from jubensha.engine.events import Accused, VictimOutcome, VoteCast
from jubensha.engine.procedure import presets
from jubensha.engine.voting import (
    NOBODY,
    VotingRules,
    ballot_candidates,
    candidates_for,
    count_votes,
    killers_of,
    outcome,
    tally,
    victims_to_vote,
    winner,
)
from jubensha.scripts import Character, Kill, Script, Truth, Victim
from tests.engine.engine_helpers import table_game, tiny

SEATS = ["Ann", "Bob", "Cara", "Dan"]


def rng() -> random.Random:
    return random.Random(7)


def rules(**fields: object) -> VotingRules:
    return VotingRules.model_validate(fields)


def test_tally_counts_votes_most_first_and_ignores_abstentions() -> None:
    ballots = {"Ann": "Bob", "Bob": "Cara", "Cara": "Bob", "Dan": None}
    assert tally(ballots) == {"Bob": 2, "Cara": 1}
    assert list(tally({"Ann": "Dan", "Bob": "Cara"})) == ["Cara", "Dan"]


@pytest.mark.parametrize(("ballots", "eliminated"), [
    ({"Ann": "Bob", "Bob": "Cara", "Cara": "Bob", "Dan": "Bob"}, ["Bob"]),
    ({"Ann": "Bob", "Bob": "Cara", "Cara": "Dan", "Dan": "Bob"}, ["Bob"]),
    ({"Ann": None, "Bob": None, "Cara": "Dan", "Dan": None}, ["Dan"]),
    ({"Ann": None, "Bob": None, "Cara": None, "Dan": None}, []),
])
def test_plurality_eliminates_the_single_leader(ballots: dict, eliminated: list) -> None:
    assert count_votes(ballots, rules(), rng()).eliminated == eliminated


TIE = {"Ann": "Bob", "Bob": "Cara", "Cara": "Bob", "Dan": "Cara"}


@pytest.mark.parametrize(("tie_rule", "eliminated", "revote"), [
    ("none", [], []),
    ("all", ["Bob", "Cara"], []),
    ("revote", [], ["Bob", "Cara"]),
])
def test_each_tie_rule(tie_rule: str, eliminated: list, revote: list) -> None:
    count = count_votes(TIE, rules(ties=tie_rule), rng())
    assert (count.eliminated, count.revote_among) == (eliminated, revote)


def test_random_tie_break_is_seeded_and_picks_a_tied_seat() -> None:
    picks = {count_votes(TIE, rules(ties="random"), random.Random(seed)).eliminated[0]
             for seed in range(20)}
    assert picks == {"Bob", "Cara"}
    first = count_votes(TIE, rules(ties="random"), random.Random(3)).eliminated
    assert count_votes(TIE, rules(ties="random"), random.Random(3)).eliminated == first


def test_a_second_tie_after_a_revote_eliminates_nobody() -> None:
    count = count_votes(TIE, rules(ties="revote"), rng(), revote_allowed=False)
    assert (count.eliminated, count.revote_among) == ([], [])


@pytest.mark.parametrize(("ballots", "eliminated"), [
    # 5 ballots: 3 votes is 60% >= 50%.
    ({"A": "X", "B": "X", "C": "X", "D": "Y", "E": "Y"}, ["X"]),
    # 5 ballots: 2 votes is 40%, nobody reaches 50% although X leads.
    ({"A": "X", "B": "X", "C": "Y", "D": "Z", "E": None}, []),
    # 4 ballots: 2 votes is exactly 50%; abstentions count in the denominator.
    ({"A": "X", "B": "X", "C": None, "D": None}, ["X"]),
    # 4 ballots split 2-2: both reach 50%, the tie rule (here: all) applies.
    ({"A": "X", "B": "X", "C": "Y", "D": "Y"}, ["X", "Y"]),
])
def test_player_star_threshold_rule(ballots: dict, eliminated: list) -> None:
    player = rules(method="threshold", threshold=0.5, ties="all")
    assert count_votes(ballots, player, rng()).eliminated == eliminated


def test_threshold_two_thirds() -> None:
    ballots = {"A": "X", "B": "X", "C": "Y"}
    assert count_votes(ballots, rules(method="threshold", threshold=0.67), rng()).eliminated == []
    assert count_votes(ballots, rules(method="threshold", threshold=0.6), rng()).eliminated == ["X"]


@pytest.mark.parametrize(("self_vote", "voter", "expected"), [
    ("allowed", "Ann", SEATS),
    ("not_murderers", "Ann", ["Bob", "Cara", "Dan"]),
    ("not_murderers", "Bob", SEATS),
    ("nobody", "Bob", ["Ann", "Cara", "Dan"]),
])
def test_self_vote_rule(self_vote: str, voter: str, expected: list) -> None:
    assert candidates_for(voter, SEATS, ["Ann"], rules(self_vote=self_vote)) == expected


def test_revote_candidates_are_the_tied_seats_minus_a_murderer_self() -> None:
    assert candidates_for("Ann", SEATS, ["Ann"], rules(self_vote="not_murderers"),
                          among=["Ann", "Bob"]) == ["Bob"]


def two_victims() -> Script:
    """Ann killed Vic, Bob and Cara together killed Wes; Dan is innocent."""
    return Script(
        id="two", title="Two", language="en",
        characters=[Character(name="Ann", side="murderer", killed=["Vic"]),
                    Character(name="Bob", side="murderer", killed=["Wes"]),
                    Character(name="Cara", side="murderer", killed=["Wes"]),
                    Character(name="Dan")],
        victims=[Victim(name="Vic"), Victim(name="Wes")],
        truth=Truth(murderers=["Ann", "Bob", "Cara"],
                    kills=[Kill(victim="Vic", killers=["Ann"]),
                           Kill(victim="Wes", killers=["Bob", "Cara"])]))


def test_one_vote_per_victim_when_there_are_several() -> None:
    script = two_victims()
    declared = rules().declared(script)
    assert victims_to_vote(script, declared) == ["Vic", "Wes"]
    assert victims_to_vote(script, rules(per_victim="never", nobody="never")) == [None]
    one = script.model_copy(update={"victims": [Victim(name="Vic")]})
    assert victims_to_vote(one, rules().declared(one)) == [None]
    assert victims_to_vote(one, rules(per_victim="always", nobody="never")) == ["Vic"]


def three_victims_one_offstage() -> Script:
    """Vic and Wes were killed at the table; Old Tom died offstage (nobody present)."""
    script = two_victims()
    script.victims.append(Victim(name="Old Tom"))
    assert script.truth is not None
    script.truth.killed_offstage = ["Old Tom"]
    return script


def test_every_victim_the_players_know_of_is_voted_on() -> None:
    script = three_victims_one_offstage()
    assert victims_to_vote(script, rules().declared(script)) == ["Vic", "Wes", "Old Tom"]
    lone = script.model_copy(update={"victims": [Victim(name="Old Tom")]})
    assert victims_to_vote(lone, rules().declared(lone)) == ["Old Tom"]


def test_nobody_here_is_declared_before_the_game_and_offered_on_every_ballot_alike() -> None:
    script = three_victims_one_offstage()
    assert rules().declared(script).nobody == "always"
    assert rules().declared(two_victims()).nobody == "never"
    assert rules(nobody="never").declared(script).nobody == "never"
    declared = rules().declared(script)
    offered = {victim: ballot_candidates("Dan", SEATS, script, declared, victim)
               for victim in victims_to_vote(script, declared)}
    assert all(pool == ["Ann", "Bob", "Cara", "Dan", NOBODY] for pool in offered.values())
    assert NOBODY not in ballot_candidates("Dan", SEATS, script, rules(nobody="never"), "Vic")
    assert NOBODY in ballot_candidates("Dan", SEATS, two_victims(), rules(nobody="always"),
                                       "Vic")
    assert ballot_candidates("Dan", SEATS, script, declared, "Vic", among=["Ann", "Bob"]) == [
        "Ann", "Bob"]
    assert ballot_candidates("Dan", SEATS, script, declared, "Vic", among=["Ann", NOBODY]) == [
        "Ann", NOBODY]


def test_a_ballot_is_never_shaped_from_the_truth_during_play() -> None:
    """Undeclared rules are refused where ballots are shaped, and with declared rules a
    ballot is the same whatever the truth says: who did it, which deaths were offstage.
    A murderer is left off its own ballot by its sheet's side, which it knows."""
    script = three_victims_one_offstage()
    with pytest.raises(ValueError, match="declared"):
        ballot_candidates("Dan", SEATS, script, rules(), "Vic")
    declared = rules(self_vote="not_murderers").declared(script)
    other = script.model_copy(deep=True)
    assert other.truth is not None
    other.truth.murderers, other.truth.killed_offstage, other.truth.kills = ["Dan"], [], []
    for voter in SEATS:
        for victim in ("Vic", "Old Tom"):
            assert ballot_candidates(voter, SEATS, other, declared, victim) == \
                ballot_candidates(voter, SEATS, script, declared, victim)
    assert "Ann" not in ballot_candidates("Ann", SEATS, script, declared, "Vic")
    assert "Dan" in ballot_candidates("Dan", SEATS, other, declared, "Vic")


def test_nobody_here_is_right_exactly_for_the_offstage_victim() -> None:
    script = three_victims_one_offstage()
    assert killers_of(script, "Old Tom") == [NOBODY]
    ballots = {"Ann": NOBODY, "Bob": NOBODY, "Cara": "Dan", "Dan": NOBODY}
    assert outcome(script, "Old Tom", ballots, [NOBODY]).caught
    assert not outcome(script, "Old Tom", ballots, ["Dan"]).caught
    assert not outcome(script, "Vic", ballots, [NOBODY]).caught


def test_killers_come_from_the_truth_then_the_characters() -> None:
    script = two_victims()
    assert killers_of(script, "Wes") == ["Bob", "Cara"]
    assert killers_of(script, None) == ["Ann", "Bob", "Cara"]
    without_kills = script.model_copy(update={"truth": Truth(murderers=["Ann", "Bob", "Cara"])})
    assert killers_of(without_kills, "Vic") == ["Ann"]


def test_outcome_per_victim_is_caught_when_one_of_its_killers_is_out() -> None:
    script = two_victims()
    ballots = {"Ann": "Dan", "Bob": "Cara", "Cara": "Dan", "Dan": "Cara"}
    assert outcome(script, "Wes", ballots, ["Cara"]).caught
    assert not outcome(script, "Vic", ballots, ["Cara"]).caught
    assert outcome(script, "Vic", ballots, []).tally == {"Cara": 2, "Dan": 2}


@pytest.mark.parametrize(("rule", "caught", "eliminated", "expected"), [
    ("all_victims", [True, True], [["Ann"], ["Bob"]], "civilians"),
    ("all_victims", [True, False], [["Ann"], ["Dan"]], "murderers"),
    ("majority_of_victims", [True, False], [["Ann"], ["Dan"]], "murderers"),
    ("majority_of_victims", [True, True, False], [["Ann"], ["Bob"], []], "civilians"),
    ("all_murderers", [True, True], [["Ann"], ["Bob"]], "murderers"),
    ("all_murderers", [True, True], [["Ann"], ["Bob", "Cara"]], "civilians"),
])
def test_game_winner_rules(rule: str, caught: list, eliminated: list, expected: str) -> None:
    outcomes = [VictimOutcome(victim=f"V{i}", tally={}, eliminated=out, murderers=[],
                              caught=hit) for i, (hit, out) in enumerate(zip(caught, eliminated))]
    murderers = ["Ann", "Bob", "Cara"]
    assert winner(outcomes, murderers, rules(civilians_win=rule)) == expected


def test_no_vote_or_no_known_murderer_has_no_winner() -> None:
    assert winner([], ["Ann"], rules()) == "none"
    done = [VictimOutcome(victim=None, tally={}, eliminated=["Ann"], murderers=[], caught=False)]
    assert winner(done, [], rules()) == "none"


@pytest.mark.parametrize("preset", presets())
def test_every_seat_may_vote_for_itself_exactly_as_the_procedure_says(preset: str) -> None:
    """One self-vote rule for every seat, from the procedure's voting settings: each seat's
    ballot offers it (and a ballot for oneself counts) only where ``self_vote`` allows it.
    A person's seat is offered the same list (the terminal and the web show the decision's
    candidates)."""

    def vote_for_self(agent: Agent, decision: Decision) -> Action | None:
        name = agent.seat.sheet.me.name
        return Vote(target=name) if decision.type == "vote" else None

    script = tiny()
    game, agents = table_game(script, preset, reply=vote_for_self)
    asyncio.run(game.run())
    rule = game.table.voting.self_vote
    for name, agent in agents.items():
        allowed = rule == "allowed" or (rule == "not_murderers"
                                        and name not in script.murderers)
        ballots = [d for d in agent.decisions if isinstance(d, CastVote)]
        assert ballots, f"{preset}: {name} never voted"
        offered = {name in d.candidates for d in ballots}
        # MIRAGE votes among the accused; elsewhere the vote is over every seat.
        accused = {e.accused for e in game.table.events if isinstance(e, Accused)}
        among = accused if preset == "mirage" and accused else set(script.names)
        assert offered == {allowed and name in among}, (preset, name)
        cast = [e for e in game.table.events if isinstance(e, VoteCast) and e.voter == name]
        assert {e.target for e in cast} == ({name} if True in offered else {None})
