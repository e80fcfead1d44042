"""Internal.

A person's moves, kept in the run folder as they are made so that an interrupted game
with people at the table can be played on (``runlog.resume`` gives the model calls back;
these give the people's answers back).

A model's replies are in ``calls.jsonl``; a person's moves are not model calls, so each is
appended to a moves file as it is taken: the seat, the number of the decision (the seat's
first, its second...), its kind and the action; or that the person left (end of input at
the terminal, removed by the host in the browser) before a decision. The terminal writes
``people.jsonl``; a browser table writes ``web/answers.jsonl`` (``web.tablelog``). Nothing
here is secret: the moves are in ``events.jsonl`` too, only not in a form the game can be
given again.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, SerializeAsAny, field_validator

from jubensha.engine.decisions import BaseAction, Decision, action_type
from jubensha.registry import UnknownName
from jubensha.runlog.folder import read_jsonl

PEOPLE = "people.jsonl"
"""The moves of the people who played at the terminal, in the run folder."""


class Answer(BaseModel):
    """One move of a person: ``action`` answered the seat's decision number ``decision``
    (of type ``kind``), or, with ``left``, the person had gone before it."""

    seat: str
    decision: int
    kind: str = ""
    action: SerializeAsAny[BaseAction] | None = None
    left: bool = False

    @field_validator("action", mode="before")
    @classmethod
    def _typed(cls, value: Any) -> Any:
        """A logged action read back as the class its ``type`` names (any registered kind's
        action, a plug-in's too); an unknown type is an error of the line."""
        if isinstance(value, dict):
            try:
                return action_type(str(value.get("type"))).model_validate(value)
            except UnknownName as exc:
                raise ValueError(str(exc)) from None
        return value


class MovesLog:
    """A moves file, appended to one line at a time."""

    def __init__(self, path: Path):
        self.path = path

    def append(self, answer: Answer) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as out:
            out.write(answer.model_dump_json() + "\n")

    def read(self) -> dict[str, list[Answer]]:
        """Each seat's answers in order, read as every log of a run folder is
        (``runlog.folder.read_jsonl``): none when there is no file, a last line cut off
        while it was written skipped; any other bad line, a link or a file too large is a
        ``RunError`` naming the file (and the line)."""
        found: dict[str, list[Answer]] = defaultdict(list)
        for answer in read_jsonl(self.path, Answer.model_validate_json, []):
            found[answer.seat].append(answer)
        return found


class Replay:
    """A seat's logged answers, given back decision by decision while the game asks what
    it asked before; once it asks something else (another kind), the rest is dropped."""

    def __init__(self, answers: list[Answer]):
        self.answers = {answer.decision: answer for answer in answers}

    def take(self, number: int, decision: Decision) -> Answer | None:
        """The logged answer to the seat's decision ``number`` (an answer, or that the
        person had left); None when the log has none for it or the game went another way."""
        answer = self.answers.pop(number, None)
        if answer is None:
            return None
        if answer.left:
            self.answers.clear()
            return answer
        if answer.kind != decision.type or answer.action is None:
            self.answers.clear()
            return None
        return answer
