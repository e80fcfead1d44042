"""A human seat played from a browser page: the ``HumanIO`` of the web app.

The engine asks the seat a decision; ``WebIO`` holds it as the seat's pending decision until
the page posts an answer. Answers are validated with the terminal's own rules (numbered or
named choices, non-empty speech, ratings 0-2), so a page can send nothing the terminal would
refuse. A stale form (the decision was answered or replaced) is refused by its id. When the
host removes the person, the pending and every later decision raise ``HumanLeft`` and the
table plays its recorded fallbacks, as at the terminal.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from jubensha.agents.human import HumanIO, HumanLeft, SeatView, parse_choice
from jubensha.engine.decisions import (
    Accusation,
    Accuse,
    Action,
    AskQuestions,
    CastVote,
    Decision,
    Investigate,
    Questions,
    RateStatement,
    Rating,
    Speak,
    Speech,
    TakeTurn,
    Vote,
)
from jubensha.engine.events import Event
from jubensha.prompts import render
from jubensha.web.strings import text

MAX_TEXT = 4000
"""Longest text a person may type in one field (characters)."""


class FormError(ValueError):
    """An answer the table would refuse; the message is shown on the page."""


@dataclass
class Pending:
    """The decision a seat must answer now; ``id`` tells a fresh form from a stale one."""

    id: int
    decision: Decision
    answer: asyncio.Future[Action]


class WebIO(HumanIO):
    """The seat's view and pending decision, for the seat's page to read and answer."""

    def __init__(self, notify: Callable[[], None]):
        self.notify = notify
        self.view: SeatView | None = None
        self.pending: Pending | None = None
        self.gone = False
        self._asked = 0

    async def start(self, view: SeatView) -> None:
        self.view = view
        self.notify()

    async def show(self, event: Event) -> None:
        self.notify()

    async def decide(self, decision: Decision) -> Action:
        if self.gone:
            raise HumanLeft("the person at this seat was removed by the host")
        self._asked += 1
        future: asyncio.Future[Action] = asyncio.get_running_loop().create_future()
        self.pending = Pending(self._asked, decision, future)
        self.notify()
        try:
            return await future
        finally:
            self.pending = None
            self.notify()

    def submit(self, decision_id: int, form: Mapping[str, str]) -> None:
        """Answer the pending decision from a page's form; ``FormError`` when invalid."""
        pending = self.pending
        if pending is None or pending.id != decision_id or pending.answer.done():
            raise FormError(text(self.lang, "error_stale"))
        pending.answer.set_result(parse_answer(pending.decision, form, self.lang))

    def leave(self) -> None:
        """The host removed the person: the table's defaults play this seat from now on."""
        self.gone = True
        if self.pending is not None and not self.pending.answer.done():
            self.pending.answer.set_exception(HumanLeft("removed by the host"))
        self.notify()

    @property
    def lang(self) -> str:
        return self.view.sheet.language if self.view else "en"



# -- validation: the terminal's rules for each kind of decision ---------------------------
def parse_answer(decision: Decision, form: Mapping[str, str], lang: str) -> Action:
    """The action a form answers ``decision`` with; ``FormError`` naming what is wrong."""
    def words(field: str, *, optional: bool = False) -> str:
        value = " ".join(str(form.get(field, "")).split())
        if not value and not optional:
            label = text(lang, "field_" + field.rstrip("0123456789"))
            raise FormError(text(lang, "error_empty", field=label))
        if len(value) > MAX_TEXT:
            raise FormError(text(lang, "error_long", limit=MAX_TEXT))
        return value

    def choose(field: str, options: list[str], none: str | None = None) -> str | None:
        try:
            index = parse_choice(str(form.get(field, "")), options, none)
        except ValueError:
            raise FormError(text(lang, "error_choice")) from None
        return None if index is None else options[index]

    if isinstance(decision, Speak):
        if decision.kind == "reasoning":
            return Speech(text=render("human", "reasoning", lang, method=words("method"),
                                      motive=words("motive")))
        return Speech(text=words("text"))
    if isinstance(decision, AskQuestions):
        target = choose("target", decision.candidates)
        assert target is not None
        return Questions(target=target, questions=[
            words(f"question{n}") for n in range(1, decision.count + 1)])
    if isinstance(decision, TakeTurn):
        if form.get("action") == "investigate" and decision.locations:
            place = choose("location", decision.locations)
            assert place is not None
            return Investigate(location=place, statement=words("remark", optional=True))
        target = choose("target", decision.candidates)
        assert target is not None
        return Questions(target=target, questions=[words("question1")])
    if isinstance(decision, RateStatement):
        trust, doubt = (_score(form.get(name), lang) for name in ("trust", "doubt"))
        return Rating(trust=trust, doubt=doubt)
    if isinstance(decision, Accuse):
        return Accusation(target=choose("target", decision.candidates, "none"),
                          reason=words("reason", optional=True))
    if isinstance(decision, CastVote):
        return Vote(target=choose("target", decision.candidates, "none"),
                    reason=words("reason", optional=True))
    raise FormError(text(lang, "error_unsupported"))


def _score(value: object, lang: str) -> int:
    given = str(value or "").strip()
    if given not in ("0", "1", "2"):
        raise FormError(text(lang, "error_rating"))
    return int(given)
