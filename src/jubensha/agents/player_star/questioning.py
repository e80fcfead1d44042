"""Internal.

Search by questioning (section 2.3): read the sensors about each suspect of each victim,
summarise the readings, and ask the chosen suspect m questions.

The authors' code asks every suspect of every victim in each round. The engine gives a seat
one target per turn, so the seat reads the sensors about every (victim, suspect) pair it
may question and asks the pair the readings make most suspicious, discounted by the
questions it already put to that seat (``SuspectState.pick``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from pydantic import BaseModel

from jubensha.agents.player_star.core import PlayerCore
from jubensha.agents.player_star.sensors import Phase, Sensor, SensorReading
from jubensha.agents.toolkit import questions_schema
from jubensha.engine import Questions
from jubensha.llm import StructuredOutputError, enum_model


def sensors_for(core: PlayerCore, phase: Phase) -> list[Sensor]:
    return [sensor for sensor in core.config.sensors if sensor.used_in(phase)]


async def sense(core: PlayerCore, victim: str | None, suspect: str,
                phase: Phase) -> list[SensorReading]:
    """The phase's sensor readings about ``suspect``. A reading whose retrieved script and
    dialogue have not changed since it was taken is reused: nothing new could be read.
    Refinement with ``refine_call=combined`` asks every stale sensor in one call."""
    script, dialogue = await core.about(victim, suspect)
    digest = hashlib.sha256("\n\x00".join([*script, "\x01", *dialogue]).encode()).hexdigest()
    sensors = sensors_for(core, phase)
    found = {s.name: core.state.fresh(victim, suspect, s.name, digest) for s in sensors}
    stale = [s for s in sensors if found[s.name] is None]
    if stale and phase == "refinement" and core.config.refine_call == "combined":
        found |= await read_together(core, stale, victim, suspect, script, dialogue,
                                     context=digest)
    else:
        for sensor in stale:
            found[sensor.name] = await read(core, sensor, victim, suspect, script, dialogue,
                                            context=digest)
    readings = [reading for s in sensors if (reading := found.get(s.name)) is not None]
    for reading in readings:
        core.state.record(victim, suspect, reading)
    return readings


async def read(core: PlayerCore, sensor: Sensor, victim: str | None, suspect: str,
               script: list[str], dialogue: list[str], *,
               context: str) -> SensorReading | None:
    """One sensor call; a reply that never fits the choices reads as nothing."""
    lang = core.lang
    user = core.prompt("sensor", victim=victim, character=suspect,
                       dialogue=dialogue, question=sensor.ask(lang, suspect, victim or ""),
                       choices=sensor.shown_choices(lang), murderer=core.killed(victim))
    try:
        reply = await core.structured(f"sensor.{sensor.name}", user, sensor.reading_schema(lang),
                                      own=core.own(script, "character", suspect))
    except StructuredOutputError:
        return None
    choice = sensor.choice(reply.answer, lang)
    return SensorReading(sensor=sensor.name, value=choice.value, shown=reply.answer,
                         reason=reply.reason.strip(), score=choice.score, context=context)


async def read_together(core: PlayerCore, sensors: Sequence[Sensor], victim: str | None,
                        suspect: str, script: list[str], dialogue: list[str], *,
                        context: str) -> dict[str, SensorReading]:
    """Every sensor of ``sensors`` in one call (tag ``sensors``): one answer and one reason
    per sensor. A reply that never validates reads as nothing."""
    lang = core.lang
    asked = [{"name": s.name, "label": s.label.get(lang, s.name),
              "question": s.ask(lang, suspect, victim or ""),
              "choices": s.shown_choices(lang)} for s in sensors]
    user = core.prompt("sensors", victim=victim, character=suspect,
                       dialogue=dialogue, sensors=asked, murderer=core.killed(victim))
    schema = readings_schema(tuple((s.name, tuple(s.shown_choices(lang))) for s in sensors))
    try:
        reply = await core.structured("sensors", user, schema,
                                      core.config.structured_tokens * len(sensors),
                                      core.own(script, "character", suspect))
    except StructuredOutputError:
        return {}
    values = reply.model_dump()
    out = {}
    for sensor in sensors:
        shown = values[sensor.name]
        choice = sensor.choice(shown, lang)
        out[sensor.name] = SensorReading(
            sensor=sensor.name, value=choice.value, shown=shown, score=choice.score,
            reason=values[f"{sensor.name}_reason"].strip(), context=context)
    return out


def readings_schema(sensors: tuple[tuple[str, tuple[str, ...]], ...]) -> type[BaseModel]:
    """``{<sensor>: <one of its choices>, ..., <sensor>_reason: ..., ...}``: the choices
    first, so a reply cut short still carries them (one class per sensor set:
    ``enum_model`` caches it)."""
    return enum_model("Sensors", dict(sensors), {f"{name}_reason": "" for name, _ in sensors})


async def summary(core: PlayerCore, victim: str | None, suspect: str,
                  readings: Sequence[SensorReading]) -> str:
    """The readings as the prompts show them: listed (``summary=template``), or condensed
    by one model call per new set of readings (``summary=model``)."""
    labels = {sensor.name: sensor.label.get(core.lang, sensor.name)
              for sensor in core.config.sensors}
    listed = core.prompt("summary", character=suspect,
                         readings=[{"label": labels[r.sensor], **r.model_dump()}
                                   for r in readings])
    if core.config.summary == "template" or not readings:
        return listed
    key = (victim, suspect, tuple((r.sensor, r.context, r.value) for r in readings))
    if key not in core.summaries:
        core.summaries[key] = await core.text("summary", core.prompt(
            "summarise", victim=victim, character=suspect, readings=listed))
    return core.summaries[key]


async def generate(core: PlayerCore, victim: str | None, suspect: str, count: int) -> list[str]:
    """m questions for ``suspect`` about ``victim`` from the retrieved script and dialogue
    and the summary of the questioning sensors (civilian or murderer variant)."""
    script, dialogue = await core.about(victim, suspect)
    notes = ""
    if core.config.sensing:
        readings = core.state.readings(victim, suspect, sensors_for(core, "questioning"))
        notes = await summary(core, victim, suspect, readings)
    user = core.prompt("question", victim=victim, character=suspect,
                       dialogue=dialogue, summary=notes, count=count,
                       murderer=core.killed(victim))
    reply = await core.structured("question", user, questions_schema(count),
                                  own=core.own(script, "character", suspect))
    return [question.strip() for question in reply.questions]


def pairs_to_question(core: PlayerCore, candidates: Sequence[str],
                      victim: str | None = None) -> list[tuple[str | None, str]]:
    """Each victim's suspects the seat may question now; every candidate when the lists
    hold none of them (the procedure may forbid the suspects this turn)."""
    victims = [victim] if victim in core.victims else core.victims
    allowed = set(candidates)
    pairs = [(v, s) for v in victims for s in core.state.suspects(v) if s in allowed]
    return pairs or [(v, s) for v in victims for s in candidates]


async def ask(core: PlayerCore, candidates: Sequence[str], count: int,
              victim: str | None = None) -> Questions:
    """One questioning turn: sense, pick the most suspicious pair, ask it m questions."""
    pairs = pairs_to_question(core, candidates, victim)
    if core.config.sensing:
        for pair_victim, suspect in pairs:
            await sense(core, pair_victim, suspect, "questioning")
    chosen_victim, target = core.state.pick(pairs, sensors_for(core, "questioning"),
                                            core.config.repeat_discount)
    questions = await generate(core, chosen_victim, target, count)
    core.state.asked[target] += 1
    return Questions(target=target, questions=questions)
