"""What every player reads: the title, the background, the rules, the victim, the acts and
the clue cards (each card's text states its facts; traces only say whose belonging lies
where). A card is ``key`` when the proof may use it, whoever it names: no flag tells the
murderer's cards from the others'."""

from __future__ import annotations

from jubensha.scripts.generate.evidence import Card, Plan
from jubensha.scripts.generate.text import Voice, capital
from jubensha.scripts.model import PUBLIC, Act, Clue, Victim


def clue_id(card: Card) -> str:
    return f"c{card.number:02d}"


def title(voice: Voice) -> str:
    return capital(voice.fill(voice.shared("title")))


def background(voice: Voice, evidence: Plan) -> str:
    world = voice.world
    setting = voice.setting
    intro = voice.pick("intro", era=setting["era"][voice.lang][world.era],
                       cutoff=setting["cutoff"][voice.lang])
    cast = voice.fill(voice.entry("cast"), cast=voice.list([
        voice.fill(voice.entry("cast_member"), name=voice.person(p), role=voice.role(p))
        for p in range(len(world.people))]))
    gathering = capital(voice.fill(voice.shared("occasion"), victim_role=voice.role(-1)))
    places = voice.fill(voice.entry("places"), places=voice.list(
        [voice.place(i) for i in range(len(world.places))]))
    facts = [voice.card_text(card) for card in evidence.cards if card.where == "background"]
    space = " " if voice.lang == "en" else ""
    return "\n\n".join([intro, space.join([gathering, cast]), places,
                        space.join([*facts, voice.pick("closing")])]) + "\n"


def rules(voice: Voice) -> str:
    world = voice.world
    return voice.fill(voice.entry("rules"), count=len(world.people), places=voice.list(
        [voice.place(i) for i in range(len(world.places))])) + "\n"


def victims(voice: Voice) -> list[Victim]:
    world = voice.world
    return [Victim(name=voice.victim, description=voice.fill(
        voice.entry("victim_description"), victim_role=voice.role(-1),
        age=world.victim.age))]


def acts(voice: Voice) -> list[Act]:
    titles = voice.entry("acts.titles")
    texts = voice.entry("acts.public")
    count = voice.world.acts
    chosen = [0] if count == 1 else [0, 2] if count == 2 else list(range(count))
    return [Act(number=number + 1, title=titles[index % len(titles)],
                public_text=texts[index % len(texts)])
            for number, index in enumerate(chosen)]


def clues(voice: Voice, evidence: Plan) -> list[Clue]:
    return [_clue(voice, card) for card in evidence.cards if card.where == "clue"]


def _clue(voice: Voice, card: Card) -> Clue:
    item = next((voice.item(f.item) for f in card.facts if f.item >= 0), "")
    belonging = voice.belonging(card.subject)
    record = voice.record(card)
    if card.role in ("trace", "belonging"):
        text = voice.pick(card.role, name=voice.person(card.subject), belonging=belonging,
                          place=voice.place(card.location))
    elif card.role == "autopsy":
        world = voice.world
        wound = voice.shared(f"wounds.{world.kinds[world.weapon]}")
        text = voice.join([voice.pick("wound_found", wound=wound), voice.card_text(card)])
    else:
        text = voice.card_text(card)
    return Clue(
        id=clue_id(card),
        title=voice.pick(f"clue_titles.{card.role}", item=item, record=record,
                         record_cap=record, belonging=belonging,
                         place=voice.place(card.location) if card.location >= 0 else "",
                         name=voice.person(card.subject) if card.subject >= 0 else ""),
        text=text,
        holder=voice.person(card.character) if card.character >= 0 else PUBLIC,
        location=voice.place(card.location) if card.location >= 0 else None,
        act=card.act, key=bool(card.facts))
