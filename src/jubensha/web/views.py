"""What each live page shows, as values for its template and for the fragments its script
fetches when the table changes: a seat's page (its sheet, the events it observed, its clue
cards, its pending decision, and after the reveal its ending), a spectator's page (the
public events and the agents' suspicion) and the host's table page.

Who may see what is decided by what is passed in: a seat's values come from its own
``SeatView``; a spectator's from public events only; the ending (ballots, the truth) only
once the game has ended.
"""

from __future__ import annotations

from typing import Any

from jubensha.engine.events import Event
from jubensha.runlog.folder import RunError, read_run
from jubensha.web.charts import Chart, charts
from jubensha.web.ending import Ending, ending
from jubensha.web.pages import Pages
from jubensha.web.roster import colour_numbers
from jubensha.web.tables import LiveTable
from jubensha.web.timeline import cards, timeline


def names(table: LiveTable) -> list[str]:
    return [character.name for character in table.script.characters]


def table_ending(table: LiveTable, me: str | None = None) -> Ending | None:
    """The ending, once the game has ended with a reveal."""
    if table.status != "ended":
        return None
    return ending(table.events, me, table.result.extra if table.result else None)


def drafts(table: LiveTable, seat: str | None) -> dict[str, Any]:
    """The speeches being written that ``seat`` may see (None: public ones), with each
    speaker's colour; none once the game has ended."""
    shown = [] if table.ended else table.drafts_for(seat)
    return {"drafts": shown, "colours": colour_numbers(names(table))}


def seat_values(table: LiveTable, seat: str, token: str) -> dict[str, Any]:
    io = table.ios[seat]
    view = io.view
    assert view is not None
    return {"table": table, "seat": seat, "token": token, "view": view,
            "entries": timeline(view.events, table.language, names(table), me=seat),
            "cards": cards(view.clues, seat), "roster": table.roster(me=seat),
            "progress": table.progress(view.events), "gone": io.gone,
            "pending": None if table.ended else io.pending, "form": {}, "error": "",
            "ending": table_ending(table, seat), "review_link": f"/seat/{token}/review",
            **drafts(table, seat)}


def seat_live(pages: Pages, table: LiveTable, seat: str, token: str, after: int,
              started: str) -> dict[str, Any]:
    """What a seat page puts in place when the table changes."""
    values = seat_values(table, seat, token)
    view = values["view"]
    lang = table.language
    pending = values["pending"]
    return {
        "version": table.version, "started": started, "count": len(view.events),
        "events": pages.fragment("events.html", lang, entries=timeline(
            view.events[max(after, 0):], lang, names(table), me=seat)),
        "decision": pending.id if pending else None,
        "kind": pending.decision.type if pending else None,
        "panel": pages.fragment("decision.html", lang, **values),
        "roster": pages.fragment("roster.html", lang, **values),
        "progress": pages.fragment("progress.html", lang, **values),
        "clues": pages.fragment("clues.html", lang, **values),
        "clue_count": len(values["cards"]),
        "draft": pages.fragment("draft.html", lang, **values),
        "ending": pages.fragment("ending.html", lang, **values) if values["ending"] else "",
        "ended": table.ended, "status": table.status, "gone": values["gone"]}


def public(events: list[Event]) -> list[Event]:
    return [event for event in events if event.audience == "public"]


def live_charts(table: LiveTable) -> list[Chart]:
    """The agents' suspicion while the game runs: a person's ratings are theirs alone and
    are left out."""
    try:
        calls = read_run(table.out).calls
    except RunError:
        calls = []
    return charts(table.events, calls, names(table), hide=table.humans)


def watch_values(table: LiveTable, token: str) -> dict[str, Any]:
    shown = public(table.events)
    return {"table": table, "token": token, "roster": table.roster(),
            "entries": timeline(shown, table.language, names(table)),
            "progress": table.progress(shown), "charts": live_charts(table), "count": len(shown),
            "ending": table_ending(table), "review_link": f"/watch/{token}/review",
            **drafts(table, None)}


def watch_live(pages: Pages, table: LiveTable, token: str, after: int,
               started: str) -> dict[str, Any]:
    values = watch_values(table, token)
    lang = table.language
    shown = public(table.events)
    return {
        "version": table.version, "started": started, "count": len(shown),
        "events": pages.fragment("events.html", lang, entries=timeline(
            shown[max(after, 0):], lang, names(table))),
        "roster": pages.fragment("roster.html", lang, **values),
        "progress": pages.fragment("progress.html", lang, **values),
        "charts": pages.fragment("charts.html", lang, **values),
        "draft": pages.fragment("draft.html", lang, **values),
        "ending": pages.fragment("ending.html", lang, **values) if values["ending"] else "",
        "ended": table.ended, "status": table.status}


def host_values(table: LiveTable, base: str) -> dict[str, Any]:
    return {"table": table, "base": base, "roster": table.roster(),
            "progress": table.progress(public(table.events)), **drafts(table, None)}


def host_live(pages: Pages, table: LiveTable, base: str, started: str) -> dict[str, Any]:
    values = host_values(table, base)
    return {"version": table.version, "started": started, "ended": table.ended,
            "status": table.status,
            "seats": pages.fragment("host_seats.html", table.language, **values),
            "draft": pages.fragment("draft.html", table.language, **values),
            "progress": pages.fragment("progress.html", table.language, **values)}
