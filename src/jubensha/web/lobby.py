"""What the lobby lists: the tables being played, each with when it started and who sits
at it (two tables of one mystery are told apart at a glance), and the past run folders,
both newest first, where the folder of a table still being played reads "playing", not
"unfinished"."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from jubensha.web.runsdir import list_runs
from jubensha.web.tables import LiveTable

SHOWN_RUNS = 50
"""Past runs the lobby lists (the newest); the run list shows them all."""


class LiveRow(BaseModel):
    """A live table as the lobby lists it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    table: LiveTable
    started: str
    started_at: str
    people: list[str]
    agents: list[str]
    """The agents' architectures and models, each kind once with its count
    ("mirage · scripted ×3")."""


def lobby_values(tables: Iterable[LiveTable], root: Path,
                 shown: int | None = SHOWN_RUNS) -> dict[str, Any]:
    """The tables being played (an ended one is a past run), the ``shown`` newest past
    runs (all: None), each list newest first, and the paths of the runs a live table is
    playing, from the run folders under ``root``; reads files, so call it from a worker
    thread."""
    runs = list_runs(root)
    by_path = {entry.path: entry for entry in runs}
    playing = set()
    rows = []
    for table in [t for t in tables if not t.ended]:
        path = _relative(table.out, root)
        if path is not None:
            playing.add(path)
        entry = by_path.get(path or "")
        kinds = Counter(f"{plan.architecture} · {plan.model}"
                        for name, plan in table.plans.items() if name not in table.humans)
        rows.append(LiveRow(
            table=table, started=entry.started if entry else "",
            started_at=entry.started_at if entry else "", people=table.humans,
            agents=[f"{kind} ×{n}" if n > 1 else kind for kind, n in kinds.items()]))
    rows.sort(key=lambda row: row.started_at, reverse=True)
    return {"tables": rows, "runs": runs[:shown], "playing": playing}


def _relative(folder: Path, root: Path) -> str | None:
    try:
        return folder.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None
