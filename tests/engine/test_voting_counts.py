"""What a count reports beside who is out, and when a script can score a vote at all: the
tally every count carries (most votes first, as the game logs and the host announces it),
each outcome's victim, and ``records_solution``."""

from __future__ import annotations

import random

import pytest

from jubensha.engine.voting import VotingRules, count_votes, outcome, records_solution, tally
from jubensha.scripts import Character, Kill, Script, Truth, Victim

# Dan leads with two votes; by name Ann would come first.
BALLOTS = {"Ann": "Dan", "Bob": "Dan", "Cara": "Ann", "Dan": None}


def test_the_tally_puts_the_most_votes_first_not_the_first_name() -> None:
    assert list(tally(BALLOTS).items()) == [("Dan", 2), ("Ann", 1)]


@pytest.mark.parametrize(("ballots", "fields"), [
    (BALLOTS, {}),                                                    # a single leader
    ({"Ann": None, "Bob": None}, {}),                                 # nobody voted
    ({"Ann": "Bob", "Bob": "Ann"}, {}),                               # a tie, no one out
    ({"Ann": "Bob", "Bob": "Ann"}, {"ties": "all"}),
    ({"Ann": "Bob", "Bob": "Ann"}, {"ties": "random"}),
    ({"Ann": "Bob", "Bob": "Ann"}, {"ties": "revote"}),
    (BALLOTS, {"method": "threshold", "threshold": 0.75}),            # nobody qualifies
    (BALLOTS, {"method": "threshold", "threshold": 0.5, "ties": "all"}),
])
def test_every_count_carries_the_whole_tally(ballots: dict, fields: dict) -> None:
    count = count_votes(ballots, VotingRules.model_validate(fields), random.Random(1))
    assert list(count.tally.items()) == list(tally(ballots).items())


def script(murderers: list[str], offstage: list[str] | None) -> Script:
    """Ann and Bob at the table, Vic dead; ``offstage=None``: no truth at all."""
    truth = None if offstage is None else Truth(
        murderers=murderers, killed_offstage=offstage,
        kills=[Kill(victim="Vic", killers=murderers)] if murderers else [])
    return Script(id="s", title="S", language="en",
                  characters=[Character(name="Ann"), Character(name="Bob")],
                  victims=[Victim(name="Vic")], truth=truth)


@pytest.mark.parametrize(("murderers", "offstage", "recorded"), [
    (["Ann"], [], True),
    ([], ["Vic"], True),       # nobody at the table did it: that is a solution too
    ([], [], False),
    ([], None, False),         # an imported story that never says who did it
])
def test_a_script_records_a_solution_when_it_names_a_murderer_or_an_offstage_death(
        murderers: list[str], offstage: list[str] | None, recorded: bool) -> None:
    assert records_solution(script(murderers, offstage)) is recorded


def test_an_outcome_names_its_victim() -> None:
    found = outcome(script(["Ann"], []), "Vic", BALLOTS, ["Dan"])
    assert (found.victim, found.murderers, found.caught) == ("Vic", ["Ann"], False)
