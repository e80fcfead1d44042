"""The generator's proof: the planned facts leave exactly the world's answer, the rival's
alibi is a source without which they do not, and the difficulty's measures hold; any
world that fails is drawn again."""

from __future__ import annotations

from dataclasses import dataclass

from jubensha.scripts.generate.evidence import Card, Plan
from jubensha.scripts.generate.world import SLOTS, World
from jubensha.scripts.proof.solver import (
    AT,
    Answer,
    Case,
    Fact,
    Verdict,
    answers,
    judge,
)


class Rejected(Exception):
    """A world whose planned evidence does not prove its answer the way the difficulty
    asks; the generator draws another."""


@dataclass
class Proven:
    case: Case
    answer: Answer
    verdicts: list[Verdict]
    deciding: Card
    rivals: list[Answer]
    combine: int


def case_of(world: World) -> Case:
    return Case(persons=len(world.people), places=len(world.places), scene=world.scene,
                items=len(world.items), slots=SLOTS, murderers=len(world.murderers))


def prove(world: World, evidence: Plan) -> Proven:
    """The proof of the world's answer from its evidence, or ``Rejected``."""
    case = case_of(world)
    facts = evidence.facts()
    found = answers(case, facts)
    truth = Answer(tuple(sorted(world.murderers)), world.weapon)
    if found != [truth]:
        raise Rejected(f"the facts leave {len(found)} answers")
    verdicts = [judge(case, facts, murderers, supports=True) for murderers in case.candidates()]
    deciding = _deciding(world, evidence)
    rivals = answers(case, [f for f in facts if f.source != deciding.id])
    if len(rivals) < 2:
        raise Rejected("the deciding source is not needed")
    combine = max((min(_sources(support) for support in v.exclusions.values())
                   for v in verdicts if v.exclusions), default=0)
    return Proven(case, truth, verdicts, deciding, rivals, combine)


def _deciding(world: World, evidence: Plan) -> Card:
    """The source of the rival's alibi, where the difficulty wants the deciding one."""
    for card in evidence.cards:
        if card.character != world.rival and placed(card) == world.knobs.decider \
                and any(f.kind == AT and f.who == world.rival and f.start <= world.lo
                        and f.end >= world.hi for f in card.facts):
            return card
    raise Rejected(f"no deciding source for {world.rival} as {world.knobs.decider}")


def placed(card: Card) -> str:
    """Where a source lies, in the knob's terms."""
    if card.where in ("timeline", "act_sheet"):
        return "testimony"
    if card.location >= 0:
        return "investigation"
    return "act" if card.act == 1 else "later_act"


def _sources(support: list[Fact]) -> int:
    return len({fact.source for fact in support})
