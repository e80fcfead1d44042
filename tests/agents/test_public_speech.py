"""What a seat says in public is never its own draft, critique, reflections or private
sheet text: over whole games of the architectures that think before they speak (``ocot``
reflects on its objectives, ``werewolf`` drafts and criticises, ``player`` reads its
sensors) against the scripted fake, which repeats what a prompt's user message holds, no
public speech carries a passage of the speaker's own private sheet that the table had not
heard, nor a label of the seat's own notes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from jubensha.engine.events import Accused, Event, Spoke
from jubensha.engine.procedure import find_procedure
from jubensha.eval.audit import passages_of, public_texts, units
from jubensha.prompts import render
from jubensha.runlog.folder import read_run
from jubensha.runs.play import PlayConfig, plan_seats, play_game
from jubensha.scripts import Character, Script, find_script

PASSAGE = {"en": 8, "zh": 12}
"""Words (Chinese: characters) in a row that make a passage of the sheet."""


def grams(texts: list[str], n: int) -> set[int]:
    return set().union(*(set(passages_of(units(t), n).tolist()) for t in texts if t))


def private_texts(me: Character) -> list[str]:
    return [me.story, me.mission, *me.secrets, *me.final_goals,
            *(t.text for t in me.timeline), *(r.description for r in me.relationships),
            *(a.text for a in me.acts), *(g for a in me.acts for g in a.goals)]


def note_labels(lang: str) -> list[str]:
    """The headings the seats' own notes and script passages carry in their prompts."""
    marker = "\u2063"
    rendered = [render("werewolf", "notes", lang, draft=marker, reflection=marker),
                render("ocot", "notes", lang, objective=marker,
                       reflections=[{"objective": marker, "achieved": False,
                                     "reflection": marker}]),
                *(render("player_star", "own", lang, script=[marker], about=about,
                         character=marker, goals=[marker])
                  for about in ("start", "case", "question", "this", "character"))]
    return [part.strip(" -\n") for text in rendered for line in text.splitlines()
            for part in line.split(marker) if len(part.strip(" -\n")) > 4]


def said_aloud(events: list[Event], seat: str) -> list[tuple[int, str]]:
    return ([(e.index, e.text) for e in events if isinstance(e, Spoke) and e.speaker == seat
             and e.audience == "public"]
            + [(e.index, e.reason) for e in events if isinstance(e, Accused)
               and e.accuser == seat and e.reason])


def heard(events: list[Event], seat: str, before: int, n: int) -> set[int]:
    """Passages of everything the seat saw (not said itself) before event ``before``."""
    texts = [str(getattr(e, "text", "") or "") for e in events[:before]
             if e.visible_to(seat) and not (isinstance(e, Spoke) and e.speaker == seat)]
    return grams(texts, n)


@pytest.mark.parametrize("preset", ["demo", "mirage"])
@pytest.mark.parametrize("architecture", ["ocot", "werewolf", "player"])
@pytest.mark.parametrize("script_id", ["lighthouse-keeper", "tingsong-tea-estate"])
def test_no_public_speech_is_the_seats_own_notes_or_sheet(
        script_id: str, architecture: str, preset: str, tmp_path: Path) -> None:
    script: Script = find_script(script_id)
    n = PASSAGE[script.language]
    public = grams(public_texts(script), n)
    asyncio.run(play_game(PlayConfig(script=script, procedure=find_procedure(preset),
                                     plans=plan_seats(script, architecture, "scripted"),
                                     embedder="scripted"), tmp_path / "run"))
    events = read_run(tmp_path / "run").events
    labels = note_labels(script.language)
    assert any("draft" in label or "草稿" in label for label in labels)
    spoken = 0
    for character in script.characters:
        own = grams(private_texts(character), n) - public
        for index, text in said_aloud(events, character.name):
            spoken += 1
            said = set(passages_of(units(text), n).tolist())
            leaked = said & own - heard(events, character.name, index, n)
            assert not leaked, (character.name, text)
            assert not [label for label in labels if label in text], (character.name, text)
    assert spoken > len(script.characters)
