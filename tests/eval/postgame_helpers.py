"""Helpers for the post-game metrics' tests: a short game played with the scripted fake,
evaluated the way ``jubensha eval`` does (calls logged and cached in RUN_DIR/eval/)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from jubensha.engine.events import Event
from jubensha.engine.procedure import find_procedure
from jubensha.eval.judge import EVAL_CALLS, open_session
from jubensha.eval.registry import MetricContext, get_metric
from jubensha.eval.report import MetricResult
from jubensha.llm.base import Model, Request
from jubensha.llm.calls import CallRecord, read_calls
from jubensha.llm.fake import ScriptedModel
from jubensha.runlog.folder import read_run
from jubensha.runs.play import PlayConfig, plan_seats, play_game
from jubensha.scripts import Character, Script, find_script

_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*|\n+")


async def played(out: Path, script_id: str = "lighthouse-keeper", procedure: str = "demo",
                 seed: int = 3) -> Path:
    """A whole game of naive agents on the scripted fake, written to ``out``."""
    script = find_script(script_id)
    plans = plan_seats(script, "naive", "scripted")
    await play_game(PlayConfig(script=script, procedure=find_procedure(procedure), plans=plans,
                               seed=seed, script_source=script_id), out,
                    models={"scripted": ScriptedModel()})
    return out


def play(out: Path, script_id: str = "lighthouse-keeper", procedure: str = "demo",
         seed: int = 3) -> Path:
    """``played`` outside an event loop (module fixtures)."""
    return asyncio.run(played(out, script_id, procedure, seed))


async def evaluate(name: str, run_dir: Path, *, script: Script | None = None,
                   judge: Model | None = None, seat_model: Model | None = None,
                   samples: int = 3, options: dict[str, Any] | None = None
                   ) -> tuple[MetricResult, list[CallRecord]]:
    """Score ``run_dir`` with metric ``name`` (``options``: the metric's options); the
    result and the calls it logged."""
    run = read_run(run_dir)
    session = open_session(run_dir)
    first = session.calls.count
    try:
        context = MetricContext(script=script or find_script(run.meta.script_id), run=run,
                                judge=judge, answerer=seat_model, samples=samples,
                                options={name: options} if options else {},
                                calls=session.calls, cache=session.cache)
        result = await get_metric(name).compute(context)
    finally:
        session.close()
    calls = read_calls(session.folder / EVAL_CALLS) if (session.folder / EVAL_CALLS).exists() \
        else []
    return result, [c for c in calls if c.index >= first]


def prompt(request: Request | CallRecord) -> str:
    return "\n".join(m.text for m in request.messages)


def sentences(texts: Iterable[str], min_chars: int = 12) -> set[str]:
    found = set()
    for text in texts:
        for part in _SENTENCE.split(text or ""):
            part = " ".join(part.split())
            if len(part) >= min_chars:
                found.add(part)
    return found


def private_sentences(character: Character, script: Script) -> set[str]:
    """What only ``character``'s own sheet holds: story, timeline, secrets, acts, clues."""
    names = set(character.all_names)
    return sentences([character.story, *character.secrets,
                      *(t.text for t in character.timeline),
                      *(a.text for a in character.acts),
                      *(c.text for c in script.clues if c.holder in names)])


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def observed(events: list[Event], seat: str) -> str:
    """Every text of the events ``seat`` observed, whitespace normalised."""
    return " ".join(" ".join(" ".join(_strings(e.model_dump())).split())
                    for e in events if e.visible_to(seat))


def leaks(script: Script, events: list[Event], calls: Iterable[CallRecord]) -> list[tuple]:
    """(seat, purpose, sentence) for each prompt of a seat holding a sentence that only
    another character's sheet has and that the seat never observed."""
    found = []
    for call in calls:
        if call.seat is None or call.seat not in script.names:
            continue
        me = script.character(call.seat)
        seen = observed(events, me.name)
        text = " ".join(prompt(call).split())
        own = private_sentences(me, script)
        for other in script.characters:
            if other.name == me.name:
                continue
            for sentence in private_sentences(other, script) - own:
                if sentence in text and sentence not in seen:
                    found.append((me.name, call.purpose, sentence))
    return found
