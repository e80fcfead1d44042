"""A mystery from a seed: the world drawn (again, until its evidence proves its answer the
way the difficulty asks), then written as a native script in each language asked, each
checked by ``validate`` (its proof included) before anyone may write it."""

from __future__ import annotations

import random
from dataclasses import dataclass

from jubensha.scripts.generate.evidence import Plan, plan
from jubensha.scripts.generate.knobs import knobs
from jubensha.scripts.generate.prove import Proven, Rejected, prove
from jubensha.scripts.generate.public import acts, background, clues, rules, title, victims
from jubensha.scripts.generate.questions import questions
from jubensha.scripts.generate.sheets import characters
from jubensha.scripts.generate.text import Voice
from jubensha.scripts.generate.truth import Writer
from jubensha.scripts.generate.world import World, draw
from jubensha.scripts.model import Language, Metadata, Script
from jubensha.scripts.proof.model import Level
from jubensha.scripts.validation import validate

MAX_PLAYERS = 10
MIN_PLAYERS = 3
MAX_ACTS = 3
ATTEMPTS = 50
"""Worlds drawn for one seed before giving up (none of 1,800 requests checked needed a
second)."""


class GenerationError(Exception):
    """A request the generator cannot meet (its message says which and why)."""


@dataclass(frozen=True)
class Request:
    seed: int
    players: int = 5
    acts: int = 1
    level: Level = "medium"

    def check(self) -> None:
        if not MIN_PLAYERS <= self.players <= MAX_PLAYERS:
            raise GenerationError(f"players: {self.players} is not between {MIN_PLAYERS} and "
                                  f"{MAX_PLAYERS}")
        if not 1 <= self.acts <= MAX_ACTS:
            raise GenerationError(f"acts: {self.acts} is not between 1 and {MAX_ACTS}")


@dataclass
class Mystery:
    """A proven world, ready to be written in any language."""

    request: Request
    world: World
    evidence: Plan
    proven: Proven


def mystery(request: Request) -> Mystery:
    """The world of ``request`` and its proof, drawing again while the proof fails."""
    request.check()
    chosen = knobs(request.level, request.acts)
    for attempt in range(ATTEMPTS):
        world = draw(request.seed, request.players, request.acts, chosen, attempt)
        evidence = plan(world, random.Random(f"jubensha-evidence/{request.seed}/{attempt}"))
        try:
            return Mystery(request, world, evidence, prove(world, evidence))
        except Rejected:
            continue
    raise GenerationError(f"seed {request.seed}: no world in {ATTEMPTS} draws proved its "
                          "answer")


def write(found: Mystery, lang: Language) -> Script:
    """The mystery as a script in ``lang``; ``GenerationError`` if it fails validation."""
    voice = Voice(found.world, lang)
    request = found.request
    cast = characters(voice, found.evidence)
    truth = Writer(voice, found.evidence, found.proven).truth()
    script = Script(
        id=script_id(request, lang), title=title(voice), language=lang,
        background=background(voice, found.evidence), rules=rules(voice),
        victims=victims(voice), characters=cast, clues=clues(voice, found.evidence),
        acts=acts(voice), truth=truth,
        questions=questions(voice, found.proven, cast, truth.method),
        metadata=Metadata(
            source="generated", player_count=request.players,
            author="jubensha scripts generate",
            tags=[request.level, found.world.setting, f"{request.players} players"],
            notes=[(f"Generated from seed {request.seed} ({request.level}, {request.players} "
                    f"players, {request.acts} act(s)); truth.proof proves its solution.")],
            extra={"generator": {"seed": request.seed, "level": request.level,
                                 "players": request.players, "acts": request.acts,
                                 "version": 1}}))
    report = validate(script)
    if not report.ok:
        raise GenerationError(f"{script.id}: " + "; ".join(
            f"{p.field}: {p.message}" for p in report.errors))
    return script


def script_id(request: Request, lang: Language) -> str:
    return (f"gen-{request.level}-{request.players}p{request.acts}a-s{request.seed}-{lang}")


def generate(request: Request, languages: tuple[Language, ...] = ("en",)) -> list[Script]:
    """The mystery of ``request`` written in each of ``languages`` (one world for all)."""
    found = mystery(request)
    return [write(found, lang) for lang in languages]
