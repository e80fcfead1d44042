"""Whole games with the ``player`` architecture: every bundled mystery, every engine preset
on the small script, imported WellPlay scripts, m questions per turn, and no prompt holding
another character's private text."""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from pathlib import Path

import pytest
from player_helpers import tiny

from jubensha.agents.registry import make_agent
from jubensha.engine.acts import playable_acts
from jubensha.engine.events import Event, Failure, Spoke
from jubensha.engine.game import Game, GameResult, Seat
from jubensha.engine.procedure import Procedure, find_procedure
from jubensha.llm.base import Message
from jubensha.llm.calls import CallLog, CallRecord
from jubensha.llm.fake import ScriptedModel
from jubensha.scripts import Script, bundled_scripts, load_script
from jubensha.scripts.importers import import_script

WELLPLAY = ["english/Sin (4 people closed)", "english/Solitary Boat Firefly (6 people)",
            "chinese/罪恶（4人封闭）"]
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*|\n+")


def play(script: Script, procedure: Procedure, seed: int = 5) -> tuple[GameResult, Game,
                                                                       list[CallRecord]]:
    log = CallLog()
    model = ScriptedModel(seed=seed)
    seats = {name: Seat(make_agent("player"), model=log.seat(model, name))
             for name in script.names}
    game = Game(script, procedure, seats, seed=seed)
    result = asyncio.run(game.run())
    assert result.failures == 0, [e.error for e in game.table.events if isinstance(e, Failure)]
    return result, game, log.sink.records


@pytest.mark.parametrize("script_id", list(bundled_scripts()))
def test_player_plays_every_bundled_mystery_to_the_end(script_id: str) -> None:
    script = load_script(bundled_scripts()[script_id])
    result, game, calls = play(script, find_procedure("player"))
    assert result.winner in ("civilians", "murderers")
    counts = Counter(call.purpose for call in calls)
    seats = len(script.names)
    rounds = 3 * len(playable_acts(script))  # 3 rounds of 1 question in each act
    assert counts["question"] == counts["answer"] == rounds * seats
    assert counts["pruner"] == (rounds - 1) * seats * len(script.victims)  # not after the last
    assert counts["introduction"] == seats
    assert counts["vote"] == seats * len(script.victims)
    pairs = seats * (seats - 1) * len(script.victims)  # (seat, other seat, victim)
    assert counts["sensor.emotion"] == pairs  # round 1; refinement readings serve later ones
    assert counts["sensor.information_value"] == 0  # refinement asks it with the others
    assert 0 < counts["sensors"] <= (rounds - 1) * pairs  # at each refinement, every other
    # seat whose inputs changed
    assert leaks(script, game.table.events, calls) == []


@pytest.mark.parametrize("preset", ["demo", "thinkthrice", "player", "mirage"])
def test_player_plays_every_engine_preset(preset: str) -> None:
    _, game, calls = play(tiny(), find_procedure(preset))
    assert any(isinstance(e, Spoke) and e.kind == "answer" for e in game.table.events)
    assert leaks(tiny(), game.table.events, calls) == []


def test_m_questions_are_asked_each_turn_in_a_game() -> None:
    script = tiny()
    procedure = find_procedure("player").with_options(questions=2)
    _, game, _ = play(script, procedure)
    asked = Counter((e.speaker, e.stage, e.round) for e in game.table.events
                    if isinstance(e, Spoke) and e.kind == "question")
    assert set(asked.values()) == {2}
    assert set(asked) == {(seat, stage, round_) for seat in script.names
                          for stage in ("questioning", "questioning-act2")  # the tiny manor's
                          for round_ in (1, 2, 3)}                          # two acts


@pytest.mark.parametrize("folder", WELLPLAY)
def test_player_plays_imported_wellplay_scripts(folder: str, datasets: Path) -> None:
    script = import_script("wellplay", datasets / "wellplay" / folder)
    result, _, calls = play(script, find_procedure("player").with_options(rounds=2), seed=3)
    assert len(result.outcomes) == len(script.victims)
    assert Counter(call.purpose for call in calls)["pruner"] == (
        len(script.names) * len(script.victims))


def test_the_leak_check_finds_a_foreign_secret_in_a_prompt() -> None:
    script = tiny()
    _, game, calls = play(script, find_procedure("demo"))
    secret = script.character("Cara").secrets[0]
    leaky = calls[0].model_copy(update={"seat": "Dan", "index": 999, "messages": [
        Message(role="user", content=f"Gossip: {secret}")]})
    assert [(seat, index) for seat, index, _ in leaks(script, game.table.events,
                                                       [leaky])] == [("Dan", 999)]


def sentences(texts: list[str]) -> set[str]:
    return {" ".join(part.split()) for text in texts for part in _SENTENCE.split(text)
            if len(part.strip()) >= 12}


def leaks(script: Script, events: list[Event], calls: list[CallRecord]) -> list[tuple]:
    """Sentences of other characters' private texts (or the truth) found in a seat's
    prompts without having reached the seat in an event it observed."""
    def private(name: str) -> set[str]:
        c = script.character(name)
        return sentences([c.story, *c.secrets, *(t.text for t in c.timeline),
                          *(a.text for a in c.acts)])

    truth = script.truth
    found = []
    for seat in script.names:
        seen = " ".join(" ".join(str(v) for v in e.model_dump().values())
                        for e in events if e.visible_to(seat))
        seen = " ".join(seen.split())
        foreign = set().union(*(private(n) for n in script.names if n != seat))
        if truth is not None:
            foreign |= sentences([truth.narrative, truth.solution])
        forbidden = {s for s in foreign - private(seat) if s not in seen
                     and s not in script.background}
        for call in calls:
            if call.seat == seat:
                prompt = " ".join(" ".join(m.text for m in call.messages).split())
                found += [(seat, call.index, s) for s in forbidden if s in prompt]
    return found
