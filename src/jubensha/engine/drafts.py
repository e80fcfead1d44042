"""Speech being written: what a seat is saying before it has said it.

A local model writes about as fast as a person reads, so a table that shows speech only
once it is final leaves people waiting in silence. While a seat answers a decision whose
answer is public (a speech, a question, a turn, an accusation), the table offers a
*draft sink*: the agent hands it the text it has written so far, each time it grows, and
the table passes it on to whoever shows the game live (the terminal, the web table) as a
``Draft``: the seat, the decision, the text and who will hear it (a stage whose exchanges
are private says so with ``hearing``: a live view must not show a draft to those who
will not hear the speech). A draft is never an event: the run log, the other seats and
the result see only the final action, which may differ from the last draft (the speech
guard may cut or rewrite it; ``agents.guard`` lets only sentences that pass reach the
sink). The sink travels with the decision's task in a context variable, so nothing
between the table and the model has to pass it along.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from jubensha.engine.decisions import Accuse, AskQuestions, BaseDecision, Speak, TakeTurn
from jubensha.engine.events import Accused, Audience, Event, Investigated, Spoke

DraftSink = Callable[[str], None]
"""Receives the public text of the decision under way: the whole text so far."""


@dataclass(frozen=True)
class Draft:
    """A text being written: by ``seat`` for ``decision``, heard by ``audience`` once said."""

    seat: str
    decision: BaseDecision
    text: str
    audience: Audience = "public"

    def visible_to(self, seat: str) -> bool:
        return self.audience == "public" or seat in self.audience


DraftHook = Callable[[Draft], None]
"""The table's listener."""

PUBLIC_ANSWERS = (Speak, AskQuestions, TakeTurn, Accuse)
"""Decisions whose answer the table makes public at once (a vote stays secret)."""

_sink: ContextVar[DraftSink | None] = ContextVar("jubensha_draft_sink", default=None)
_audience: ContextVar[Audience] = ContextVar("jubensha_draft_audience", default="public")


def draft_sink() -> DraftSink | None:
    """Where the decision under way may show its text as it is written (None: nowhere)."""
    return _sink.get()


@contextmanager
def drafting(sink: DraftSink | None) -> Iterator[None]:
    """Inside, ``draft_sink()`` is ``sink`` (a wrapper such as the speech guard puts a
    filter in front of the table's sink this way)."""
    token = _sink.set(sink)
    try:
        yield
    finally:
        _sink.reset(token)


@contextmanager
def hearing(audience: Audience) -> Iterator[None]:
    """Decisions asked inside are heard by ``audience`` only (a private exchange)."""
    token = _audience.set(audience)
    try:
        yield
    finally:
        _audience.reset(token)


def table_sink(hook: DraftHook | None, seat: str, decision: BaseDecision
               ) -> DraftSink | None:
    """The table's sink for ``seat`` answering ``decision``: None when nobody listens or
    the answer is no public text."""
    if hook is None or not isinstance(decision, PUBLIC_ANSWERS):
        return None
    audience = _audience.get()
    return lambda text: hook(Draft(seat, decision, text, audience))


def drafters_done(event: Event) -> list[str]:
    """The seats whose draft ``event`` replaces: it makes their decision public (a speech,
    an accusation, a search)."""
    if isinstance(event, Spoke):
        return [event.speaker]
    if isinstance(event, Accused):
        return [event.accuser]
    if isinstance(event, Investigated):
        return [event.seat]
    return []
