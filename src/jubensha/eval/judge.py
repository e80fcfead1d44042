"""Internal.

Model calls that metrics make: judges scoring what seats did, seats answering after the game.

Judge calls are model calls like any other: they go through ``generate_object`` (a
validated pydantic object, corrective retries), carry a precise ``purpose`` and the judged
seat as their ``subject`` (a call's ``seat`` is whose view it has; what each purpose may
see is declared once with ``llm.calls.declare``), and are logged, cached and counted. ``open_session`` gives a run folder its
evaluation record: ``RUN_DIR/eval/calls.jsonl`` (one ``CallRecord`` per call, appended
across invocations) and ``RUN_DIR/eval/cache.sqlite`` (a reply cache, so evaluating a run
again costs nothing and gives the same numbers). A judge reply that is out of range or not
an object even after the retries becomes a ``JudgeFailure`` in the metric's result, never
an exception. Each answer is noted for the rule that a metric whose answers mostly failed
has no value (``eval.failure``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel

from jubensha.eval.failure import Kind, note, note_judge
from jubensha.eval.registry import MetricContext
from jubensha.llm.base import GenerateConfig, Message, Model, ModelError, Request
from jubensha.llm.calls import CallLog, JsonlSink, OnCall, SeatModel, drop_torn_tail
from jubensha.llm.health import Health
from jubensha.llm.keys import SettingsError, UnconfiguredServer, server_for
from jubensha.llm.registry import ModelOptions, named_file, parse_model_spec
from jubensha.llm.structured import generate_object
from jubensha.llm.wrappers import CachedModel, SqliteCache
from jubensha.memory.text import chunk, count_tokens
from jubensha.prompts import render
from jubensha.runlog.folder import RunLog
from jubensha.safeload import MAX_LOG_BYTES, DocumentError, one_line, read_bounded

T = TypeVar("T", bound=BaseModel)

EVAL_DIR = "eval"
EVAL_CALLS = "calls.jsonl"
EVAL_CACHE = "cache.sqlite"


class JudgeFailure(BaseModel):
    """A judgement (or post-game answer) that could not be had: the item is left out of
    the averages and reported."""

    purpose: str
    seat: str | None = None
    item: str = ""
    """What was being judged: an ability, a script part, a question id."""
    error: str


@dataclass
class Judged(Generic[T]):
    value: T | None
    failure: JudgeFailure | None = None


class EvalError(ValueError):
    """A run cannot be evaluated as asked (no judge given, no model for a seat...); the
    message says why in one line."""


async def ask(model: Model, request: Request, schema: type[T], *, item: str = "",
              attempts: int = 3, lang: str | None = None, kind: Kind | None = "judge"
              ) -> Judged[T]:
    """One structured call; a reply that never validates (or a failed call) is a failure.
    The answer is noted as ``kind`` for the metric's tally (``eval.failure``); None when
    the caller notes the answers it holds itself (one call answering several questions)."""
    try:
        result = await generate_object(model, request, schema, attempts=attempts, lang=lang)
    except ModelError as error:
        if kind is not None:
            note(kind, failed=True)
        return Judged(None, JudgeFailure(purpose=request.purpose, seat=request.seat,
                                         item=item, error=str(error)))
    if kind is not None:
        note(kind, failed=False)
    return Judged(result.value)


def judge_request(template: str, lang: str, *, purpose: str, seat: str | None = None,
                  max_tokens: int | None = None, **values: object) -> Request:
    """A judge request: ``prompts/eval/<lang>/<template>.j2`` as the user message,
    at temperature 0 (a judge should not vary between evaluations)."""
    return Request(messages=[Message(role="user", content=render("eval", template, lang,
                                                                  **values))],
                   config=GenerateConfig(temperature=0.0, max_tokens=max_tokens),
                   purpose=purpose, seat=seat)


def judge_of(context: MetricContext, metric: str) -> Model:
    """The judge, cached and logged in the run's evaluation record; an error naming the
    metric when no judge was given."""
    if context.judge is None:
        raise EvalError(f"metric {metric} needs a judge model (--judge MODEL)")
    note_judge(context.judge.name)
    return recorded(context.judge, context)


def recorded(model: Model, context: MetricContext, seat: str | None = None) -> Model:
    """``model`` behind the context's reply cache and call log, when it has them."""
    if context.cache is not None:
        model = CachedModel(model, context.cache)
    if context.calls is None:
        return model
    track_game(context.calls, context)
    return SeatModel(model, context.calls, seat=seat)


def track_game(calls: CallLog, context: MetricContext) -> None:
    """After the game each seat has seen every event visible to it: post-game calls record
    the last one as ``seen``."""
    if calls.last_seen is not None:
        return
    calls.track()
    seats = context.script.names
    for event in context.run.events:
        calls.saw([seat for seat in seats if event.visible_to(seat)], event.index)


@lru_cache(maxsize=16)
def _client(spec: str, base_url: str | None = None, key_env: str | None = None) -> Model:
    """One client per model spec and server per process (a local model loads its weights
    once); the default options when no server is named."""
    if base_url is None:
        return parse_model_spec(spec)
    key = os.environ.get(key_env) if key_env else None
    return parse_model_spec(spec, ModelOptions(base_url=base_url, api_key=key or None))


def played_client(run: RunLog, spec: str) -> Model:
    """The client of ``spec`` at the server the run's provenance says it played on, with
    the key the user's settings pair with that server (``llm.keys``); the default server
    for a model that runs here or a run that recorded none."""
    provenance = run.meta.provenance if run.meta else None
    identity = provenance.models.get(spec) if provenance else None
    if identity is None or identity.kind != "openai" or not identity.endpoint:
        return _client(spec)
    try:
        server = server_for(identity.endpoint, spec)
    except (UnconfiguredServer, SettingsError) as exc:
        raise EvalError(f"{run.path}: the seats' {spec} played on {identity.endpoint}; "
                        f"their answers go there too: {exc}") from None
    return _client(spec, server.base_url, server.key_env)


def seat_model(context: MetricContext, seat: str) -> Model:
    """The model ``seat`` answers post-game questions with: ``context.answerer``, else the
    seat's own model from ``meta.json``, served where the game was (``context.seat_client``,
    else the server the run's provenance names); logged (and cached by the session, keyed
    by model and server) like judges."""
    if context.answerer is not None:
        return recorded(context.answerer, context, seat)
    meta = context.run.meta
    if meta is None or seat not in meta.seats:
        raise EvalError(f"{context.run.path}: meta.json names no model for seat {seat!r}")
    spec = meta.seats[seat].model
    if named_file(spec) is not None:
        raise EvalError(f"seat {seat!r} played with {one_line(spec, 120)}, a file the run "
                        "folder names; models are chosen by you, not by a folder: pass "
                        "--seat-model MODEL")
    client = (context.seat_client(spec) if context.seat_client is not None
              else played_client(context.run, spec))
    return recorded(client, context, seat)


def clip(text: str, max_tokens: int) -> str:
    """``text`` within about ``max_tokens``: its start and its end with a gap marker
    between, so introductions and the last exchanges both reach the judge."""
    if max_tokens <= 0 or count_tokens(text) <= max_tokens:
        return text
    pieces = chunk(text, max(1, max_tokens // 8))
    head: list[str] = []
    tail: list[str] = []
    budget = max_tokens // 2
    for piece in pieces:
        if count_tokens("\n".join([*head, piece])) > budget:
            break
        head.append(piece)
    for piece in reversed(pieces[len(head):]):
        if count_tokens("\n".join([piece, *tail])) > budget:
            break
        tail.insert(0, piece)
    return "\n".join([*head, "[…]", *tail])


@dataclass
class EvalSession:
    """A run folder's evaluation record: the call log and the reply cache."""

    folder: Path
    calls: CallLog
    cache: SqliteCache

    def close(self) -> None:
        self.cache.close()


def open_session(run_path: Path, on_call: OnCall | None = None) -> EvalSession:
    """Create ``RUN_DIR/eval/`` with its call log (numbering continues after earlier
    evaluations; ``on_call`` is told of each call) and reply cache."""
    folder = Path(run_path) / EVAL_DIR
    _own_files(folder)
    folder.mkdir(parents=True, exist_ok=True)
    log_path = folder / EVAL_CALLS
    calls = CallLog(JsonlSink(log_path), Health(), on_call)  # a dead judge stops it
    drop_torn_tail(log_path)  # a killed evaluation's half record (maybe mid-character)
    if log_path.is_file():
        try:
            data = read_bounded(log_path, MAX_LOG_BYTES, links=False)
        except DocumentError as exc:
            raise EvalError(f"{log_path}: {exc}") from None
        calls.count = sum(1 for line in data.split(b"\n") if line.strip())
    return EvalSession(folder, calls, SqliteCache(folder / EVAL_CACHE))


def _own_files(folder: Path) -> None:
    """The evaluation writes only into the run folder's own files: an ``eval`` folder, log
    or cache that is a link (or a FIFO...) from a shared folder is refused, never followed
    (appending to a linked log would write, and cut, a file elsewhere)."""
    for path in (folder, folder / EVAL_CALLS, folder / EVAL_CACHE):
        if path.is_symlink():
            raise EvalError(f"{path}: a symbolic link; an evaluation writes only into the "
                            "run folder's own files")
        kind_ok = path.is_dir() if path == folder else path.is_file()
        if os.path.lexists(path) and not kind_ok:
            raise EvalError(f"{path}: not a regular {'folder' if path == folder else 'file'}")
