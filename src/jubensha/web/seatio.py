"""A human seat played from a browser page: the ``HumanIO`` of the web app.

The engine asks the seat a decision; ``WebIO`` holds it as the seat's pending decision until
the page posts an answer. Answers are validated with the terminal's own rules (numbered or
named choices, non-empty speech, ratings 0-2), so a page can send nothing the terminal would
refuse. A stale form (the decision was answered or replaced) is refused by its id, unless
it repeats the answer already taken (a page that lost its connection sends again). When the
host removes the person, the pending and every later decision raise ``HumanLeft`` and the
table plays its recorded fallbacks, as at the terminal.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

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
    RateRound,
    RateStatement,
    Rating,
    Ratings,
    Speak,
    Speech,
    TakeTurn,
    Vote,
)
from jubensha.engine.events import Event
from jubensha.prompts import render
from jubensha.runlog.moves import Answer, Replay
from jubensha.web.strings import text
from jubensha.web.tablelog import AnswerLog

MAX_TEXT = 4000
"""Longest text a person may type in one field (characters)."""


class FormError(ValueError):
    """An answer the table would refuse; the message is shown on the page. ``stale``: the
    decision it answers is no longer the one asked."""

    def __init__(self, message: str, stale: bool = False):
        super().__init__(message)
        self.stale = stale


class NotAskedYet(Exception):
    """An answer to a decision the seat has not been asked yet: a page that answered it
    before a restart, while the resumed game is still catching up. Send it again soon."""


@dataclass
class Pending:
    """The decision a seat must answer now; ``id`` tells a fresh form from a stale one."""

    id: int
    decision: Decision
    answer: asyncio.Future[Action]


class WebIO(HumanIO):
    """The seat's view and pending decision, for the seat's page to read and answer.

    Decisions are numbered per seat. Answers go to ``log`` as they are taken; ``replay``
    (the answers an earlier run of this table logged) answers the same decisions again
    before the page is asked, so a ``resumed`` game receives the person's moves as it did;
    until it has caught up, a page's answer to a decision not asked yet is held off."""

    def __init__(self, notify: Callable[[], None], seat: str = "",
                 log: AnswerLog | None = None, replay: Sequence[Answer] = (),
                 resumed: bool = False):
        self.notify = notify
        self.resumed = resumed
        self.seat = seat
        self.log = log
        self.view: SeatView | None = None
        self.pending: Pending | None = None
        self.gone = any(answer.left for answer in replay)
        self.answered: dict[int, tuple[Decision, Action]] = {}
        self._replay = Replay(list(replay))
        self._asked = 0

    async def start(self, view: SeatView) -> None:
        self.view = view
        self.notify()

    async def show(self, event: Event) -> None:
        self.notify()

    async def decide(self, decision: Decision) -> Action:
        self._asked += 1
        number = self._asked
        replayed = self._replayed(number, decision)
        if replayed is not None:
            return replayed
        if self.gone:
            raise HumanLeft("the person at this seat was removed by the host")
        future: asyncio.Future[Action] = asyncio.get_running_loop().create_future()
        self.pending = Pending(number, decision, future)
        self.notify()
        try:
            return await future
        finally:
            self.pending = None
            self.notify()

    def _replayed(self, number: int, decision: Decision) -> Action | None:
        """The logged answer to decision ``number``; ``HumanLeft`` where the log says the
        person had been removed by then. A logged answer of another kind means the game
        went another way: the rest of the log is dropped and the page is asked."""
        answer = self._replay.take(number, decision)
        if answer is None:
            return None
        self._keep(answer)
        if answer.left or answer.action is None:
            raise HumanLeft("the person at this seat was removed by the host")
        action = cast(Action, answer.action)  # of the decision's kind: take() checked it
        self.answered[number] = (decision, action)
        return action

    def submit(self, decision_id: int, form: Mapping[str, str]) -> bool:
        """Answer the pending decision from a page's form: True when taken now, False when
        this very answer had been taken already (a page sending again after losing the
        connection); ``FormError`` when invalid or answering another decision;
        ``NotAskedYet`` while a resumed game has not reached that decision again."""
        if self.resumed and decision_id > self._asked:
            raise NotAskedYet(decision_id)
        pending = self.pending
        if pending is None or pending.id != decision_id or pending.answer.done():
            if self._same_as_taken(decision_id, form):
                return False
            raise FormError(text(self.lang, "error_stale"), stale=True)
        action = parse_answer(pending.decision, form, self.lang)
        self.answered[decision_id] = (pending.decision, action)
        self._keep(Answer(seat=self.seat, decision=decision_id, kind=pending.decision.type,
                          action=action))
        pending.answer.set_result(action)
        return True

    def _same_as_taken(self, decision_id: int, form: Mapping[str, str]) -> bool:
        taken = self.answered.get(decision_id)
        if taken is None:
            return False
        try:
            return parse_answer(taken[0], form, self.lang) == taken[1]
        except FormError:
            return False

    def leave(self) -> None:
        """The host removed the person: the table's defaults play this seat from now on."""
        if self.gone:
            return
        self.gone = True
        waiting = self.pending is not None and not self.pending.answer.done()
        self._keep(Answer(seat=self.seat, left=True,
                          decision=self._asked if waiting else self._asked + 1))
        if waiting:
            assert self.pending is not None
            self.pending.answer.set_exception(HumanLeft("removed by the host"))
        self.notify()

    def _keep(self, answer: Answer) -> None:
        if self.log is not None:
            self.log.append(answer)

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
    if isinstance(decision, RateRound):  # a field left out keeps its default, 1
        return Ratings(ratings=[Rating(trust=_score(form.get(f"trust{i}", "1"), lang),
                                       doubt=_score(form.get(f"doubt{i}", "1"), lang))
                                for i in range(len(decision.statements))])
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
