"""The text a record is asked about, built from what players can read and nothing else:
the story, the rules, the dead, the people's public descriptions, each act's public text,
the clue cards (without their key or misleading flags), and

- in the *table* view, what each person tells the table: the sentences of their timeline
  and act sheets that state a fact in the fact language of a generated mystery (the texts
  its proof may cite, docs/generated.md); a sentence that states none, such as a
  murderer's own account of the kill, stays on the sheet, whoever's it is;
- in the *seat* view, one character's own script, as that player reads it.

Never a character's side, mission, goals, rules or secrets, the truth, or a card's id or
flags; cards come in an order drawn from the script's id, not the file's (which lists the
key cards first)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from jubensha.prompts import render
from jubensha.scripts.model import PUBLIC, Character, Clue, Script
from jubensha.scripts.proof.phrases import Reader


@dataclass(frozen=True)
class Card:
    title: str
    text: str
    location: str | None = None


@dataclass(frozen=True)
class Part:
    """A person's lines: what they tell the table, or (a seat) their own script."""

    name: str
    story: str = ""
    lines: list[str] = field(default_factory=list)


def table_view(script: Script) -> str:
    """What the whole table can learn: the public texts, every card, each account."""
    return _render(script, _cards(script, script.clues), told=accounts(script))


def player_view(script: Script) -> str:
    """The mystery as a player reads it before play: the public texts and every card
    (``jubensha scripts show``); what each person tells comes in play."""
    return _render(script, _cards(script, script.clues))


def seat_view(script: Script, character: Character) -> str:
    """What ``character``'s player reads: the public texts, the cards public from the
    start and those the character holds, and its own script."""
    shown = [c for c in script.clues
             if (c.holder == PUBLIC and not c.location) or c.holder == character.name]
    own = Part(character.name, character.story,
               [*(_timed(e.time, e.text) for e in character.timeline),
                *(sheet.text.strip() for sheet in character.acts if sheet.text.strip())])
    return _render(script, _cards(script, shown), seat=own)


def _render(script: Script, cards: list[Card], told: list[Part] | None = None,
            seat: Part | None = None) -> str:
    return render("export", "casebook", script.language, title=script.title,
                  background=script.background, rules=script.rules, victims=script.victims,
                  people=script.characters,
                  acts=[a for a in script.acts if a.public_text.strip()],
                  cards=cards, accounts=told or [], seat=seat).strip() + "\n"


def _cards(script: Script, clues: list[Clue]) -> list[Card]:
    """The cards in an order drawn from the script's id (the same every export)."""
    ordered = sorted(clues, key=lambda c: (c.act, c.id))
    random.Random(f"jubensha-export/{script.id}").shuffle(ordered)
    ordered.sort(key=lambda c: c.act)  # stable: shuffled within each act
    return [Card(c.title, c.caption or c.text if c.image else c.text, c.location)
            for c in ordered]


def accounts(script: Script) -> list[Part]:
    """What each character tells the table: the fact sentences of its timeline and act
    sheets (only a generated mystery, which has a proof, has a fact language)."""
    if script.truth is None or script.truth.proof is None:
        return []
    reader = Reader(script.language, script.names, [v.name for v in script.victims])
    found = []
    for character in script.characters:
        texts = [*(e.text for e in character.timeline), *(s.text for s in character.acts)]
        lines = list(dict.fromkeys(said.text for text in texts
                                   for said in reader.read(text, character.name)))
        if lines:
            found.append(Part(character.name, lines=lines))
    return found


def _timed(time: str | None, text: str) -> str:
    return f"{time} {text}" if time and not text.startswith(time) else text
