"""The records of one script: its multiple-choice questions, each with the text its
asker can read.

- A generated mystery (one with a proof): the questions of its ``inferential`` set (who,
  with every character a choice; how, the weapon; why, the motive; when), each about the
  table view: what the whole table can learn.
- Any other script: the questions asked of a character (WellPlay's per-character sets),
  each about that character's seat view, as PLAYER*'s single-script access asks them.

A script with a truth but no "who" question gets one, its choices the characters."""

from __future__ import annotations

import hashlib

from pydantic import ValidationError

from jubensha.prompts import render
from jubensha.scripts.export.casebook import seat_view, table_view
from jubensha.scripts.export.model import ExportError, Generated, Origin, Record
from jubensha.scripts.model import ChoiceQuestion, Script

GENERATED_SET = "inferential"
"""The generated mysteries' question set that asks the whole case, once."""


def records(script: Script) -> tuple[list[Record], list[str]]:
    """Every record of ``script``, in the order of its questions, and "id: why" for each
    question left out (a few WellPlay rows have no answer, or no question text)."""
    if script.truth is not None and script.truth.proof is not None:
        asked = [q for q in script.questions.choice if q.set == GENERATED_SET]
        if not any(q.aspect == "who" for q in asked):
            asked = [*_who(script), *asked]
        table = table_view(script)
        contexts = [table] * len(asked)
    else:
        asked = [q for q in script.questions.choice if q.asked_of is not None]
        views: dict[str, str] = {}
        for question in asked:
            character = script.character(question.asked_of or "")
            if character.name not in views:
                views[character.name] = seat_view(script, character)
        contexts = [views[script.character(q.asked_of or "").name] for q in asked]
    found: list[Record] = []
    skipped: list[str] = []
    for question, context in zip(asked, contexts, strict=True):
        try:
            found.append(_record(script, question, context))
        except (ValueError, ValidationError) as exc:
            skipped.append(f"{question.id}: {_reason(exc)}")
    return found, skipped


def origin(script: Script, made: list[Record], path: str | None = None) -> Origin:
    """How to get ``script`` again (its file when it came from one, a generated mystery's
    rewritten prose included), with the fingerprint of what was exported from it."""
    made_by = generated(script)
    return Origin(id=script.id, source=script.metadata.source, language=script.language,
                  records=len(made), path=path, fingerprint=fingerprint(made),
                  seed=made_by.seed if made_by else None,
                  level=made_by.level if made_by else None,
                  players=made_by.players if made_by else None,
                  acts=made_by.acts if made_by else None,
                  generator_version=made_by.version if made_by else None)


def fingerprint(made: list[Record]) -> str:
    """sha256 over the records' texts and answers, in order."""
    digest = hashlib.sha256()
    for record in made:
        digest.update(record.model_dump_json().encode("utf-8"))
    return digest.hexdigest()


def generated(script: Script) -> Generated | None:
    """The generator's request, for a generated mystery (None for any other);
    ``ExportError`` naming the field (the caller names the script) when a script says it
    is generated but its request is not one."""
    if script.metadata.source != "generated":
        return None
    try:
        return Generated.model_validate(script.metadata.extra.get("generator"))
    except ValidationError as exc:
        raise ExportError(f"metadata.extra.generator: {_reason(exc)}") from None


def _who(script: Script) -> list[ChoiceQuestion]:
    if script.truth is None or not script.truth.murderers:
        return []
    letters = [chr(ord("a") + i) for i in range(len(script.characters))]
    asked = render("export", "who", script.language, victims=[v.name for v in script.victims])
    return [ChoiceQuestion(
        id="who", aspect="who", category="objective", question=asked,
        options=dict(zip(letters, script.names, strict=True)),
        answer=[letters[script.names.index(m)] for m in script.truth.murderers
                if m in script.names],
        multiple=len(script.truth.murderers) > 1)]


def _reason(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        return (f"{where}: " if where else "") + first["msg"].removeprefix("Value error, ")
    return str(exc)


def _record(script: Script, question: ChoiceQuestion, context: str) -> Record:
    """One question as a record: options lettered A, B, ... in the script's order."""
    keys = list(question.options)
    made_by = generated(script)
    return Record(
        id=f"{script.id}/{question.id}", script=script.id, title=script.title,
        source=script.metadata.source, language=script.language,
        level=made_by.level if made_by else None, seed=made_by.seed if made_by else None,
        players=len(script.characters), view="seat" if question.asked_of else "table",
        asked_of=question.asked_of, aspect=question.aspect, points=question.worth,
        context=context, question=question.question,
        choices=[question.options[k] for k in keys],
        answer=[_letter(keys, a) for a in question.answer],
        multiple=question.multiple or len(question.answer) > 1)


def _letter(keys: list[str], answer: str) -> str:
    if answer not in keys:
        raise ValueError(f"answer {answer!r} is none of the options")
    return chr(ord("A") + keys.index(answer))
