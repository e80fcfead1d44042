"""How well does a model read? The detective's narrow questions, graded against facts.

Generated mysteries know their facts: each proof lists who had a motive, who could reach
the weapon, who was where from when to when, when the victim was last alive and when dead,
each with the sentence that states it (docs/generated.md). This bench asks the seat's
model the detective's questions (``agents/detective/readings.py``) about those sentences,
as a seat would read them at the table, and grades every reading:

- a **text reading** ("what does this text say about X?"): right when the fact chosen
  (motive, weapon, whereabouts, none) is the proof's; for whereabouts, *detail* also needs
  the place and both times right (after the reader's check that the text writes them);
- a **death reading** ("when was the victim last alive, dead by, found where?"): right when
  every field the text states is read right and no other is filled.

Items are drawn per mystery and kind (at most ``--per-kind`` of each, the same draw for
every model), so the table shows each kind's accuracy, with its 95% Wilson interval,
beside the *majority answer* (always answering the commonest kind in the sample).
Seeds: use fresh ones for a figure (the prompts were written on seeds 900-902).

    python bench/sensors.py [--model local:qwen2.5-coder-1.5b] [--seeds 5000-5002]
        [--levels easy,medium,hard] [--languages en,zh] [--per-kind 3] [--out FILE]

Ends with one line ``sensors: …`` (text-reading accuracy and the majority answer's).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import sys
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

from common import figure, machine, table, wilson

from jubensha.agents.detective.case import same_place
from jubensha.agents.detective.knowledge import name_forms
from jubensha.agents.detective.readings import DeathFinding, Finding, Reader, minute
from jubensha.agents.toolkit import Caller
from jubensha.engine import CharacterSheet
from jubensha.llm.base import Model
from jubensha.llm.registry import parse_model_spec
from jubensha.scripts import Script
from jubensha.scripts.generate import Request, generate
from jubensha.scripts.proof.model import ProofFact

PARALLEL = 4


@dataclass(frozen=True)
class Item:
    """One question with the proof's answer."""

    kind: str  # "text" or "death"
    text: str
    subject: str  # the person asked about, or the victim
    truth: str  # motive, weapon, whereabouts, none; "death" for a death reading
    place: str = ""
    start: str = ""
    end: str = ""
    language: str = "en"
    level: str = "medium"
    seed: int = 0


@dataclass
class Graded:
    item: Item
    answer: str
    detail: bool
    right: bool


def units(script: Script) -> dict[str, list[ProofFact]]:
    """Each text a seat reads (a clue card whole, any other source's sentence) → the proof
    facts it states."""
    assert script.truth is not None and script.truth.proof is not None
    cards = {c.id: c.text for c in script.clues}
    found: dict[str, list[ProofFact]] = defaultdict(list)
    for fact in script.truth.proof.facts:
        source = fact.source
        text = cards.get(source.clue or "", fact.text) if source.where == "clue" else fact.text
        found[text].append(fact)
    return found


def items(script: Script, level: str, seed: int) -> list[Item]:
    """Every question a seat could ask about the proof's texts, with its answer."""
    proof = script.truth.proof if script.truth else None
    assert proof is not None
    names = name_forms(CharacterSheet.for_seat(script, script.characters[0].name))
    people = [c.name for c in script.characters]
    victim = proof.world.victim
    made: list[Item] = []
    for text, facts in units(script).items():
        common = {"language": script.language, "level": level, "seed": seed}
        named = names.mentioned(text, people)
        for person in named:
            made.append(text_item(text, person, facts, common))
        others = [p for p in people if p not in named]
        if others:  # a person the text does not name: nothing to read
            person = random.Random(f"{seed}:{text}").choice(others)
            made.append(Item("text", text, person, "none", **common))  # type: ignore[arg-type]
        death = [f for f in facts if f.kind in ("alive", "dead", "scene")]
        if death:
            made.append(Item("death", text, victim, "death",
                             place=next((f.place or "" for f in death if f.kind == "scene"), ""),
                             start=next((f.start or "" for f in death if f.kind == "alive"), ""),
                             end=next((f.start or "" for f in death if f.kind == "dead"), ""),
                             **common))  # type: ignore[arg-type]
    return made


def text_item(text: str, person: str, facts: list[ProofFact], common: dict[str, object]
              ) -> Item:
    for fact in facts:
        if fact.kind in ("at", "alone") and fact.who == person:
            return Item("text", text, person, "whereabouts", fact.place or "",
                        fact.start or "", fact.end or "", **common)  # type: ignore[arg-type]
    for fact in facts:
        if fact.kind == "motive" and fact.who == person:
            return Item("text", text, person, "motive", **common)  # type: ignore[arg-type]
        if fact.kind == "access" and person in fact.people:
            return Item("text", text, person, "weapon", **common)  # type: ignore[arg-type]
    return Item("text", text, person, "none", **common)  # type: ignore[arg-type]


def draw(found: list[Item], per_kind: int, seed: int) -> list[Item]:
    """At most ``per_kind`` items of each answer, drawn with ``seed``."""
    rng = random.Random(seed)
    by: dict[str, list[Item]] = defaultdict(list)
    for item in found:
        by[item.truth].append(item)
    chosen: list[Item] = []
    for truth in sorted(by):
        pool = by[truth]
        chosen += rng.sample(pool, min(per_kind, len(pool)))
    return chosen


def grade_text(item: Item, found: Finding | None) -> Graded:
    answer = found.fact if found is not None else "none"
    detail = answer == item.truth
    if detail and found is not None and item.truth == "whereabouts":
        detail = (same_place(found.place, item.place) and found.start == minute(item.start)
                  and (not item.end or found.end in (None, minute(item.end))))
    return Graded(item, answer, detail, answer == item.truth)


def grade_death(item: Item, found: DeathFinding | None) -> Graded:
    got = (found.alive_at, found.dead_by, found.found_in) if found else (None, None, "")
    want = (minute(item.start) if item.start else None,
            minute(item.end) if item.end else None, item.place)
    right = got[0] == want[0] and got[1] == want[1] and (
        same_place(got[2], want[2]) if want[2] else not got[2])
    answer = "/".join(str(x) if x not in (None, "") else "-" for x in got)
    return Graded(item, answer, right, right)


async def read_all(model: Model, chosen: list[Item], victims: dict[str, str]
                   ) -> list[Graded]:
    graded: list[Graded] = []
    for start in range(0, len(chosen), PARALLEL):
        batch = chosen[start:start + PARALLEL]
        graded += await asyncio.gather(*(ask(model, item, victims) for item in batch))
        print(f"  {len(graded)}/{len(chosen)} read", file=sys.stderr, flush=True)
    return graded


async def ask(model: Model, item: Item, victims: dict[str, str]) -> Graded:
    reader = Reader.of(Caller(model, None, item.language))
    victim = victims[f"{item.language}:{item.level}:{item.seed}"]
    if item.kind == "death":
        return grade_death(item, await reader.death(item.text, victim))
    return grade_text(item, await reader.about(item.text, item.subject, victim, "clue"))


def report(graded: list[Graded]) -> float:
    rows = []
    for language in sorted({g.item.language for g in graded}):
        mine = [g for g in graded if g.item.language == language]
        texts = [g for g in mine if g.item.kind == "text"]
        for truth in ("motive", "weapon", "whereabouts", "none"):
            of = [g for g in texts if g.item.truth == truth]
            if of:
                rows.append([language, truth, len(of), wilson(sum(g.right for g in of), len(of)),
                             wilson(sum(g.detail for g in of), len(of))
                             if truth == "whereabouts" else ""])
        if texts:
            majority = Counter(g.item.truth for g in texts).most_common(1)[0]
            rows.append([language, "all text readings", len(texts),
                         wilson(sum(g.right for g in texts), len(texts)),
                         f"majority '{majority[0]}' {majority[1] / len(texts):.2f}"])
        deaths = [g for g in mine if g.item.kind == "death"]
        if deaths:
            rows.append([language, "death", len(deaths),
                         wilson(sum(g.right for g in deaths), len(deaths)), ""])
    table("readings graded against the proofs' facts", ["language", "kind", "n", "right",
                                                         "detail / baseline"], rows)
    texts = [g for g in graded if g.item.kind == "text"]
    return sum(g.right for g in texts) / len(texts) if texts else 0.0


def seeds_of(text: str) -> list[int]:
    first, _, last = text.partition("-")
    return list(range(int(first), int(last or first) + 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="local:qwen2.5-coder-1.5b")
    parser.add_argument("--seeds", default="5000-5002")
    parser.add_argument("--levels", default="easy,medium,hard")
    parser.add_argument("--languages", default="en,zh")
    parser.add_argument("--per-kind", type=int, default=3)
    parser.add_argument("--out", type=Path, help="write every graded reading (JSONL)")
    args = parser.parse_args()
    languages = tuple(args.languages.split(","))
    chosen: list[Item] = []
    victims: dict[str, str] = {}
    for level in args.levels.split(","):
        for seed in seeds_of(args.seeds):
            for script in generate(Request(seed, 5, 1, level), languages):  # type: ignore[arg-type]
                assert script.truth is not None and script.truth.proof is not None
                victims[f"{script.language}:{level}:{seed}"] = script.truth.proof.world.victim
                chosen += draw(items(script, level, seed), args.per_kind, seed)
    print(machine())
    print(f"{len(chosen)} readings: {dict(Counter(i.truth for i in chosen))}", flush=True)
    model = parse_model_spec(args.model)
    wall, cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    graded = asyncio.run(read_all(model, chosen, victims))
    used = resource.getrusage(resource.RUSAGE_SELF)
    seconds = time.perf_counter() - wall
    cpu_s = used.ru_utime + used.ru_stime - cpu.ru_utime - cpu.ru_stime
    if args.out:
        with args.out.open("w", encoding="utf-8") as sink:
            for g in graded:
                sink.write(json.dumps({**asdict(g.item), "answer": g.answer, "right": g.right,
                                       "detail": g.detail}, ensure_ascii=False) + "\n")
    accuracy = report(graded)
    texts = [g for g in graded if g.item.kind == "text"]
    majority = Counter(g.item.truth for g in texts).most_common(1)[0][1] / max(1, len(texts))
    print(f"{len(graded)} readings in {seconds:.0f} s wall, {cpu_s:.0f} CPU-s, "
          f"load {os.getloadavg()[0]:.1f} ({seconds / max(1, len(graded)):.1f} s a reading)")
    figure("sensors", f"text readings {accuracy:.2f} right (majority answer {majority:.2f}) "
           f"on {len(texts)}")


if __name__ == "__main__":
    main()
