"""Character sheets: who each character is, what they did and saw (their timeline: true for
the innocent, the murderer's own true one beside the story to tell), what they hide, and
what they are playing for."""

from __future__ import annotations

from jubensha.scripts.generate.evidence import Card, Plan, segments
from jubensha.scripts.generate.text import Voice, capital
from jubensha.scripts.generate.world import World
from jubensha.scripts.model import ActSheet, Character, Relationship, TimelineEntry

GENDERS = {"en": {"m": "male", "f": "female"}, "zh": {"m": "男", "f": "女"}}


def characters(voice: Voice, evidence: Plan) -> list[Character]:
    return [_character(voice, evidence, person) for person in range(len(voice.world.people))]


def _character(voice: Voice, evidence: Plan, person: int) -> Character:
    world = voice.world
    me = world.people[person]
    murderer = person in world.murderers
    entries = (_murderer_timeline(voice, person) if murderer else
               [TimelineEntry(time=world.time(card.slot), text=voice.card_text(card, "second"))
                for card in _cards(evidence, person, "timeline")])
    secret = "" if murderer else _secret_short(voice, person)
    return Character(
        name=voice.person(person), age=str(me.age), gender=GENDERS[voice.lang][me.gender],
        description=voice.pick("description", role=voice.role(person),
                               role_cap=voice.role(person), age=me.age,
                               trait=voice.entry("traits")[me.trait]["public"]),
        side="murderer" if murderer else "civilian",
        mission=voice.pick("mission_murderer" if murderer else
                           "mission_innocent" if secret else "mission_innocent_plain",
                           secret=secret),
        final_goals=[voice.fill(goal) for goal in
                     voice.entry("goals_murderer" if murderer else "goals_innocent")],
        story=_story(voice, person, entries),
        acts=_act_sheets(voice, evidence, person),
        timeline=entries,
        secrets=_secrets(voice, person),
        needs_to_know=_needs(voice),
        relationships=_relationships(voice, person),
        performance=str(voice.entry("traits")[me.trait]["performance"]),
        rules=_rules(voice, person, secret),
        killed=[voice.victim] if murderer else [])


def _cards(evidence: Plan, person: int, where: str) -> list[Card]:
    return sorted((c for c in evidence.cards if c.where == where and c.character == person),
                  key=lambda c: (c.slot, c.id))


def _murderer_timeline(voice: Voice, person: int) -> list[TimelineEntry]:
    """The murderer's true evening: their stays (as the innocent's are written) and the
    murder itself."""
    world = voice.world
    entries = []
    for place, start, end, company in segments(world, person):
        if start == world.murder:
            entries.append(TimelineEntry(time=world.time(start), text=voice.pick(
                f"murder_story.{world.kinds[world.weapon]}", t=world.time(start))))
            continue
        slots = {"me": voice.person(person), "place": voice.place(place),
                 "t1": world.time(start), "t2": world.time(end)}
        if company:
            slots["who"] = voice.person(min(company))
        victim_there = any(world.victim_at[s] == place for s in range(start, end))
        phrase = "with" if company else "self" if victim_there else "alone"
        entries.append(TimelineEntry(time=world.time(start),
                                     text=voice.say(phrase, "second", **slots)))
    return entries


def _story(voice: Voice, person: int, entries: list[TimelineEntry]) -> str:
    world = voice.world
    me = world.people[person]
    murderer = person in world.murderers
    opening = [voice.pick("identity", name=voice.person(person), age=me.age,
                          role=voice.role(person)),
               voice.pick("relation", years=_years(person, world.seed))]
    paragraphs = [voice.join(opening)]
    paragraphs.append(_background_of(voice, person))
    evening = [(world.slot(entry.time or world.time(0)), 0, entry.text) for entry in entries]
    if person in world.early:
        evening.append((world.early[person], 1, voice.pick(
            "early_story", t=world.time(world.early[person]), belonging=voice.belonging(person))))
    if murderer:
        evening.append((world.murder, 1, voice.pick("after_murder")))
    evening.sort(key=lambda told: told[:2])
    if murderer:
        evening.append((world.found, 2, voice.pick(
            "cover", t1=world.time(world.lo - 1), t2=world.time(world.hi + 1))))
    paragraphs.append(voice.pick("tonight") + "\n" + voice.join([t for *_, t in evening]))
    paragraphs.append(voice.pick("finder_story") if person == world.finder else
                      voice.pick("others_story", finder=voice.person(world.finder))
                      if world.knobs.finder else voice.pick("others_anonymous"))
    secret = "" if murderer else _secret_short(voice, person)
    closing = ("murderer_closing" if murderer else
               "innocent_closing" if secret else "innocent_closing_plain")
    paragraphs.append(voice.pick(closing, secret=secret))
    return "\n\n".join(p for p in paragraphs if p) + "\n"


def _years(person: int, seed: int) -> int:
    return 2 + (person * 7 + seed) % 19


def _background_of(voice: Voice, person: int) -> str:
    """What the character brings to the evening: a motive, or a secret of another kind."""
    world = voice.world
    if person in world.motives:
        return voice.pick(f"motive_story.{world.motives[person]}")
    return _secret_story(voice, person)


def _secret_story(voice: Voice, person: int) -> str:
    """The character's secret (not a motive), told alike wherever their sheet tells it:
    one variant per character, the same in both languages."""
    world = voice.world
    kind = world.secrets.get(person, "past")
    return capital(voice.fill(voice.shared(f"secret_story.{kind}", key=person),
                              other=voice.person(_other(world, person))))


def _other(world: World, person: int) -> int:
    """The one other character a sheet relates to (and an affair's partner)."""
    return (person + 1) % len(world.people)


def _secret_short(voice: Voice, person: int) -> str:
    world = voice.world
    if person in world.motives:
        return voice.fill(voice.entry(f"motive_short.{world.motives[person]}"))
    kind = world.secrets.get(person, "past")
    return voice.fill(voice.entry(f"secret_short.{kind}"),
                      other=voice.person(_other(world, person)))


def _secrets(voice: Voice, person: int) -> list[str]:
    world = voice.world
    found = []
    if person in world.murderers:
        t = world.time(world.murder)
        found += [voice.fill(voice.entry("murder_secret"), t=t),
                  voice.fill(voice.entry("hideout_secret"), t=t)]
    if person in world.motives:
        found.append(voice.fill(voice.entry(f"motive_secret.{world.motives[person]}")))
    else:
        found.append(_secret_story(voice, person))
    if person in world.early:
        found.append(voice.fill(voice.entry("early_secret"), t=world.time(world.early[person]),
                                belonging=voice.belonging(person)))
    return found


def _needs(voice: Voice) -> list[str]:
    world = voice.world
    kind = voice.entry("weapon_kinds")[world.kinds[world.weapon]]
    return [voice.fill(need, weapon_kind=kind) for need in voice.entry("needs")]


def _rules(voice: Voice, person: int, secret: str) -> list[str]:
    world = voice.world
    if person in world.murderers:
        return [voice.fill(rule, t=world.time(world.lo)) for rule in
                voice.entry("rules_murderer")]
    key = "rules_innocent" if secret else "rules_innocent_plain"
    return [voice.fill(rule, secret=secret) for rule in voice.entry(key)]


def _relationships(voice: Voice, person: int) -> list[Relationship]:
    world = voice.world
    labels = voice.entry("relation_labels")
    found = [Relationship(other=voice.victim,
                          labels=[labels["victim"][(person + world.seed) % len(labels["victim"])]],
                          description=voice.fill(voice.entry("relation_victim"),
                                                 years=_years(person, world.seed)))]
    other = _other(world, person)
    if other != person:
        found.append(Relationship(
            other=voice.person(other),
            labels=[labels["other"][(person + other) % len(labels["other"])]],
            description=voice.pick("relation_other", other=voice.person(other))))
    return found


def _act_sheets(voice: Voice, evidence: Plan, person: int) -> list[ActSheet]:
    """A sheet for each later act: the act's goal, and what the character now remembers
    (the testimony the difficulty keeps back until then)."""
    world = voice.world
    sheets = []
    for act in range(2, world.acts + 1):
        cards = [c for c in _cards(evidence, person, "act_sheet") if c.act == act]
        text = voice.pick("act_sheet") + "\n" + voice.join(
            [voice.card_text(c, "second") for c in cards]) if cards else ""
        sheets.append(ActSheet(act=act, text=text,
                               goals=[voice.fill(g) for g in voice.entry("act_goals")]))
    return sheets
