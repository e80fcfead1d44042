"""Internal.

Record and replay (spec ``replay:<file>``): a game against a real model, played again free.

A ``RecordingModel`` appends one ``CassetteEntry`` per call to a JSONL cassette: the full
request (with its purpose, seat and sample index), the response or the error. A
``ReplayModel`` answers from the cassette by the same key, so repeated samples at
temperature > 0 stay distinct and a recorded failure is replayed as a failure. When a key
was recorded several times (the same request asked again), replies come back in recorded
order and the last one repeats after that. A request that was never recorded is a clear
``ModelError`` naming its purpose and seat.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel, ValidationError, model_validator

from jubensha.llm.base import ErrorKind, Model, ModelError, ModelWrapper, Request, Response
from jubensha.safeload import MAX_LOG_BYTES, DocumentError, read_bounded


class CassetteEntry(BaseModel):
    """One recorded call: the reply, or the error it ended with."""

    key: str
    request: Request
    response: Response | None = None
    error: str | None = None

    @model_validator(mode="after")
    def _one_outcome(self) -> CassetteEntry:
        if (self.response is None) == (self.error is None):
            raise ValueError("an entry holds either a response or an error")
        return self


class CassetteError(ModelError):
    """A cassette that cannot be read, or a request it does not hold."""

    kind = ErrorKind.FAIL


def cassette_key(request: Request) -> str:
    """A hash of the whole request, tags included: two seats asking alike stay apart."""
    blob = json.dumps(request.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class RecordingModel(ModelWrapper):
    """Passes calls through and appends each (request, response or error) to a cassette."""

    def __init__(self, inner: Model, path: Path) -> None:
        super().__init__(inner)
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    async def generate(self, request: Request) -> Response:
        key = cassette_key(request)
        try:
            response = await self.inner.generate(request)
        except ModelError as error:
            self._append(CassetteEntry(key=key, request=request, error=str(error)))
            raise
        self._append(CassetteEntry(key=key, request=request, response=response))
        return response

    def _append(self, entry: CassetteEntry) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(entry.model_dump_json() + "\n")


class ReplayModel(Model):
    """Answers only from a cassette; see the module docstring."""

    def __init__(self, entries: list[CassetteEntry], name: str = "replay") -> None:
        self.name = name
        self._entries: dict[str, list[CassetteEntry]] = defaultdict(list)
        for entry in entries:
            self._entries[entry.key].append(entry)
        self._served: dict[str, int] = defaultdict(int)

    @classmethod
    def load(cls, path: Path) -> ReplayModel:
        path = Path(path)
        if not path.exists():
            raise CassetteError(f"cassette not found: {path}")
        try:  # bytes: pydantic reports bad UTF-8 as bad JSON
            data = read_bounded(path, MAX_LOG_BYTES)
        except DocumentError as exc:
            raise CassetteError(f"{path}: {exc}") from None
        entries = []
        for number, line in enumerate(data.split(b"\n"), 1):
            if not line.strip():
                continue
            try:
                entries.append(CassetteEntry.model_validate_json(line))
            except ValidationError as error:
                problem = error.errors()[0]
                where = ".".join(str(p) for p in problem["loc"]) or "line"
                raise CassetteError(f"{path}:{number}: {where}: {problem['msg']}") from None
        return cls(entries, name=f"replay:{path.name}")

    async def generate(self, request: Request) -> Response:
        key = cassette_key(request)
        entries = self._entries.get(key)
        if not entries:
            raise CassetteError(
                f"{self.name} holds no reply for purpose {request.purpose or '(none)'!r}, "
                f"seat {request.seat or '(none)'!r}, sample {request.sample}: the game asked "
                "something the recording never asked", kind=ErrorKind.DEAD)
        entry = entries[min(self._served[key], len(entries) - 1)]
        self._served[key] += 1
        if entry.response is None:
            raise ModelError(entry.error)
        return entry.response.model_copy(update={"origin": "replay"})
