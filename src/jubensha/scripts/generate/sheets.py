"""Character sheets: who each character is, what they did and saw (their timeline: true for
the innocent, the murderer's own true one beside the story to tell), what they hide, and
what they are playing for."""

from __future__ import annotations

from jubensha.scripts.generate.evidence import Card, Entry, Plan, told
from jubensha.scripts.generate.text import Voice, capital
from jubensha.scripts.generate.world import World
from jubensha.scripts.model import ActSheet, Character, Relationship, TimelineEntry

GENDERS = {"en": {"m": "male", "f": "female"}, "zh": {"m": "男", "f": "女"}}


def characters(voice: Voice, evidence: Plan) -> list[Character]:
    aside = voice.aside()
    return [_character(aside, evidence, person) for person in range(len(voice.world.people))]


def _character(voice: Voice, evidence: Plan, person: int) -> Character:
    world = voice.world
    me = world.people[person]
    murderer = person in world.murderers
    timeline = [_told(voice, person, item) for item in told(evidence, world, person)]
    secret = _secret_short(voice, person)
    return Character(
        name=voice.person(person), age=str(me.age), gender=GENDERS[voice.lang][me.gender],
        description=voice.pick("description", role=voice.role(person),
                               role_cap=voice.role(person), age=me.age,
                               trait=voice.entry("traits")[me.trait]["public"]),
        side="murderer" if murderer else "civilian",
        mission=voice.pick("mission_murderer" if murderer else
                           "mission_innocent",
                           secret=secret),
        final_goals=[voice.fill(goal) for goal in
                     voice.entry("goals_murderer" if murderer else "goals_innocent")],
        story=_story(voice, person, timeline),
        acts=_act_sheets(voice, evidence, person),
        timeline=timeline,
        secrets=_secrets(voice, person),
        needs_to_know=_needs(voice),
        relationships=_relationships(voice, person),
        performance=str(voice.entry("traits")[me.trait]["performance"]),
        rules=_rules(voice, person, secret),
        killed=[voice.victim] if murderer else [])


def _cards(evidence: Plan, person: int, where: str) -> list[Card]:
    return sorted((c for c in evidence.cards if c.where == where and c.character == person),
                  key=lambda c: (c.slot, c.id))


def _told(voice: Voice, person: int, item: Card | Entry) -> TimelineEntry:
    """A timeline entry: a card's sentence, or a stay of the murderer's account written as
    the innocent's are, so nothing in it tells the two apart."""
    world = voice.world
    if isinstance(item, Card):
        return TimelineEntry(time=world.time(item.slot), text=voice.card_text(item, "second"))
    slots = {"me": voice.person(person), "place": voice.place(item.place),
             "t1": world.time(item.start), "t2": world.time(item.end)}
    if item.companion >= 0:
        slots["who"] = voice.person(item.companion)
    return TimelineEntry(time=world.time(item.start),
                         text=voice.say(item.phrase, "second", **slots))


def _story(voice: Voice, person: int, timeline: list[TimelineEntry]) -> str:
    """Who the character is and how they talk, what they had against the victim, the
    evening in scenes (as their timeline tells it, and the visit they keep back), and
    what they would lie to hide. The murderer's reads like anyone's: the evening as they
    tell it, no killing and no stage direction."""
    world = voice.world
    me = world.people[person]
    opening = [voice.pick("identity", name=voice.person(person), age=me.age,
                          role=voice.role(person)),
               voice.pick("relation", years=_years(person, world.seed)),
               capital(voice.fill(str(voice.entry("traits")[me.trait]["voice"])))]
    paragraphs = [voice.join(opening), _background_of(voice, person)]
    evening = [(world.slot(entry.time or world.time(0)), 0, entry.text) for entry in timeline]
    if person in world.early:
        evening.append((world.early[person], 1, voice.pick(
            "early_story", t=world.time(world.early[person]), reason=_reason(voice, person),
            belonging=voice.belonging(person))))
    evening.sort(key=lambda told: told[:2])
    paragraphs += _scenes(voice, evening)
    quiet = "quiet." if world.knobs.quiet else ""
    paragraphs.append(voice.pick(f"{quiet}finder_story") if person == world.finder else
                      voice.pick(f"{quiet}others_story", finder=voice.person(world.finder))
                      if world.knobs.finder else voice.pick(f"{quiet}others_anonymous"))
    paragraphs.append(voice.pick("closing_secret", secret=_secret_short(voice, person)))
    return "\n\n".join(p for p in paragraphs if p) + "\n"


def _scenes(voice: Voice, evening: list[tuple[int, int, str]]) -> list[str]:
    """The evening in three scenes: before the time of death, around it, and after."""
    world = voice.world
    parts: list[list[str]] = [[], [], []]
    for slot, _, text in evening:
        parts[0 if slot < world.lo - 1 else 1 if slot <= world.hi else 2].append(text)
    return [voice.pick(f"scenes.{number}") + "\n" + voice.join(texts)
            for number, texts in enumerate(parts) if texts]


def _reason(voice: Voice, person: int) -> str:
    """Why the character went into the scene before the death: their secret's errand."""
    world = voice.world
    kind = world.secrets.get(person, "")
    if not kind:
        return voice.fill(voice.entry("early_reason.own"))
    return voice.fill(voice.entry(f"early_reason.{kind}"),
                      other=voice.person(_other(world, person)))


def _years(person: int, seed: int) -> int:
    return 2 + (person * 7 + seed) % 19


def _background_of(voice: Voice, person: int) -> str:
    """What the character brings to the evening: a motive (everyone has one), and for a
    visitor to the scene the secret that sent them there."""
    world = voice.world
    told = voice.pick(f"motive_story.{world.motives[person]}")
    if person in world.secrets:
        return voice.join([told, _secret_story(voice, person)])
    return told


def _secret_story(voice: Voice, person: int) -> str:
    """The character's secret (beside the motive), told alike wherever their sheet tells
    it: one variant per character, the same in both languages."""
    world = voice.world
    kind = world.secrets[person]
    return capital(voice.fill(voice.shared(f"secret_story.{kind}", key=person),
                              other=voice.person(_other(world, person))))


def _other(world: World, person: int) -> int:
    """The one other character a sheet relates to (and an affair's partner)."""
    return (person + 1) % len(world.people)


def _secret_short(voice: Voice, person: int) -> str:
    """What the character would lie to hide: the secret that sent them into the scene,
    else their motive."""
    world = voice.world
    if person in world.secrets:
        return voice.fill(voice.entry(f"secret_short.{world.secrets[person]}"),
                          other=voice.person(_other(world, person)))
    return voice.fill(voice.entry(f"motive_short.{world.motives[person]}"))


def _secrets(voice: Voice, person: int) -> list[str]:
    """What the character hides: the motive, and a visitor's secret and visit. The
    murderer's hold nothing more (the killing lives in the truth, and the role in the
    side and the mission), so nothing a seat may voice gives the role away."""
    world = voice.world
    found = [capital(voice.fill(voice.entry(f"motive_secret.{world.motives[person]}")))]
    if person in world.secrets:
        found.append(_secret_story(voice, person))
    if person in world.early and person not in world.murderers:
        quiet = "quiet." if world.knobs.quiet else ""
        found.append(voice.fill(voice.entry(f"{quiet}early_secret"),
                                t=world.time(world.early[person]),
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
    return [voice.fill(rule, secret=secret) for rule in voice.entry("rules_innocent")]


def _relationships(voice: Voice, person: int) -> list[Relationship]:
    world = voice.world
    labels = voice.entry("relation_labels")
    found = [Relationship(other=voice.victim,
                          labels=[labels["victim"][(person + world.seed) % len(labels["victim"])]],
                          description="" if world.knobs.quiet else voice.fill(
                              voice.entry("relation_victim"), years=_years(person, world.seed)))]
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
