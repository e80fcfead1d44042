"""Internal.

Speech being written: what a seat is saying before it has said it.

A local model writes about as fast as a person reads, so a table that shows speech only
once it is final leaves people waiting in silence. While a seat answers a decision whose
answer is public (a speech, a question, a turn, an accusation), the table offers a
*draft sink*: the agent hands it the text it has written so far, each time it grows, and
the table passes it on to whoever shows the game live (the terminal, the web table) as
``(seat, decision, text)``. A draft is never an event: the run log, the other seats and
the result see only the final action, which may differ from the last draft (the speech
guard may cut or rewrite it; ``agents.guard`` lets only sentences that pass reach the
sink). The sink travels with the decision's task in a context variable, so nothing
between the table and the model has to pass it along.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from jubensha.engine.decisions import Accuse, AskQuestions, BaseDecision, Speak, TakeTurn

DraftSink = Callable[[str], None]
"""Receives the public text of the decision under way: the whole text so far."""

DraftHook = Callable[[str, BaseDecision, str], None]
"""The table's listener: (seat, decision, text so far)."""

PUBLIC_ANSWERS = (Speak, AskQuestions, TakeTurn, Accuse)
"""Decisions whose answer the table makes public at once (a vote stays secret)."""

_sink: ContextVar[DraftSink | None] = ContextVar("jubensha_draft_sink", default=None)


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


def table_sink(hook: DraftHook | None, seat: str, decision: BaseDecision
               ) -> DraftSink | None:
    """The table's sink for ``seat`` answering ``decision``: None when nobody listens or
    the answer is no public text."""
    if hook is None or not isinstance(decision, PUBLIC_ANSWERS):
        return None
    return lambda text: hook(seat, decision, text)
