"""``scripts validate`` on a script that carries a proof (``truth.proof``): every fact is
stated, word for word, by the text it names, which the game reveals; the facts leave
exactly the truth's answer; each verdict and the deciding source hold; and everything the
script's texts state, read whole, still leaves that one answer."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from jubensha.scripts.model import PUBLIC, Script
from jubensha.scripts.proof.model import FactSource, Proof, ProofFact
from jubensha.scripts.proof.phrases import Reader, Said
from jubensha.scripts.proof.solver import Answer, Case, Fact, TESTS, answers, applied

Problem = tuple[str, str]
"""A problem of the proof: (field, message); ``validation`` makes errors of them."""

DAY = 24 * 60


@dataclass
class _Vocabulary:
    """Names, places, objects and times of the proof, as solver indices."""

    proof: Proof
    persons: list[str]

    def __post_init__(self) -> None:
        world = self.proof.world
        self.person = {name: i for i, name in enumerate(self.persons)}
        self.place = {name: i for i, name in enumerate(world.places)}
        self.item = {item: i for i, item in enumerate(world.items)}
        hours, minutes = world.start.split(":")
        self.start = int(hours) * 60 + int(minutes)
        self.case = Case(persons=len(self.persons), places=len(world.places),
                         scene=self.place.get(world.scene, -1),
                         items=len(world.items),
                         slots=world.slots, murderers=world.murderers)

    def slot(self, time: str | None) -> int:
        if time is None:
            return -1
        hours, minutes = time.split(":")
        offset = (int(hours) * 60 + int(minutes) - self.start) % DAY
        if offset % self.proof.world.step_minutes:
            raise ValueError(f"{time} is not on the proof's clock")
        return offset // self.proof.world.step_minutes

    def index(self, table: dict[str, int], name: str | None, what: str) -> int:
        if name is None:
            return -1
        if name not in table:
            raise ValueError(f"{name!r} is not a {what} of the proof")
        return table[name]


def check_proof(script: Script) -> list[Problem]:
    """Every problem of the script's proof; none when it has none."""
    proof = script.truth.proof if script.truth is not None else None
    if proof is None:
        return []
    vocabulary = _Vocabulary(proof, script.names)
    problems = _world_problems(script, proof, vocabulary)
    if problems:
        return problems
    reader = Reader(script.language, script.names, [v.name for v in script.victims],
                    proof.world.places, proof.world.items)
    keys: dict[str, int] = {}
    facts: dict[str, Fact] = {}
    for i, stated in enumerate(proof.facts):
        field = f"truth.proof.facts[{i}]"
        try:
            facts[stated.id] = _fact(script, stated, vocabulary, reader, keys)
        except ValueError as exc:
            problems.append(_error(field, str(exc)))
    if problems:
        return problems
    problems += _answer_problems(proof, vocabulary, list(facts.values()))
    problems += _verdict_problems(proof, vocabulary, facts)
    problems += _deciding_problems(proof, vocabulary, list(facts.values()), keys)
    if not problems:
        problems += _revealed_problems(script, proof, vocabulary, reader)
    return problems


def _error(field: str, message: str) -> Problem:
    return field, message


def _world_problems(script: Script, proof: Proof, vocabulary: _Vocabulary) -> list[Problem]:
    world = proof.world
    problems = []
    if world.victim not in {v.name for v in script.victims}:
        problems.append(_error("truth.proof.world.victim", f"{world.victim!r} is not a victim"))
    if world.scene not in world.places:
        problems.append(_error("truth.proof.world.scene", f"{world.scene!r} is not a place"))
    for j, name in enumerate(proof.answer):
        if name not in vocabulary.person:
            problems.append(_error(f"truth.proof.answer[{j}]", f"{name!r} is not a character"))
    if sorted(proof.answer) != sorted(script.murderers):
        problems.append(_error("truth.proof.answer", f"the proof's answer {proof.answer} is not "
                               f"the truth's murderers {script.murderers}"))
    if proof.weapon not in vocabulary.item:
        problems.append(_error("truth.proof.weapon", f"{proof.weapon!r} is not an item"))
    try:
        vocabulary.slot(world.start)
    except ValueError as exc:
        problems.append(_error("truth.proof.world.start", str(exc)))
    return problems


def source_text(script: Script, source: FactSource) -> tuple[str, int]:
    """The text a source names, and whose word it is (-1: nobody's, always true);
    ValueError when the script has no such text."""
    names = script.names
    if source.where == "background":
        return script.background, -1
    if source.where == "act":
        act = next((a for a in script.acts if a.number == source.index), None)
        if act is None:
            raise ValueError(f"act {source.index} does not exist")
        return act.public_text, -1
    if source.where == "clue":
        clue = next((c for c in script.clues if c.id == source.clue), None)
        if clue is None:
            raise ValueError(f"clue {source.clue!r} does not exist")
        holder = -1 if clue.holder == PUBLIC else names.index(script.character(clue.holder).name)
        return clue.text, holder
    if source.character not in names:
        raise ValueError(f"{source.character!r} is not a character")
    character = script.character(source.character)
    speaker = names.index(character.name)
    if source.where == "timeline":
        if source.index is None or not 0 <= source.index < len(character.timeline):
            raise ValueError(f"{character.name!r} has no timeline entry {source.index}")
        return character.timeline[source.index].text, speaker
    sheet = character.act_sheet(source.index or 0)
    if sheet is None:
        raise ValueError(f"{character.name!r} has no sheet for act {source.index}")
    return sheet.text, speaker


def _fact(script: Script, stated: ProofFact, vocabulary: _Vocabulary, reader: Reader,
          keys: dict[str, int]) -> Fact:
    """The fact as the solver reads it, once its text is shown to state it."""
    text, speaker = source_text(script, stated.source)
    if stated.text not in text:
        raise ValueError(f"its source ({stated.source.key()}) does not say {stated.text!r}")
    owner = stated.source.character
    read = [_said_fact(said, vocabulary) for said in reader.read(stated.text, owner)]
    fact = _proof_fact(stated, vocabulary)
    if fact not in read:
        raise ValueError(f"{stated.text!r} does not state this {stated.kind} fact")
    source = keys.setdefault(stated.source.key(), len(keys))
    return Fact(kind=fact.kind, who=fact.who, place=fact.place, item=fact.item,
                start=fact.start, end=fact.end, people=fact.people, items=fact.items,
                detail=fact.detail, source=source, speaker=speaker)


def _proof_fact(stated: ProofFact, vocabulary: _Vocabulary) -> Fact:
    return Fact(kind=stated.kind,
                who=vocabulary.index(vocabulary.person, stated.who, "character"),
                place=vocabulary.index(vocabulary.place, stated.place, "place"),
                item=vocabulary.index(vocabulary.item, stated.item, "item"),
                start=vocabulary.slot(stated.start), end=vocabulary.slot(stated.end),
                people=frozenset(vocabulary.index(vocabulary.person, p, "character")
                                 for p in stated.people),
                items=frozenset(vocabulary.index(vocabulary.item, i, "item")
                                for i in stated.items),
                detail=stated.detail or "")


def _said_fact(said: Said, vocabulary: _Vocabulary) -> Fact:
    """A fact read from a sentence, in indices (a sighting lasts one slot); a name the
    proof does not know makes a fact that matches none."""
    start = vocabulary.slot(said.start)
    end = vocabulary.slot(said.end) if said.end else start + 1 if said.kind == "at" else -1
    return Fact(kind=said.kind, who=vocabulary.person.get(said.who or "", -1),
                place=vocabulary.place.get(said.place or "", -1),
                item=vocabulary.item.get(said.item or "", -1), start=start,
                end=end if said.kind in ("at", "alone") else -1,
                people=frozenset(vocabulary.person.get(p, -1) for p in said.people),
                items=frozenset(vocabulary.item.get(i, -1) for i in said.items),
                detail=said.detail or "")


def _known(fact: Fact) -> bool:
    """Whether a fact read from a text names only persons, places and objects of the
    proof (a sentence about anything else states nothing the solver weighs)."""
    needs = {"at": ("who", "place"), "alone": ("who", "place"), "scene": ("place",),
             "used": ("item",), "unused": ("item",), "access": ("item",), "motive": ("who",)}
    return all(getattr(fact, name) >= 0 for name in needs.get(fact.kind, ())) \
        and -1 not in fact.people and -1 not in fact.items


def _answer_of(proof: Proof, vocabulary: _Vocabulary) -> Answer:
    return Answer(tuple(sorted(vocabulary.person[n] for n in proof.answer)),
                  vocabulary.item[proof.weapon])


def _describe(found: list[Answer], vocabulary: _Vocabulary) -> str:
    names = {i: n for n, i in vocabulary.person.items()}
    items = {i: n for n, i in vocabulary.item.items()}
    return "; ".join(f"{', '.join(names[m] for m in a.murderers)} with the {items[a.weapon]}"
                     for a in found) or "none"


def _answer_problems(proof: Proof, vocabulary: _Vocabulary, facts: list[Fact]
                     ) -> list[Problem]:
    found = answers(vocabulary.case, facts)
    if found == [_answer_of(proof, vocabulary)]:
        return []
    return [_error("truth.proof.facts", f"the facts leave {len(found)} answers "
                   f"({_describe(found, vocabulary)}), not exactly the proof's answer")]


def _verdict_problems(proof: Proof, vocabulary: _Vocabulary, facts: dict[str, Fact]
                      ) -> list[Problem]:
    problems = []
    for i, verdict in enumerate(proof.verdicts):
        field = f"truth.proof.verdicts[{i}]"
        murderers = tuple(sorted(vocabulary.person.get(n, -1) for n in verdict.candidate))
        for j, exclusion in enumerate(verdict.exclusions):
            missing = [f for f in exclusion.facts if f not in facts]
            if missing:
                problems.append(_error(f"{field}.exclusions[{j}]",
                                       f"no fact {', '.join(missing)}"))
                continue
            test, _ = TESTS[exclusion.reason]
            support = applied([facts[f] for f in exclusion.facts], murderers)
            if not test(vocabulary.case, support, murderers):
                problems.append(_error(f"{field}.exclusions[{j}]", f"{', '.join(exclusion.facts)} "
                                       f"do not show the {exclusion.reason} reason"))
        if verdict.consistent != (murderers == _answer_of(proof, vocabulary).murderers):
            problems.append(_error(f"{field}.consistent", "disagrees with the answer"))
    return problems


def _deciding_problems(proof: Proof, vocabulary: _Vocabulary, facts: list[Fact],
                       keys: dict[str, int]) -> list[Problem]:
    key = proof.deciding.source.key()
    if key not in keys:
        return [_error("truth.proof.deciding.source", f"no fact comes from {key}")]
    left = answers(vocabulary.case, [f for f in facts if f.source != keys[key]])
    if len(left) > 1:
        return []
    return [_error("truth.proof.deciding.source", f"without {key} the facts still leave "
                   f"{len(left)} answer(s): it decides nothing")]


def _revealed(script: Script) -> Iterator[tuple[str, str | None]]:
    """Every text of the script whose sentences may state facts, and whose word it is."""
    yield script.background, None
    for act in script.acts:
        yield act.public_text, None
    for clue in script.clues:
        yield clue.text, None if clue.holder == PUBLIC else script.character(clue.holder).name
    for character in script.characters:
        for entry in character.timeline:
            yield entry.text, character.name
        for sheet in character.acts:
            yield sheet.text, character.name


def _revealed_problems(script: Script, proof: Proof, vocabulary: _Vocabulary,
                       reader: Reader) -> list[Problem]:
    """Everything the texts state, read whole (a character's words counting only when
    that character is not a murderer of the answer weighed), must still leave the one
    answer: a sentence added to a generated script cannot make another answer true."""
    facts = []
    for source, (text, owner) in enumerate(_revealed(script)):
        speaker = vocabulary.person.get(owner or "", -1)
        for said in reader.read(text, owner):
            try:
                fact = _said_fact(said, vocabulary)
            except ValueError:
                continue
            if not _known(fact):
                continue
            facts.append(Fact(kind=fact.kind, who=fact.who, place=fact.place, item=fact.item,
                              start=fact.start, end=fact.end, people=fact.people,
                              items=fact.items, detail=fact.detail, source=source,
                              speaker=speaker))
    found = answers(vocabulary.case, facts)
    if found == [_answer_of(proof, vocabulary)]:
        return []
    return [_error("truth.proof", f"read whole, the script's texts leave {len(found)} answers "
                   f"({_describe(found, vocabulary)}), not the proof's one")]

