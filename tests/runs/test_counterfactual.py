"""The counterfactual audit: with the truth, the clues' flags and every other seat's sheet
replaced, and the other seats replaying their moves, every seat of every architecture
sees, does and asks exactly what it did, before the reveal, on every procedure. A seat
that peeks (finds the truth in memory, reads a clue's flag) is caught.

The matrix here is each architecture on the procedure it was made for and every
procedure once; ``bench/counterfactual.py`` plays every architecture on every procedure."""

from __future__ import annotations

import gc

import pytest

from jubensha.agents.naive import NaiveAgent
from jubensha.engine.decisions import CastVote, Speak, Speech, Vote
from jubensha.engine.procedure import find_procedure
from jubensha.engine.table import Table
from jubensha.llm.fake import ScriptedModel
from jubensha.runs.counterfactual import audit_game, counterfactual_script
from jubensha.scripts import find_script

CASES = [("naive", "demo", "lighthouse-keeper"), ("detective:guard", "demo", "lighthouse-keeper"),
         ("ledger", "demo", "tingsong-tea-estate"), ("extractive", "demo", "lighthouse-keeper"),
         ("werewolf", "demo", "lighthouse-keeper"), ("ocot", "demo", "lighthouse-keeper"),
         ("solver", "demo", "lighthouse-keeper"), ("player", "player", "lighthouse-keeper"),
         ("thinkthrice:mr+sr+sv1", "thinkthrice", "lighthouse-keeper"),
         ("mirage", "mirage", "halvard-observatory"),
         ("whodunit", "whodunit", "tingsong-tea-estate")]


def the_table(agent: object) -> Table:
    """The table ``agent`` sits at, found the way no seat should: in the heap."""
    return next(item for item in gc.get_objects()
                if isinstance(item, Table) and agent in item.agents.values())


class TruthPeeker(NaiveAgent):
    """Votes for the murderer the truth names, which it finds in memory."""

    async def on_vote(self, decision: CastVote) -> Vote:
        guilty = [name for name in the_table(self).script.murderers
                  if name in decision.candidates]
        return Vote(target=guilty[0] if guilty else None, reason="I know.")


class FlagPeeker(NaiveAgent):
    """Says how many clues are key, a flag no seat is shown."""

    async def on_speak(self, decision: Speak) -> Speech:
        keys = sum(clue.key for clue in the_table(self).script.clues)
        return Speech(text=f"I have a feeling about {keys} of the clues.")


@pytest.mark.parametrize(("architecture", "procedure", "name"), CASES)
async def test_a_seat_plays_the_same_game_whatever_it_cannot_see(
        architecture: str, procedure: str, name: str) -> None:
    script = find_script(name)
    audits = await audit_game(script, find_procedure(procedure),
                              dict.fromkeys(script.names, architecture), seed=3,
                              embedder=ScriptedModel())
    assert [a.seat for a in audits] == script.names
    for found in audits:
        assert found.divergence is None, (found.seat, found.divergence)
        assert found.events > 10
    if architecture not in ("extractive", "solver"):
        assert all(a.calls > 0 for a in audits)


@pytest.mark.parametrize(("planted", "peeks"), [(TruthPeeker, True), (FlagPeeker, True),
                                                (NaiveAgent, False)])
async def test_the_audit_catches_a_seat_that_peeks(planted: type[NaiveAgent],
                                                   peeks: bool) -> None:
    """The same naive seat, planted the same way, passes unless it peeks."""
    script = find_script("lighthouse-keeper")
    seat = next(c.name for c in script.characters if c.side != "murderer")
    audits = await audit_game(script, find_procedure("demo"),
                              dict.fromkeys(script.names, "naive"), seed=3,
                              seats=[seat], agents={seat: planted()})
    divergence = audits[0].divergence
    assert (divergence is not None) == peeks
    assert divergence is None or divergence.what == "event"


def test_the_counterfactual_keeps_the_seat_s_own_sheet_and_the_public_text() -> None:
    script = find_script("lighthouse-keeper")
    for me in script.characters:
        other = counterfactual_script(script, me.name)
        assert other.character(me.name) == me
        assert (other.background, other.victims, other.acts) == (
            script.background, script.victims, script.acts)
        assert [c.text for c in other.clues] == [c.text for c in script.clues]
        assert [c.key for c in other.clues] == [not c.key for c in script.clues]
        assert other.truth != script.truth and other.truth is not None
        assert (me.name in other.truth.murderers) == (me.side == "murderer")
        for them in script.characters:
            if them.name != me.name:
                theirs = other.character(them.name)
                assert theirs.description == them.description
                assert theirs.story != them.story and theirs.secrets != them.secrets
