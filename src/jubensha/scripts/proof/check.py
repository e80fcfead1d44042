"""``scripts validate`` on a script that carries a proof (``truth.proof``): every fact is
stated, word for word, by the text it names, which the game reveals; the facts leave
exactly the truth's answer; each verdict and the deciding source hold; and everything the
script's texts state, read whole, still leaves that one answer."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from jubensha.scripts.model import PUBLIC, Language, Script
from jubensha.scripts.proof.model import FactSource, Proof, ProofFact
from jubensha.scripts.proof.notebook import Notebook
from jubensha.scripts.proof.solver import TESTS, Answer, Case, Fact, answers, applied

Problem = tuple[str, str]
"""A problem of the proof: (field, message); ``validation`` makes errors of them."""


@dataclass
class _Vocabulary:
    """Names, places, objects and times of the proof, as solver indices."""

    proof: Proof
    persons: list[str]
    victims: list[str]
    lang: Language

    def __post_init__(self) -> None:
        world = self.proof.world
        self.person = {name: i for i, name in enumerate(self.persons)}
        self.place = {name: i for i, name in enumerate(world.places)}
        self.item = {item: i for i, item in enumerate(world.items)}
        self.case = Case(persons=len(self.persons), places=len(world.places),
                         scene=self.place.get(world.scene, -1), items=len(world.items),
                         slots=world.slots, murderers=world.murderers)

    def notebook(self) -> Notebook:
        world = self.proof.world
        return Notebook(self.lang, self.persons, self.victims, places=world.places,
                        items=world.items, start=world.start, step=world.step_minutes,
                        slots=world.slots, murderers=world.murderers)

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
    vocabulary = _Vocabulary(proof, script.names, [v.name for v in script.victims],
                             script.language)
    problems = _world_problems(script, proof, vocabulary)
    if problems:
        return problems
    notebook = vocabulary.notebook()
    keys: dict[str, int] = {}
    facts: dict[str, Fact] = {}
    for i, stated in enumerate(proof.facts):
        field = f"truth.proof.facts[{i}]"
        try:
            facts[stated.id] = _fact(script, stated, vocabulary, notebook, keys)
        except ValueError as exc:
            problems.append(_error(field, str(exc)))
    if problems:
        return problems
    problems += _answer_problems(proof, vocabulary, list(facts.values()))
    problems += _verdict_problems(proof, vocabulary, facts)
    problems += _deciding_problems(proof, vocabulary, list(facts.values()), keys)
    if not problems:
        problems += _revealed_problems(script, proof, vocabulary)
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
    if not re.fullmatch(r"\d{1,2}:\d{2}", world.start):
        problems.append(_error("truth.proof.world.start", f"{world.start!r} is not HH:MM"))
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


def _fact(script: Script, stated: ProofFact, vocabulary: _Vocabulary, notebook: Notebook,
          keys: dict[str, int]) -> Fact:
    """The fact as the solver reads it, once its text is shown to state it."""
    text, speaker = source_text(script, stated.source)
    if stated.text not in text:
        raise ValueError(f"its source ({stated.source.key()}) does not say {stated.text!r}")
    owner = stated.source.character
    read = [notebook.fact(said) for said in notebook.reader.read(stated.text, owner)]
    fact = _proof_fact(stated, vocabulary, notebook)
    if fact not in read:
        raise ValueError(f"{stated.text!r} does not state this {stated.kind} fact")
    source = keys.setdefault(stated.source.key(), len(keys))
    return replace(fact, source=source, speaker=speaker)


def _proof_fact(stated: ProofFact, vocabulary: _Vocabulary, notebook: Notebook) -> Fact:
    return Fact(kind=stated.kind,
                who=vocabulary.index(vocabulary.person, stated.who, "character"),
                place=vocabulary.index(vocabulary.place, stated.place, "place"),
                item=vocabulary.index(vocabulary.item, stated.item, "item"),
                start=notebook.slot(stated.start), end=notebook.slot(stated.end),
                people=frozenset(vocabulary.index(vocabulary.person, p, "character")
                                 for p in stated.people),
                items=frozenset(vocabulary.index(vocabulary.item, i, "item")
                                for i in stated.items),
                detail=stated.detail or "")


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


def _revealed_problems(script: Script, proof: Proof, vocabulary: _Vocabulary
                       ) -> list[Problem]:
    """Everything the texts state, read whole (a character's words counting only when
    that character is not a murderer of the answer weighed), must still leave the one
    answer: a sentence added to a generated script cannot make another answer true."""
    notebook = vocabulary.notebook()
    for text, owner in _revealed(script):
        notebook.read(text, owner)
    found = answers(vocabulary.case, notebook.facts)
    if found == [_answer_of(proof, vocabulary)]:
        return []
    return [_error("truth.proof", f"read whole, the script's texts leave {len(found)} answers "
                   f"({_describe(found, vocabulary)}), not the proof's one")]
