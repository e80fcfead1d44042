"""Cross-reference checks on a Script: problems are errors, known real-data quirks warnings.

Every problem names the field it is about (``characters[2].killed[0]``) so that the CLI can
print ``file: field: problem`` lines a script author can act on.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from typing import Literal

from disarm import skeleton_key
from pydantic import BaseModel

from jubensha.safeload import one_line
from jubensha.scripts.model import MAX_TEXT_CHARS, PUBLIC, Script, name_key
from jubensha.scripts.proof.check import check_proof

Severity = Literal["error", "warning"]


class Problem(BaseModel):
    severity: Severity
    field: str
    message: str

    def render(self, source: str = "") -> str:
        """``source: field: message`` on one line of bounded length, whatever the input
        put into the field's name or the message."""
        prefix = f"{source}: " if source else ""
        return f"{prefix}{one_line(self.field, 200)}: {one_line(self.message, 600)}"

    def shown(self, source: str = "") -> str:
        """``render``'s line as `scripts validate` prints it: a warning says so."""
        said = "warning: " + self.message if self.severity == "warning" else self.message
        return self.model_copy(update={"message": said}).render(source)


class Report(BaseModel):
    problems: list[Problem] = []

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    @property
    def ok(self) -> bool:
        return not self.errors


def validate(script: Script) -> Report:
    """Check that every name a script references exists and the truth is coherent."""
    size = len(script.model_dump_json())
    if size > MAX_TEXT_CHARS:
        return Report(problems=[_error("(top level)", f"the script holds {size:,} characters "
                                       f"of text; at most {MAX_TEXT_CHARS:,} are played")])
    problems: list[Problem] = []
    problems += _duplicates(script)
    problems += _name_clashes(script)
    problems += _character_refs(script)
    problems += _clue_refs(script)
    problems += _truth(script)
    problems += _questions(script)
    if not any(p.severity == "error" for p in problems):
        problems += [_error(field, message) for field, message in check_proof(script)]
    return Report(problems=problems)


def _error(field: str, message: str) -> Problem:
    return Problem(severity="error", field=field, message=message)


def _warning(field: str, message: str) -> Problem:
    return Problem(severity="warning", field=field, message=message)


def _repeated(values: Iterable[str]) -> list[str]:
    return [value for value, count in Counter(values).items() if count > 1]


def _duplicates(script: Script) -> list[Problem]:
    problems = [_error("characters", f"character name {n!r} is used twice")
                for n in _repeated(script.names)]
    problems += [_error("victims", f"victim {n!r} is listed twice")
                 for n in _repeated(v.name for v in script.victims)]
    problems += [_error("clues", f"clue id {i!r} is used twice")
                 for i in _repeated(c.id for c in script.clues)]
    problems += [_error("acts", f"act number {n} is used twice")
                 for n in _repeated(str(a.number) for a in script.acts)]
    question_ids = [q.id for q in script.questions.factual]
    question_ids += [q.id for q in script.questions.choice]
    question_ids += [q.id for q in script.questions.open]
    problems += [_error("questions", f"question id {i!r} is used twice")
                 for i in _repeated(question_ids)]
    return problems


def _name_clashes(script: Script) -> list[Problem]:
    """Names that are empty, that carry a bidirectional control, or that another
    character's (or victim's) name equals once case, spaces and invisible characters are
    set aside (``name_key``) or that it looks like (Unicode's confusable skeletons, UTS
    #39: "Tоm Hаle" with Cyrillic letters is "Tom Hale"): a person reading or typing
    either could not say which one they mean."""
    problems: list[Problem] = []
    for group, named in (("characters", [(f"characters[{i}]", c.name, c.all_names)
                                         for i, c in enumerate(script.characters)]),
                         ("victims", [(f"victims[{i}]", v.name, [v.name])
                                      for i, v in enumerate(script.victims)])):
        owner: dict[str, tuple[str, str]] = {}
        looks: dict[str, tuple[str, str]] = {}
        for where, main, names in named:
            for j, name in enumerate(names):
                field = f"{where}.name" if j == 0 else f"{where}.aliases[{j - 1}]"
                problem = _name_problem(name, main, owner, looks, group)
                if problem is not None:
                    problems.append(_error(field, problem))
    return problems


_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _name_problem(name: str, main: str, owner: dict[str, tuple[str, str]],
                  looks: dict[str, tuple[str, str]], group: str) -> str | None:
    """What is wrong with ``name`` (of the character ``main``) among the names seen so far
    (``owner`` by ``name_key``, ``looks`` by skeleton), which it joins."""
    control = _BIDI.search(name)
    if control:
        return (f"{name!r} carries a bidirectional control (U+{ord(control.group()):04X}), "
                "which changes the order its letters are shown in; remove it")
    key = name_key(name)
    if not key:
        return "a name needs a visible character"
    first, written = owner.setdefault(key, (main, name))
    if first != main:
        whose = repr(first) if written == first else f"{written!r} ({first})"
        return (f"{name!r} is {whose} written differently (names are compared ignoring "
                f"case, spaces and invisible characters; {group} need names that tell them "
                "apart)")
    first, written = looks.setdefault(name_key(skeleton_key(name)), (main, name))
    if first != main:
        whose = repr(first) if written == first else f"{written!r} ({first})"
        odd = [char for char in dict.fromkeys(name + written)
               if not char.isspace() and skeleton_key(char) != char.casefold()][:3]
        letters = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, '?')}" for c in odd)
        return (f"{name!r} looks like {whose} (look-alike letters: {letters or 'mixed'}); "
                f"{group} need names that tell them apart")
    return None


def _known_names(script: Script) -> set[str]:
    names = {name for c in script.characters for name in c.all_names}
    return names | {v.name for v in script.victims}


def _act_numbers(script: Script) -> set[int]:
    return {act.number for act in script.acts}


def _character_refs(script: Script) -> list[Problem]:
    problems: list[Problem] = []
    victims = {v.name for v in script.victims}
    known = _known_names(script)
    acts = _act_numbers(script)
    for i, character in enumerate(script.characters):
        where = f"characters[{i}]"
        for j, victim in enumerate(character.killed):
            if victim not in victims:
                problems.append(_error(f"{where}.killed[{j}]", f"{victim!r} is not a victim"))
        if character.killed and character.side != "murderer":
            problems.append(_warning(f"{where}.side", f"{character.name!r} killed "
                                     f"{', '.join(character.killed)} but is not a murderer"))
        for j, sheet in enumerate(character.acts):
            if sheet.act not in acts:
                problems.append(_error(f"{where}.acts[{j}].act", f"act {sheet.act} does not exist"))
        for j, relation in enumerate(character.relationships):
            if relation.other not in known:
                # Conan and MIRAGE relate characters to people who are not in the cast.
                problems.append(_warning(f"{where}.relationships[{j}].other",
                                         f"{relation.other!r} is not a character or victim"))
    return problems


def _clue_refs(script: Script) -> list[Problem]:
    problems: list[Problem] = []
    names = {name for c in script.characters for name in c.all_names}
    acts = _act_numbers(script)
    for i, clue in enumerate(script.clues):
        if clue.holder != PUBLIC and clue.holder not in names:
            problems.append(_error(f"clues[{i}].holder",
                                   f"{clue.holder!r} is not a character (or '{PUBLIC}')"))
        if clue.act not in acts:
            problems.append(_error(f"clues[{i}].act", f"act {clue.act} does not exist"))
        if not clue.text.strip() and not clue.image:
            problems.append(_error(f"clues[{i}]", "a clue needs text or an image"))
    return problems


def _truth(script: Script) -> list[Problem]:
    truth = script.truth
    if truth is None:
        if script.metadata.has_truth:
            return [_error("truth", "missing (set metadata.has_truth: false for scripts "
                                    "that have none, e.g. Conan narratives)")]
        return []
    problems: list[Problem] = []
    names = {name for c in script.characters for name in c.all_names}
    victims = {v.name for v in script.victims}
    for j, murderer in enumerate(truth.murderers):
        if murderer not in names:
            problems.append(_error(f"truth.murderers[{j}]", f"{murderer!r} is not a character"))
    # has_truth false with a truth: the prose of what happened without a known solution
    # (MIRAGE scripts whose culprit is not a player); names are checked, nothing is required.
    solved = script.metadata.has_truth
    if not truth.murderers and solved:
        problems.append(_error("truth.murderers", "a truth needs at least one murderer"))
    for j, victim in enumerate(truth.killed_offstage):
        if victim not in victims:
            problems.append(_error(f"truth.killed_offstage[{j}]", f"{victim!r} is not a victim"))
    killed = {kill.victim for kill in truth.kills} | set(truth.killed_offstage)
    for j, kill in enumerate(truth.kills):
        if kill.victim not in victims:
            problems.append(_error(f"truth.kills[{j}].victim", f"{kill.victim!r} is not a victim"))
        for k, killer in enumerate(kill.killers):
            if killer not in names:
                problems.append(_error(f"truth.kills[{j}].killers[{k}]",
                                       f"{killer!r} is not a character"))
    for victim in sorted(victims - killed if solved else ()):
        problems.append(_error("truth.kills", f"victim {victim!r} has no killer"))
    problems += _side_agreement(script)
    return problems


def _side_agreement(script: Script) -> list[Problem]:
    """Sides and ``killed`` lists that disagree with the truth: warnings, as in real data."""
    truth = script.truth
    assert truth is not None
    marked = {c.name for c in script.characters if c.side == "murderer"}
    stated = {script.character(m).name for m in truth.murderers if _has(script, m)}
    problems = []
    if marked != stated:
        problems.append(_warning("truth.murderers",
                                 f"characters marked murderer {sorted(marked)} differ from the "
                                 f"truth's murderers {sorted(stated)}"))
    for kill in truth.kills:
        for killer in kill.killers:
            if _has(script, killer) and kill.victim not in script.character(killer).killed:
                problems.append(_warning("truth.kills", f"{killer!r} killed {kill.victim!r} by "
                                         "the truth but not by their character's 'killed'"))
    return problems


def _has(script: Script, name: str) -> bool:
    try:
        script.character(name)
    except KeyError:
        return False
    return True


def _questions(script: Script) -> list[Problem]:
    problems: list[Problem] = []
    names = {name for c in script.characters for name in c.all_names}
    for i, question in enumerate(script.questions.choice):
        where = f"questions.choice[{i}]"
        if not question.options:
            problems.append(_error(f"{where}.options", "a choice question needs options"))
        for j, letter in enumerate(question.answer):
            if letter not in question.options:
                problems.append(_error(f"{where}.answer[{j}]",
                                       f"option {letter!r} does not exist "
                                       f"(options: {', '.join(question.options)})"))
        if not question.answer:
            problems.append(_warning(f"{where}.answer", "no correct option is given"))
        if len(question.answer) > 1 and not question.multiple:
            problems.append(_warning(f"{where}.multiple",
                                     "several correct options on a single-answer question"))
        if question.asked_of is not None and question.asked_of not in names:
            problems.append(_error(f"{where}.asked_of",
                                   f"{question.asked_of!r} is not a character"))
    for i, factual in enumerate(script.questions.factual):
        if factual.character is not None and factual.character not in names:
            problems.append(_error(f"questions.factual[{i}].character",
                                   f"{factual.character!r} is not a character"))
    return problems
