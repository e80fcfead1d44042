"""The omniscient review of a run folder: the outcome (who was eliminated and why, every
ballot, the truth), the metrics ``jubensha eval`` wrote to its ``eval/``, the suspicion
charts with the murderers marked, every event with its audience, every character's script
and the model calls of each seat."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from jubensha.eval.judge import EVAL_DIR
from jubensha.runlog.folder import RunLog
from jubensha.runs.batch_folders import read_metrics
from jubensha.runs.play import NO_MODEL
from jubensha.scripts.model import Script
from jubensha.web.charts import charts
from jubensha.web.ending import ending
from jubensha.web.roster import PALETTE
from jubensha.web.timeline import timeline

MAX_EVAL_BYTES = 8 * 1024 * 1024
"""Metric files read for a review at most, together; a larger eval/ is not read."""


class SeatRow(BaseModel):
    name: str
    colour: int
    person: bool
    architecture: str = ""
    model: str = ""
    murderer: bool = False


class MetricRow(BaseModel):
    metric: str
    numbers: dict[str, float] = {}
    note: str = ""


def review_values(run: RunLog, script: Script | None) -> dict[str, Any]:
    lang = run.meta.language if run.meta else "en"
    seats = _seat_names(run, script)
    murderers = set(script.murderers) if script else set()
    outcome = ending(run.events, None, run.result.extra if run.result else None)
    if outcome is not None:
        murderers |= {name for verdict in outcome.verdicts for name in verdict.murderers}
    called = sorted({call.seat or "-" for call in run.calls})
    return {"run": run, "script": script, "lang": lang, "ending": outcome,
            "seat_rows": _seat_rows(run, seats, murderers), "metrics": metrics(run.path),
            "charts": charts(run.events, run.calls, seats, murderers=murderers),
            "entries": timeline(run.events, lang, seats), "seats": called,
            "started": (run.meta.started[:16].replace("T", " ") if run.meta else ""),
            "title": (run.meta.script_title if run.meta else "") or run.path.name}


def _seat_names(run: RunLog, script: Script | None) -> list[str]:
    if script is not None:
        return [character.name for character in script.characters]
    return list(run.meta.seats) if run.meta else []


def _seat_rows(run: RunLog, seats: list[str], murderers: set[str]) -> list[SeatRow]:
    if run.meta is None:
        return []
    rows: list[SeatRow] = []
    for name, info in run.meta.seats.items():
        number = seats.index(name) if name in seats else len(rows)
        person = info.model == NO_MODEL
        rows.append(SeatRow(name=name, colour=number % len(PALETTE), person=person,
                            architecture="" if person else info.architecture,
                            model="" if person else info.model, murderer=name in murderers))
    return rows


def metrics(folder: Path) -> list[MetricRow] | None:
    """What ``eval/`` holds per metric: its numbers, or why it has none; None when the
    folder has no evaluation or too large a one to read."""
    files = sorted((folder / EVAL_DIR).glob("*.json"))
    if not files or sum(path.stat().st_size for path in files) > MAX_EVAL_BYTES:
        return None
    rows: list[MetricRow] = []
    for metric, found in sorted(read_metrics(folder).items()):
        note = str(found.get("error") or found.get("skipped") or "")
        numbers = {} if note else {key: float(value) for key, value in found.items()
                                   if isinstance(value, int | float)}  # not its scoring
        rows.append(MetricRow(metric=metric, numbers=numbers, note=note))
    return rows
