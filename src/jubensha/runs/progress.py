"""Internal.

The progress line of a game at the terminal: model calls so far, which stage of how many,
who is doing what (several seats at once while they vote: how many have done it), and the
speech being written, in the game's language.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text

from jubensha.engine.decisions import BaseDecision
from jubensha.engine.drafts import Draft, drafters_done
from jubensha.engine.events import Event, StageStarted
from jubensha.engine.narration import activity, labels
from jubensha.engine.table import purpose_of
from jubensha.jobs import CallBar
from jubensha.prompts import message
from jubensha.terminal import printable

SHOWN_SEATS = 2
"""Seats named in the line; more are counted ("4 players weighing the vote…"): the line
must leave the bar room on a terminal 80 columns wide."""


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
        self.asked: dict[str, int] = {}
        """Purpose → seats asked for it in this stage (a vote: every seat at once)."""
        self.answered: dict[str, int] = {}
        self.speaker: str | None = None

    def on_event(self, event: Event) -> None:
        if isinstance(event, StageStarted):
            self.stage += 1
            self.stages = max(self.stages, self.stage)
            self.title = event.title
            self.asked, self.answered = {}, {}
            self.show()
        if self.speaker is not None and (isinstance(event, StageStarted)
                                         or self.speaker in drafters_done(event)):
            self.speaker = None
            self.bar.draft(None)

    def on_ask(self, seat: str, decision: BaseDecision) -> Callable[[], None]:
        purpose = purpose_of(decision)
        self.busy[seat] = purpose
        self.asked[purpose] = self.asked.get(purpose, 0) + 1
        self.show()

        def answered() -> None:
            self.busy.pop(seat, None)
            self.answered[purpose] = self.answered.get(purpose, 0) + 1
            self.show()
        return answered

    def on_draft(self, draft: Draft) -> None:
        self.speaker = draft.seat
        self.bar.draft(Text(draft.seat, style="bold") + Text(
            message(self.lang, "draft_mark"), style="dim") + Text(printable(draft.text)))

    def show(self) -> None:
        if not self.busy:
            self.bar.note(message(self.lang, "stage_note", stage=self.stage,
                                  stages=self.stages, title=self.title))
            return
        purpose = next(reversed(self.busy.values()))
        seats = [seat for seat, doing in self.busy.items() if doing == purpose]
        who = (labels(self.lang)["sep"].join(seats) if len(seats) <= SHOWN_SEATS
               else message(self.lang, "busy_players", n=len(seats),
                            done=self.answered.get(purpose, 0),
                            of=self.asked.get(purpose, len(seats))))
        self.bar.note(message(self.lang, "busy", stage=self.stage, stages=self.stages,
                              title=self.title, seats=who,
                              doing=message(self.lang, f"busy_{activity(purpose)}")))
