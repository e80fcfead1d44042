"""A sentence the guard removes is never shown: not in a draft handed to the table, not in
the draft fragment of a seat, spectator or host page (what their ``/live`` answer carries;
the server-sent events carry only the table's version), not in the terminal's line."""

from __future__ import annotations

import asyncio
import io

from rich.console import Console

from jubensha.agents.registry import make_agent
from jubensha.engine import Spoke
from jubensha.engine.drafts import Draft
from jubensha.engine.game import Game, Seat
from jubensha.engine.procedure import find_procedure
from jubensha.jobs import CallBar
from jubensha.llm import ScriptedModel
from jubensha.runs.progress import Progress
from jubensha.scripts.bundled import find_script
from jubensha.web.pages import Pages

REMOVED = "I'm sorry, but I can't assist with that."
REPLY = (f"I was up in the lamp room at nine. {REMOVED} The fog came in before ten. "
         "Nobody else was up.")


def test_a_streamed_sentence_the_guard_removes_reaches_no_page_and_no_terminal() -> None:
    script = find_script("lighthouse-keeper")
    pages = Pages()
    console = Console(record=True, force_terminal=True, width=200, file=io.StringIO())
    bar = CallBar(console, "playing")
    progress = Progress(bar, 5, "en")
    shown: list[str] = []

    def on_draft(draft: Draft) -> None:
        shown.append(draft.text)
        shown.append(pages.fragment("draft.html", "en", drafts=[draft],
                                    colours={n: i for i, n in enumerate(script.names)}))
        progress.on_draft(draft)
        assert bar.drafting is not None
        shown.append(bar.drafting.plain)

    seats = {name: Seat(make_agent("naive:guard"),
                        model=ScriptedModel(replies={"introduction": [REPLY]}))
             for name in script.names}
    game = Game(script, find_procedure("demo"), seats, seed=0, on_draft=on_draft)
    with bar.shown():
        asyncio.run(game.run())
    said = [e.text for e in game.table.events if isinstance(e, Spoke)
            and e.kind == "introduction"]
    assert said[0] == ("I was up in the lamp room at nine. The fog came in before ten. "
                       "Nobody else was up.")
    assert any("nine. The fog came in before ten." in text for text in shown)  # the rest streams
    assert not any("can't assist" in text or "can&#39;t assist" in text for text in shown)
    assert "can't assist" not in console.export_text()
