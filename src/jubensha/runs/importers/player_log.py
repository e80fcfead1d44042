"""Turn a PLAYER* authors' game transcript into a run folder of ours.

The transcript (``<Title>.xlsx``: ``index, stage, speaker, listener, words, prompt``) holds
two stages: ``self introduction stage`` (each player to ``all``) and questioning pairs
labelled ``<asker> ask <target> for death of <victim>``. They become ``introduction`` and
``questioning`` stages with ``Spoke`` events (introduction, question, answer; an answer
points at its question), all public, since PLAYER* keeps one shared chat store. Each
row's prompt and reply become a call record, so the run reads like a game of ours (the
prompt was written before the row was said: its ``seen`` is the event before the row's);
the meta says it is imported and from where. The logs hold no votes: the result has none.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import BaseModel

from jubensha.engine.events import Event, Spoke, StageStarted
from jubensha.engine.game import GameResult
from jubensha.eval.playerlogs import METHODS, TranscriptRow, read_transcript, script_title
from jubensha.llm.base import GenerateConfig, Message
from jubensha.llm.calls import CallRecord
from jubensha.memory.text import detect_language
from jubensha.runlog.folder import EVENTS, META, RunFolder, RunMeta, SeatInfo
from jubensha.runs.transcript import render_markdown
from jubensha.safeload import one_line
from jubensha.scripts.model import Language, Script

MODEL = "gpt-35-turbo-16k-0613"
"""The model every seat used in the authors' games (PLAYER* paper, section 3.1)."""
INTRODUCTION = "self introduction stage"
_ASK = re.compile(r"^(?P<asker>.+?) ask (?P<target>.+?) for death of (?P<victim>.+)$")
Kind = Literal["introduction", "question", "answer", "statement"]


class PlayerLogImportError(Exception):
    """A transcript that cannot be imported; the message names the file and the row."""


class ImportSummary(BaseModel):
    dest: Path
    method: str
    language: str
    seats: list[str]
    events: int
    calls: int


def infer_origin(src: Path) -> tuple[str | None, str | None]:
    """Method and language from ``log_<lang>/log_<Method>/<Script>/<Title>.xlsx``."""
    parents = src.resolve().parents
    if len(parents) < 3:
        return None, None
    method = METHODS.get(parents[1].name.removeprefix("log_"))
    language = {"log_cn": "zh", "log_en": "en"}.get(parents[2].name)
    return method, language


def _classify(row: TranscriptRow, src: Path) -> tuple[str, Kind]:
    """The stage kind and speech kind of a row."""
    if row.stage == INTRODUCTION:
        return "introduction", "introduction"
    asked = _ASK.match(row.stage)
    if asked is None:
        raise PlayerLogImportError(f"{src}: row with index {row.index}: unknown stage "
                                   f"{one_line(row.stage, 80)!r} (expected {INTRODUCTION!r} or "
                                   f"'<asker> ask <target> for death of <victim>')")
    if row.speaker == asked["asker"]:
        return "questioning", "question"
    if row.speaker == asked["target"] and row.listener == asked["asker"]:
        return "questioning", "answer"
    return "questioning", "statement"


def convert(rows: list[TranscriptRow], src: Path, method: str
            ) -> tuple[list[Event], list[CallRecord]]:
    """Events and call records of a transcript, numbered in order."""
    events: list[Event] = []
    calls: list[CallRecord] = []
    stage = ""
    questions: dict[tuple[str, str], int] = {}
    for row in rows:
        kind, speech = _classify(row, src)
        if kind != stage:
            stage = kind
            events.append(StageStarted(index=len(events), stage=kind, kind=kind))
        to = None if row.listener in ("", "all") else row.listener
        reply_to = questions.get((row.listener, row.speaker)) if speech == "answer" else None
        events.append(Spoke(index=len(events), stage=kind, speaker=row.speaker, kind=speech,
                            text=row.words, to=to, reply_to=reply_to))
        if speech == "question" and to is not None:
            questions[(row.speaker, to)] = len(events) - 1
        if row.prompt:
            calls.append(CallRecord(
                index=len(calls), purpose=speech, seat=row.speaker, access="seat",
                seen=len(events) - 2, model=MODEL,
                messages=[Message(role="user", content=row.prompt)], config=GenerateConfig(),
                raw=row.words, origin="replay",
                notes=[(f"imported from {src.name}, transcript index {row.index} "
                        f"({row.stage}); {method}, played by the PLAYER* authors")]))
    return events, calls


def import_player_log(src: Path, dest: Path, *, method: str | None = None,
                      language: str | None = None, script: Script | None = None,
                      script_source: str = "") -> ImportSummary:
    """Write the run folder ``dest`` from the transcript ``src``.

    Method and language default to what the log's folders say; ``script`` (the WellPlay
    script the game was played on) supplies the script id and title.
    """
    if (dest / EVENTS).exists() or (dest / META).exists():
        raise PlayerLogImportError(f"{dest}: already holds a run; choose an empty folder")
    rows = read_transcript(src)
    if not rows:
        raise PlayerLogImportError(f"{src}: the transcript has no rows")
    found_method, found_language = infer_origin(src)
    method = method or found_method or "unknown"
    language = language or found_language or detect_language(" ".join(r.words for r in rows))
    events, calls = convert(rows, src, method)
    order = list(dict.fromkeys(r.speaker for r in rows if r.stage == INTRODUCTION))
    seats = list(dict.fromkeys([*order, *(r.speaker for r in rows)]))
    title = script.title if script else script_title(src.parent.name)
    procedure: dict[str, Any] = {"name": f"imported {method} game",
                                 "stages": ["introduction", "questioning"]}
    meta = RunMeta(
        script_id=script.id if script else title, script_title=title,
        script_source=script_source, language=language, procedure=procedure,
        seats={s: SeatInfo(architecture=method, model=MODEL) for s in seats}, seed=0,
        order=order, options={"imported": {
            "format": "player-log", "source": str(src), "method": method, "rows": len(rows),
            "note": "a real game played with GPT-3.5 by the PLAYER* authors, not played here",
            "unknown_speakers": [s for s in seats if script and s not in _names(script)]}})
    folder = RunFolder(dest, meta, script)
    try:
        for event in events:
            folder.write_event(event)
        for record in calls:
            folder.write(record)
        result = GameResult(script_id=meta.script_id, procedure=procedure["name"], seed=0,
                            language=cast(Language, language),  # validated by GameResult
                            order=order, winner="none", outcomes=[],
                            votes=[], failures=0, events=len(events), duration_s=0.0)
        folder.finish(result, render_markdown(events, meta))
    finally:
        folder.close()
    return ImportSummary(dest=dest, method=method, language=language, seats=seats,
                         events=len(events), calls=len(calls))


def _names(script: Script) -> set[str]:
    return {name for c in script.characters for name in c.all_names}
