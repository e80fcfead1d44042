"""Internal.

Whether a finished run's files agree with each other, for whoever counts it in a table.

``result.json`` is a summary anyone can edit; ``events.jsonl`` is the game as it was
played. A shared batch whose ``result.json`` says the civilians won while its reveal says
the murderers did, or whose ``calls.jsonl`` was answered by a model other than the one its
``meta.json`` seats, is not a result of what it claims. ``disagreements`` names each such
difference; reports and the batch index count a game only when there is none.
"""

from __future__ import annotations

from collections import Counter

from jubensha.engine.events import Failure, GameEnded
from jubensha.llm.calls import NOT_A_CALL
from jubensha.llm.registry import client_names
from jubensha.runlog.folder import RunLog

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
    if run.meta is None:
        return ["no meta.json names the seats' models"] if run.calls else []
    seated = {seat: info.model for seat, info in run.meta.seats.items()}
    foreign: Counter[tuple[str, str]] = Counter()
    for record in run.calls:
        if record.seat is None or record.model == NOT_A_CALL:
            continue  # a judge's or a metric's call, or a check that called no model
        model = seated.get(record.seat)
        if model is None:
            foreign[(record.seat, "a seat meta.json does not list")] += 1
        elif model != NO_MODEL and record.model not in (client_names(model)
                                                        or {record.model}):
            foreign[(record.seat, record.model)] += 1
    return [f"calls.jsonl has {count} call(s) of {seat!r} answered by {model[:80]!r}, "
            f"while meta.json seats {seated.get(seat, '(no such seat)')!r}"
            for (seat, model), count in foreign.most_common(SHOWN)]
