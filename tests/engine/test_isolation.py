"""Information isolation, the core rule: no prompt a seat sends contains a sentence that only
another character's private texts hold, unless that sentence reached the seat in an event it
observed. Checked on the real run log of whole games on every mystery."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import TINY

from jubensha.engine.events import ActStarted, ClueRevealed, Event
from jubensha.engine.procedure import find_procedure
from jubensha.llm.base import GenerateConfig, Message
from jubensha.llm.calls import CallRecord
from jubensha.llm.fake import ScriptedModel
from jubensha.runlog.folder import RunLog, read_run
from jubensha.runs.play import PlayConfig, plan_seats, play_game
from jubensha.scripts import PUBLIC, Character, Script, bundled_scripts, load_script

SCRIPTS = {**{k: str(v) for k, v in bundled_scripts().items()}, "tiny": str(TINY)}
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*|\n+")
MIN_CHARS = 12


def sentences(texts: Iterable[str]) -> set[str]:
    found = set()
    for text in texts:
        for part in _SENTENCE.split(text or ""):
            part = " ".join(part.split())
            if len(part) >= MIN_CHARS:
                found.add(part)
    return found


def private_texts(character: Character, script: Script) -> list[str]:
    texts = [character.story, *character.secrets, *(t.text for t in character.timeline),
             *(sheet.text for sheet in character.acts)]
    names = set(character.all_names)
    texts += [clue.text for clue in script.clues if clue.holder in names]
    return texts


def public_texts(script: Script) -> list[str]:
    texts = [script.background, script.rules, *(v.description for v in script.victims),
             *(c.description for c in script.characters), *(a.public_text for a in script.acts)]
    return texts + [clue.text for clue in script.clues if clue.holder == PUBLIC]


def strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def observed_text(events: list[Event], seat: str) -> str:
    return " ".join(" ".join(strings(e.model_dump())) for e in events if e.visible_to(seat))


def leaks(script: Script, events: list[Event], calls: list[CallRecord]) -> list[tuple]:
    """(seat, call index, sentence) for every foreign private sentence found in a prompt."""
    truth = script.truth
    secret_story = [truth.narrative, truth.solution, *truth.reasoning_chain] if truth else []
    public = public_texts(script)
    found = []
    for character in script.characters:
        seat = character.name
        own = sentences(private_texts(character, script))
        seen = " ".join(observed_text(events, seat).split())
        foreign = sentences(secret_story).union(*(
            sentences(private_texts(other, script)) for other in script.characters
            if other.name != seat))
        forbidden = {s for s in foreign - own - sentences(public) if s not in seen}
        for call in calls:
            if call.seat != seat:
                continue
            prompt = " ".join(" ".join(m.text for m in call.messages).split())
            found += [(seat, call.index, s) for s in forbidden if s in prompt]
    return found


def play(script_path: str, preset: str, out: Path, architecture: str = "naive",
         seats: tuple[str, ...] = ()) -> tuple[Script, RunLog]:
    script = load_script(script_path)
    plans = plan_seats(script, architecture, "scripted", seats)
    asyncio.run(play_game(PlayConfig(script=script, procedure=find_procedure(preset), plans=plans,
                                     seed=11), out, models={"scripted": ScriptedModel(seed=4)}))
    return script, read_run(out)


@pytest.mark.parametrize("preset", ["thinkthrice", "player"])
@pytest.mark.parametrize("script_id", list(SCRIPTS))
def test_no_prompt_holds_another_characters_private_text(script_id: str, preset: str,
                                                          tmp_path: Path) -> None:
    script, run = play(SCRIPTS[script_id], preset, tmp_path / "run")
    assert run.finished and run.calls
    assert {call.seat for call in run.calls} == set(script.names)
    assert leaks(script, run.events, run.calls) == []
    check_private_events_reach_only_their_owner(script, run.events)


ARCHITECTURE_PRESETS = {"thinkthrice:mr+sr+sv1": "demo", "player": "player", "werewolf": "demo",
                        "ocot": "demo", "extractive": "demo", "mirage": "mirage",
                        "whodunit": "whodunit"}
"""Every architecture on the procedure it was made for (the short demo for the others)."""


@pytest.mark.parametrize("script_id", sorted(bundled_scripts()))
@pytest.mark.parametrize("architecture", list(ARCHITECTURE_PRESETS))
def test_no_architecture_puts_another_characters_private_text_in_a_prompt(
        architecture: str, script_id: str, tmp_path: Path) -> None:
    script, run = play(SCRIPTS[script_id], ARCHITECTURE_PRESETS[architecture],
                       tmp_path / "run", architecture)
    assert run.finished
    assert leaks(script, run.events, run.calls) == []


@pytest.mark.parametrize("preset", ["mirage", "whodunit"])
def test_a_mixed_table_keeps_every_seat_to_its_own_view(preset: str, tmp_path: Path) -> None:
    script = load_script(SCRIPTS["halvard-observatory"])
    architectures = ["thinkthrice:mr+sr", "player", "werewolf", "ocot", "mirage", "whodunit"]
    seats = tuple(f"{name}={arch}@" for name, arch in zip(script.names, architectures,
                                                           strict=True))
    script, run = play(SCRIPTS["halvard-observatory"], preset, tmp_path / "run", seats=seats)
    assert run.finished
    assert {seat.architecture for seat in run.meta.seats.values()} == set(architectures)
    assert leaks(script, run.events, run.calls) == []


def check_private_events_reach_only_their_owner(script: Script, events: list[Event]) -> None:
    for event in events:
        if isinstance(event, ActStarted) and event.sheet is not None:
            assert event.audience != "public" and len(event.audience) == 1
            assert script.character(event.audience[0]).act_sheet(event.act) == event.sheet
        if isinstance(event, ClueRevealed):
            holder = next(c.holder for c in script.clues if c.id == event.clue_id)
            expected = "public" if holder == PUBLIC else [script.character(holder).name]
            assert event.audience == expected


def test_the_check_catches_a_prompt_that_leaks(tmp_path: Path) -> None:
    script, run = play(str(TINY), "demo", tmp_path / "run")
    cara_secret = script.character("Cara").secrets[0]
    leaky = CallRecord(index=999, seat="Dan", model="scripted", config=GenerateConfig(),
                       messages=[Message(role="user", content=f"Gossip: {cara_secret}")])
    found = leaks(script, run.events, [*run.calls, leaky])
    assert [(seat, index) for seat, index, _ in found] == [("Dan", 999)]
