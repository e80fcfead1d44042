"""The scripted fake is a fair, dull opponent: over whole games on every bundled mystery,
no seat it plays ever says a sentence of its own private sheet (story, secrets, mission,
goals, act texts) or of the instructions on it ("You are the murderer…"), unless that
sentence was said at the table where the seat could hear it."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from jubensha.engine.events import Spoke
from jubensha.engine.procedure import find_procedure
from jubensha.runlog.folder import read_run
from jubensha.runs.play import PlayConfig, plan_seats, play_game
from jubensha.scripts import bundled_scripts, find_script
from jubensha.scripts.model import Character

SENTENCE = re.compile(r"(?<=[.!?。！？])\s*|\n+")


def sentences(text: str) -> set[str]:
    return {s.strip() for s in SENTENCE.split(text) if len(s.strip()) > 12}


def private_sentences(me: Character) -> set[str]:
    texts = [me.story, me.mission, *me.secrets, *me.final_goals, *me.rules,
             *(t.text for t in me.timeline), *(a.text for a in me.acts),
             *(g for a in me.acts for g in a.goals)]
    return set().union(*(sentences(t) for t in texts))


INSTRUCTIONS = ("You are the murderer", "Hide it", "你是凶手")


@pytest.mark.parametrize("script_id", sorted(bundled_scripts()))
def test_the_fake_never_reads_its_own_sheet_aloud(script_id: str, tmp_path: Path) -> None:
    script = find_script(script_id)
    plans = plan_seats(script, "naive", "scripted")
    asyncio.run(play_game(PlayConfig(script=script, procedure=find_procedure("demo"), plans=plans),
                          tmp_path / "run"))
    events = read_run(tmp_path / "run").events
    spoken = [e for e in events if isinstance(e, Spoke)]
    assert spoken
    for character in script.characters:
        mine = [e for e in spoken if e.speaker == character.name]
        heard_before = {e.index: set().union(*(sentences(getattr(o, "text", "") or "")
                                                 for o in events[:e.index]
                                                 if o.visible_to(character.name)
                                                 and not (isinstance(o, Spoke)
                                                          and o.speaker == character.name)))
                        for e in mine}
        secret = private_sentences(character)
        for speech in mine:
            leaked = {s for s in sentences(speech.text) & secret
                      if s not in heard_before[speech.index]}
            assert not leaked, (character.name, speech.kind, leaked)
            assert not any(words in speech.text for words in INSTRUCTIONS), speech.text
