"""The truth block of a generated script: who killed the victim, how, why, when and where,
the story told whole, the deduction step by step, and the proof (``truth.proof``) with
every fact in the words and the place the game reveals it."""

from __future__ import annotations

from jubensha.scripts.generate.evidence import Card, Plan, told
from jubensha.scripts.generate.prove import Proven, placed
from jubensha.scripts.generate.public import clue_id
from jubensha.scripts.generate.text import Voice
from jubensha.scripts.generate.world import SLOTS, STEP
from jubensha.scripts.model import Kill, Truth
from jubensha.scripts.proof.model import (
    Deciding,
    Exclusion,
    FactSource,
    Knobs,
    Proof,
    ProofFact,
    ProofWorld,
    Verdict,
)
from jubensha.scripts.proof.phrases import Form
from jubensha.scripts.proof.solver import MOTIVE, PLACE_KINDS, WEAPON_KINDS, Fact


class Writer:
    """Writes the truth of one proven world in one language."""

    def __init__(self, voice: Voice, evidence: Plan, proven: Proven):
        self.voice = voice
        self.evidence = evidence
        self.proven = proven
        self.ids = {id(f): f"f{n:02d}" for n, f in enumerate(evidence.facts(), start=1)}

    def truth(self) -> Truth:
        voice, world = self.voice, self.voice.world
        names = [voice.person(m) for m in world.murderers]
        t1, t2 = world.time(world.lo), world.time(world.hi)
        method = voice.fill(voice.entry(f"method.{world.kinds[world.weapon]}"),
                            killers=voice.people(world.murderers))
        motive = self.motive(world.murderers[0])
        kill = Kill(victim=voice.victim, killers=names, method=method, motive=motive,
                    time=world.time(world.murder), place=voice.place(world.scene))
        return Truth(murderers=names, kills=[kill], method=method, motive=motive,
                     time=kill.time, place=kill.place, narrative=self.narrative(method),
                     reasoning_chain=self.chain(), solution=self.solution(t1, t2),
                     proof=self.proof())

    def motive(self, person: int) -> str:
        voice = self.voice
        text = voice.fill(voice.entry(f"motive_truth.{voice.world.motives[person]}"),
                          name=voice.person(person))
        return text

    def narrative(self, method: str) -> str:
        voice, world = self.voice, self.voice.world
        motive = self.motive(world.murderers[0])
        parts = [voice.fill(voice.entry("narrative.motive"), motive_cap=motive),
                 voice.fill(voice.entry("narrative.murder"), t=world.time(world.murder),
                            method=method),
                 voice.fill(voice.entry("narrative.window"), t1=world.time(world.lo),
                            t2=world.time(world.hi)),
                 voice.fill(voice.entry("narrative.others"))]
        return (" " if voice.lang == "en" else "").join(parts) + "\n"

    # -- the deduction ---------------------------------------------------------------------
    def chain(self) -> list[str]:
        voice, world = self.voice, self.voice.world
        window = [f for f in self.evidence.facts()
                  if (f.kind, f.start) in (("alive", world.lo), ("dead", world.hi))]
        steps = [voice.fill(voice.entry("reasoning.window"), t1=world.time(world.lo),
                            t2=world.time(world.hi), sources=self.sources(window))]
        for verdict in self.proven.verdicts:
            name = voice.people(verdict.murderers)
            if not verdict.exclusions:
                steps.append(voice.fill(voice.entry("reasoning.consistent"), name=name,
                                        sources=self.sources(self.shown(verdict.murderers))))
                continue
            reason, support = min(verdict.exclusions.items(),
                                  key=lambda pair: len({f.source for f in pair[1]}))
            steps.append(voice.fill(voice.entry(f"reasoning.{reason}"), name=name,
                                    sources=self.sources(support)))
        steps.append(voice.fill(voice.entry("reasoning.therefore"),
                                name=voice.people(world.murderers)))
        return steps

    def solution(self, t1: str, t2: str) -> str:
        voice = self.voice
        return voice.fill(voice.entry("solution"), t1=t1, t2=t2,
                          suspects_line=voice.entry("suspects_line"),
                          name=voice.people(voice.world.murderers)) + "\n"

    def shown(self, murderers: tuple[int, ...]) -> list[Fact]:
        """The facts that show the answer's motive, means and time."""
        return [f for f in self.evidence.facts()
                if (f.kind == MOTIVE and f.who in murderers) or f.kind in WEAPON_KINDS
                or f.kind in ("alive", "dead")]

    def sources(self, facts: list[Fact]) -> str:
        voice = self.voice
        names = []
        for source in dict.fromkeys(f.source for f in facts):
            card = self.evidence.by_id(source)
            where = self.source(card)
            names.append(voice.fill(voice.entry(f"reasoning.source_{where.where}"),
                                    id=where.clue or "", index=where.index or 0,
                                    character=where.character or ""))
        return (", " if voice.lang == "en" else "、").join(dict.fromkeys(names))

    # -- the proof -------------------------------------------------------------------------
    def source(self, card: Card) -> FactSource:
        voice = self.voice
        if card.where == "clue":
            return FactSource(where="clue", clue=clue_id(card))
        if card.where == "background":
            return FactSource(where="background")
        owner = voice.person(card.character)
        if card.where == "act_sheet":
            return FactSource(where="act_sheet", character=owner, index=card.act)
        timeline = told(self.evidence, voice.world, card.character)
        return FactSource(where="timeline", character=owner, index=timeline.index(card))

    def fact(self, fact: Fact) -> ProofFact:
        voice, world = self.voice, self.voice.world
        card = self.evidence.by_id(fact.source)
        form: Form = "second" if card.where in ("timeline", "act_sheet") else "third"
        end = fact.end if fact.kind in PLACE_KINDS and fact.end >= 0 else None
        return ProofFact(
            id=self.ids[id(fact)], kind=fact.kind,  # type: ignore[arg-type]
            who=voice.person(fact.who) if fact.who >= 0 else None,
            place=voice.place(fact.place) if fact.place >= 0 else None,
            item=voice.item(fact.item) if fact.item >= 0 else None,
            start=world.time(fact.start) if fact.start >= 0 else None,
            end=world.time(end) if end is not None else None,
            people=[voice.person(p) for p in sorted(fact.people)],
            items=[voice.item(i) for i in sorted(fact.items)],
            detail=fact.detail or None, source=self.source(card),
            text=voice.card_text(card, form))

    def proof(self) -> Proof:
        voice, world, proven = self.voice, self.voice.world, self.proven
        return Proof(
            world=ProofWorld(
                victim=voice.victim, scene=voice.place(world.scene),
                places=[voice.place(i) for i in range(len(world.places))],
                items=[voice.item(i) for i in range(len(world.items))],
                start=world.time(0), step_minutes=STEP, slots=SLOTS,
                murderers=len(world.murderers)),
            answer=[voice.person(m) for m in world.murderers],
            weapon=voice.item(world.weapon),
            facts=[self.fact(f) for f in self.evidence.facts()],
            verdicts=[self.verdict(v.murderers, v.exclusions, v.weapons)
                      for v in proven.verdicts],
            deciding=Deciding(source=self.source(proven.deciding), rivals=[
                [voice.person(m) for m in answer.murderers] for answer in proven.rivals
                if answer != proven.answer]),
            knobs=self.knobs())

    def verdict(self, murderers: tuple[int, ...], exclusions: dict[str, list[Fact]],
                weapons: list[int]) -> Verdict:
        voice = self.voice
        names = [voice.person(m) for m in murderers]
        if not exclusions:
            return Verdict(candidate=names, consistent=True, weapon=voice.item(weapons[0]),
                           facts=[self.ids[id(f)] for f in self.shown(murderers)])
        return Verdict(candidate=names, consistent=False, exclusions=[
            Exclusion(reason=reason, facts=[self.ids[id(f)] for f in support])  # type: ignore[arg-type]
            for reason, support in exclusions.items()])

    def knobs(self) -> Knobs:
        world = self.voice.world
        return Knobs(level=world.knobs.level, combine=self.proven.combine,
                     suspects=len(world.suspects),
                     misleading=sum(p not in world.murderers for p in world.early),
                     pointers=int(world.knobs.caught != "no"),
                     decider=placed(self.proven.deciding))  # type: ignore[arg-type]
