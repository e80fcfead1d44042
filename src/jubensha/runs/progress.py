"""Internal.

The progress line of a game at the terminal: model calls so far, which stage of how many,
who is doing what (several seats at once while they vote), and the speech being written,
in the game's language.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text

from jubensha.engine.decisions import BaseDecision
from jubensha.engine.events import Accused, Event, Investigated, Spoke, StageStarted
from jubensha.engine.narration import labels
from jubensha.engine.table import purpose_of
from jubensha.jobs import CallBar
from jubensha.prompts import message, messages
from jubensha.terminal import printable

SHOWN_SEATS = 3
"""Seats named in the line; more are counted."""


class Progress:
    """Feeds a ``CallBar``: its note says the stage and who is busy with what, and above
    it the speech being written (an ``engine.drafts`` hook) until it is said."""

    def __init__(self, bar: CallBar, stages: int, lang: str):
        self.bar = bar
        self.stages = stages
        self.stage = 0
        self.title = ""
        self.lang = lang
        self.busy: dict[str, str] = {}
        self.speaker: str | None = None

    def on_event(self, event: Event) -> None:
        if isinstance(event, StageStarted):
            self.stage += 1
            self.title = event.title
            self.show()
        if self.speaker is not None and (isinstance(event, StageStarted)
                                         or self.speaker in acting(event)):
            self.speaker = None
            self.bar.draft(None)

    def on_ask(self, seat: str, decision: BaseDecision) -> Callable[[], None]:
        self.busy[seat] = purpose_of(decision)
        self.show()

        def answered() -> None:
            self.busy.pop(seat, None)
            self.show()
        return answered

    def on_draft(self, seat: str, decision: BaseDecision, text: str) -> None:
        self.speaker = seat
        self.bar.draft(Text(seat, style="bold") + Text(message(self.lang, "draft_mark"),
                                                       style="dim") + Text(printable(text)))

    def show(self) -> None:
        if not self.busy:
            self.bar.note(message(self.lang, "stage_note", stage=self.stage,
                                  stages=self.stages, title=self.title))
            return
        purpose = next(reversed(self.busy.values()))
        seats = [seat for seat, doing in self.busy.items() if doing == purpose]
        shown = seats[:SHOWN_SEATS]
        if len(seats) > SHOWN_SEATS:
            shown.append(message(self.lang, "busy_more", n=len(seats) - SHOWN_SEATS))
        key = f"busy_{purpose}" if f"busy_{purpose}" in messages(self.lang) else "busy_speak"
        self.bar.note(message(self.lang, "busy", stage=self.stage, stages=self.stages,
                              title=self.title, seats=labels(self.lang)["sep"].join(shown),
                              doing=message(self.lang, key)))


def acting(event: Event) -> list[str]:
    """The seats whose decision ``event`` makes public (a speech, an accusation, a search)."""
    if isinstance(event, Spoke):
        return [event.speaker]
    if isinstance(event, Accused):
        return [event.accuser]
    if isinstance(event, Investigated):
        return [event.seat]
    return []
