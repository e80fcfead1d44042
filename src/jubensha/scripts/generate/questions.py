"""The evaluation questions every generated script ships with, so that each metric of the
papers runs on it: WellPlay's per-character multiple choice (who 10 points; how, why and
when 5; relations 2), ThinkThrice's inferential questions with their rationale and the
WhodunitBench reasoning steps, factual questions from each character's own timeline, and
the open motive and method questions with their key points."""

from __future__ import annotations

import random

from jubensha.scripts.generate.evidence import account, entries
from jubensha.scripts.generate.prove import Proven
from jubensha.scripts.generate.text import Voice
from jubensha.scripts.generate.world import MOTIVES
from jubensha.scripts.model import (
    Character,
    ChoiceQuestion,
    FactualQuestion,
    OpenQuestion,
    QuestionSets,
)

LETTERS = "abcdefghijkl"


def questions(voice: Voice, proven: Proven, characters: list[Character], method: str
              ) -> QuestionSets:
    rng = random.Random(f"jubensha-questions/{voice.world.seed}/{voice.world.knobs.level}")
    main = _main(voice, proven, rng)
    choice = [q.model_copy(update={"id": f"i-{q.aspect}", "set": "inferential"})
              for q in main]
    for person, character in enumerate(characters):
        tag = f"wp-{person + 1:02d}"
        choice += [q.model_copy(update={"id": f"{tag}-{q.aspect}", "asked_of": character.name,
                                        "set": "wellplay", "rationale": "", "steps": None})
                   for q in main]
        choice += _relations(voice, characters, person, tag, rng)
    return QuestionSets(choice=choice, factual=_factual(voice, characters),
                        open=_open(voice, method))


def _options(right: str, wrong: list[str], rng: random.Random) -> tuple[dict[str, str], str]:
    """Up to four options, the right one among them at a random letter."""
    texts = list(dict.fromkeys([right, *wrong]))[:4]
    rng.shuffle(texts)
    options = {LETTERS[i]: text for i, text in enumerate(texts)}
    return options, LETTERS[texts.index(right)]


def _main(voice: Voice, proven: Proven, rng: random.Random) -> list[ChoiceQuestion]:
    """Who, how, why and when, with the rationale and the steps the proof takes."""
    world = voice.world
    murderer = voice.people(world.murderers)
    everyone = [voice.person(p) for p in range(len(world.people))]
    who_options = {LETTERS[i]: name for i, name in enumerate(everyone)}
    who_answer = [LETTERS[p] for p in world.murderers]
    items = [voice.item(i) for i in range(len(world.items)) if i != world.weapon]
    rng.shuffle(items)
    how_options, how = _options(voice.item(world.weapon), items, rng)
    reasons = voice.entry("motive_reason")
    motive = world.motives[world.murderers[0]]
    others = [reasons[m] for m in MOTIVES if m != motive]
    rng.shuffle(others)
    why_options, why = _options(reasons[motive], others, rng)
    when_options, when = _options(*_ranges(voice, rng), rng)
    ask = voice.entry("questions")
    motive_text = voice.fill(voice.entry(f"motive_truth.{motive}"), name=murderer)
    t1, t2 = world.time(world.lo), world.time(world.hi)
    return [
        ChoiceQuestion(id="who", question=voice.fill(ask["who"]), options=who_options,
                       answer=who_answer, multiple=len(who_answer) > 1, category="objective",
                       aspect="who", steps=max(proven.combine, 1),
                       rationale=voice.fill(ask["rationale_who"], name=murderer,
                                            reasons=voice.entry("suspects_line").rstrip(".。"))),
        ChoiceQuestion(id="how", question=voice.fill(ask["how"]), options=how_options,
                       answer=[how], category="reasoning", aspect="how", steps=3,
                       rationale=voice.fill(ask["rationale_how"], name=murderer)),
        ChoiceQuestion(id="why", question=voice.fill(ask["why"]), options=why_options,
                       answer=[why], category="reasoning", aspect="why", steps=2,
                       rationale=voice.fill(ask["rationale_why"], motive_cap=motive_text)),
        ChoiceQuestion(id="when", question=voice.fill(ask["when"]), options=when_options,
                       answer=[when], category="reasoning", aspect="when", steps=2,
                       rationale=voice.fill(ask["rationale_when"], t1=t1, t2=t2)),
    ]


def _ranges(voice: Voice, rng: random.Random) -> tuple[str, list[str]]:
    """The true span of the time of death, and three others of the evening."""
    world = voice.world
    length = world.hi - world.lo
    ask = voice.entry("questions")

    def span(lo: int) -> str:
        return voice.fill(ask["range"], t1=world.time(lo), t2=world.time(lo + length))

    starts = [lo for lo in range(17 - length) if abs(lo - world.lo) >= 2]
    rng.shuffle(starts)
    return span(world.lo), [span(lo) for lo in starts[:3]]


def _relations(voice: Voice, characters: list[Character], person: int, tag: str,
               rng: random.Random) -> list[ChoiceQuestion]:
    """How two other characters relate to the victim, as their sheets say."""
    ask = voice.entry("questions")
    labels = voice.entry("relation_labels.victim")
    found = []
    others = [c for i, c in enumerate(characters) if i != person][:2]
    for number, other in enumerate(others, start=1):
        right = other.relationships[0].labels[0]

        def option(label: str, name: str = other.name) -> str:
            return voice.fill(ask["relation_option"], name=name, label=label)

        options, answer = _options(option(right), [option(x) for x in labels if x != right],
                                   rng)
        found.append(ChoiceQuestion(
            id=f"{tag}-relation-{number}",
            question=voice.fill(ask["relation"], name=other.name), options=options,
            answer=[answer], category="relations", aspect="relationship",
            asked_of=characters[person].name, set="wellplay"))
    return found


def _factual(voice: Voice, characters: list[Character]) -> list[FactualQuestion]:
    """Where each character was in the first two stays their timeline tells."""
    ask = voice.entry("questions")
    world = voice.world
    found = []
    for person, character in enumerate(characters):
        told = {entry.time: entry.text for entry in character.timeline}
        row = account(world, person) if person in world.murderers else None
        lies = {world.murder, world.early.get(person, -1)}
        stays = [(e.start, e.end, e.place) for e in entries(world, person, row)
                 if not lies & set(range(e.start, e.end)) and world.time(e.start) in told][:2]
        for number, (start, end, place) in enumerate(stays, start=1):
            found.append(FactualQuestion(
                id=f"f-{person + 1:02d}-{number}",
                question=voice.fill(ask["where_was"], name=character.name,
                                    t1=world.time(start), t2=world.time(end)),
                answer=voice.place(place), source=told[world.time(start)],
                character=character.name))
    return found


def _open(voice: Voice, method: str) -> list[OpenQuestion]:
    world = voice.world
    ask = voice.entry("questions")
    murderer = voice.people(world.murderers)
    t1, t2 = world.time(world.lo), world.time(world.hi)
    motive = world.motives[world.murderers[0]]
    return [
        OpenQuestion(id="o-motive", kind="motive", victim=voice.victim,
                     question=voice.fill(ask["motive_question"]),
                     reference=voice.fill(voice.entry(f"motive_truth.{motive}"), name=murderer),
                     key_points=[voice.fill(ask["key_who"], name=murderer),
                                 voice.fill(voice.entry(f"motive_reason.{motive}"))]),
        OpenQuestion(id="o-method", kind="method", victim=voice.victim,
                     question=voice.fill(ask["method_question"]),
                     reference=voice.fill(ask["method_reference"], method=method, t1=t1, t2=t2),
                     key_points=[voice.fill(ask["key_who"], name=murderer),
                                 voice.fill(ask["key_weapon"]), voice.fill(ask["key_place"]),
                                 voice.fill(ask["key_time"], t1=t1, t2=t2)]),
    ]
