"""Internal.

Whether a finished run's files agree with each other, for whoever counts it in a table.

``result.json`` is a summary anyone can edit; ``events.jsonl`` is the game as it was
played. A shared batch whose ``result.json`` says the civilians won while its reveal says
the murderers did, or whose ``calls.jsonl`` was answered by a model other than the one its
``meta.json`` seats, is not a result of what it claims. ``disagreements`` names each such
difference; reports and the batch index count a game only when there is none.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

from jubensha.engine.events import Failure, GameEnded
from jubensha.llm.calls import is_note
from jubensha.llm.registry import client_names
from jubensha.runlog.folder import (
    CALLS,
    EVENT_ADAPTER,
    EVENTS,
    META,
    RESULT,
    RunError,
    RunLog,
    RunMeta,
    RunResult,
    present,
    read_json,
    read_jsonl,
    read_meta,
    read_own,
)

NO_MODEL = "none"
"""The model of a seat a person played (``runs.play.NO_MODEL``)."""
SHOWN = 3
"""Differences of one kind named in the message; the rest are counted."""


def disagreements(run: RunLog) -> list[str]:
    """What the run's ``result.json`` says that its events do not, and the models its calls
    name that its ``meta.json`` does not seat (empty: they agree, or there is no result)."""
    if run.result is None:
        return []
    return [*_result_against_events(run), *_calls_against_meta(run)]


def _result_against_events(run: RunLog) -> list[str]:
    result = run.result
    assert result is not None
    found: list[str] = []
    ended = [event for event in run.events if isinstance(event, GameEnded)]
    told = ended[-1].winner if ended else "none"
    winner = "none" if result.degraded else told
    if result.winner != winner:
        found.append(f"result.json says the winner is {result.winner!r}, events.jsonl's "
                     f"reveal says {winner!r}")
    if ended and not result.degraded and [o.model_dump() for o in result.outcomes] != [
            o.model_dump() for o in ended[-1].outcomes]:
        found.append("result.json's vote outcomes are not those of events.jsonl's reveal")
    failures = sum(isinstance(event, Failure) for event in run.events)
    if result.failures != failures:
        found.append(f"result.json counts {result.failures} failures, events.jsonl "
                     f"records {failures}")
    if not run.truncated and result.events != len(run.events):
        found.append(f"result.json counts {result.events} events, events.jsonl holds "
                     f"{len(run.events)}")
    return found


def _calls_against_meta(run: RunLog) -> list[str]:
    return models_against_meta(run.meta, ((r.seat, r.model) for r in run.calls))


def models_against_meta(meta: RunMeta | None,
                        calls: Iterable[tuple[str | None, str]]) -> list[str]:
    """The calls (seat, model) answered by a model other than the one ``meta`` seats."""
    calls = list(calls)
    if meta is None:
        return ["no meta.json names the seats' models"] if calls else []
    seated = {seat: info.model for seat, info in meta.seats.items()}
    foreign: Counter[tuple[str, str]] = Counter()
    for seat, model in calls:
        if seat is None or is_note(model):
            continue  # a judge's or a metric's call, or a check that called no model
        expected = seated.get(seat)
        if expected is None:
            foreign[(seat, "a seat meta.json does not list")] += 1
        elif expected != NO_MODEL and model not in (client_names(expected) or {model}):
            foreign[(seat, model)] += 1
    return [f"calls.jsonl has {count} call(s) of {seat[:80]!r} answered by {model[:80]!r}, "
            f"while meta.json seats {seated.get(seat, '(no such seat)')!r}"
            for (seat, model), count in foreign.most_common(SHOWN)]


def folder_disagreements(folder: Path) -> list[str]:
    """``disagreements`` of a run folder, read for this alone: the calls' seats and models
    are taken from the start of each line (a long game's call log is tens of MB of
    prompts); a ``RunError`` when a file cannot be read."""
    truncated: list[str] = []
    run = RunLog(folder, read_meta(folder / META),
                 read_jsonl(folder / EVENTS, EVENT_ADAPTER.validate_json, truncated), [],
                 read_json(folder / RESULT, RunResult), truncated)
    if run.result is None:
        return []
    return [*_result_against_events(run),
            *models_against_meta(run.meta, call_models(folder / CALLS))]


_HEAD = re.compile(rb'\{"index":-?\d+,"time":"[^"\\]*","purpose":"(?:[^"\\]|\\.)*",'
                   rb'"seat":(null|"(?:[^"\\]|\\.)*"),"access":(?:null|"[a-z]*"),'
                   rb'"subject":(?:null|"(?:[^"\\]|\\.)*"),"seen":(?:null|-?\d+),'
                   rb'"model":("(?:[^"\\]|\\.)*")')
"""The start of a call record as the run log writes it (fields in their order)."""


def call_models(path: Path) -> Iterator[tuple[str | None, str]]:
    """(seat, model) of every call in a call log; a line not written as the log writes
    them is read whole. A torn last line is skipped."""
    if not present(path):
        return
    lines = read_own(path).split(b"\n")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        head = _HEAD.match(line)
        if head is not None:
            seat = json.loads(head.group(1))
            yield (seat if isinstance(seat, str) else None), str(json.loads(head.group(2)))
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            if number == len(lines) or (number == len(lines) - 1 and not lines[-1].strip()):
                return  # a torn last line: what a killed process leaves
            raise RunError(f"{path}:{number}: not a valid record") from None
        if not isinstance(record, dict):
            raise RunError(f"{path}:{number}: not a valid record")
        seat = record.get("seat")
        yield (seat if isinstance(seat, str) else None), str(record.get("model"))[:200]
