"""The batch index, ``batch.sqlite``: one row per game, updated as games start and end.

The run folders are the source of truth; the index is a fast, queryable summary of them
that ``row_from_folders`` (and ``jubensha runs reindex``) can always rebuild. Only the
standard library's ``sqlite3`` is used, in WAL mode so that a report can read the index
while a batch is writing it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, Field, ValidationError

from jubensha.runlog.provenance import Provenance

INDEX_FILE = "batch.sqlite"
Status = Literal["pending", "running", "finished", "failed"]


class Spend(BaseModel):
    """Model use: calls, tokens and dollars (``None`` while no call had a known price)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Spend) -> Spend:
        cost = None
        if self.cost_usd is not None or other.cost_usd is not None:
            cost = (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        return Spend(calls=self.calls + other.calls,
                     prompt_tokens=self.prompt_tokens + other.prompt_tokens,
                     completion_tokens=self.completion_tokens + other.completion_tokens,
                     cost_usd=cost)


class GameRow(BaseModel):
    """One game of a batch as the index holds it."""

    id: str
    position: int
    name: str
    script: str
    procedure: str
    architecture: str
    model: str
    seed: int
    settings: dict[str, Any]
    status: Status = "pending"
    attempts: int = 0
    started: str | None = None
    finished: str | None = None
    duration_s: float | None = None
    winner: str | None = None
    failures: int | None = Field(None, description="Failure events of the game: a model call "
                                 "that failed and was answered by a fallback.")
    usage: Spend = Field(default_factory=Spend, description="The latest attempt's model use.")
    spent: Spend = Field(default_factory=Spend, description="Every attempt's model use.")
    sides: dict[str, Spend] = Field(default_factory=dict, description=(
        "The latest attempt's model use by side: civilians' seats, murderers' seats."))
    votes_on_murderer: int | None = None
    votes_counted: int | None = None
    metrics: dict[str, Any] = Field(default_factory=dict,
                                    description="Metric name → its headline numbers or error.")
    error: str | None = None
    provenance: Provenance | None = Field(None, description=(
        "The code, prompts and models of the latest attempt (meta.json's)."))


COLUMNS = ("id", "position", "name", "script", "procedure", "architecture", "model", "seed",
           "settings", "status", "attempts", "started", "finished", "duration_s", "winner",
           "failures", "calls", "prompt_tokens", "completion_tokens", "tokens", "cost_usd",
           "spent_calls", "spent_prompt_tokens", "spent_completion_tokens", "spent_cost_usd",
           "votes_on_murderer", "votes_counted", "metrics", "error", "sides", "provenance")
SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id TEXT PRIMARY KEY, position INTEGER NOT NULL, name TEXT NOT NULL UNIQUE,
    script TEXT NOT NULL, procedure TEXT NOT NULL, architecture TEXT NOT NULL,
    model TEXT NOT NULL, seed INTEGER NOT NULL, settings TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'finished', 'failed')),
    attempts INTEGER NOT NULL, started TEXT, finished TEXT, duration_s REAL, winner TEXT,
    failures INTEGER, calls INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL, tokens INTEGER NOT NULL, cost_usd REAL,
    spent_calls INTEGER NOT NULL, spent_prompt_tokens INTEGER NOT NULL,
    spent_completion_tokens INTEGER NOT NULL, spent_cost_usd REAL,
    votes_on_murderer INTEGER, votes_counted INTEGER, metrics TEXT NOT NULL, error TEXT,
    sides TEXT NOT NULL DEFAULT '{}', provenance TEXT
);
CREATE INDEX IF NOT EXISTS games_status ON games (status);
"""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _values(row: GameRow) -> tuple[Any, ...]:
    return (row.id, row.position, row.name, row.script, row.procedure, row.architecture,
            row.model, row.seed, json.dumps(row.settings, ensure_ascii=False), row.status,
            row.attempts, row.started, row.finished, row.duration_s, row.winner, row.failures,
            row.usage.calls, row.usage.prompt_tokens, row.usage.completion_tokens,
            row.usage.tokens, row.usage.cost_usd, row.spent.calls, row.spent.prompt_tokens,
            row.spent.completion_tokens, row.spent.cost_usd, row.votes_on_murderer,
            row.votes_counted, json.dumps(row.metrics, ensure_ascii=False), row.error,
            json.dumps({side: spend.model_dump() for side, spend in row.sides.items()}),
            row.provenance.model_dump_json() if row.provenance else None)


def _provenance(text: str | None) -> Provenance | None:
    """A row's provenance; None when not recorded or not readable by this version."""
    if not text:
        return None
    try:
        return Provenance.model_validate_json(text)
    except ValidationError:
        return None


def _row(record: sqlite3.Row) -> GameRow:
    data = dict(record)
    return GameRow(
        **{k: data[k] for k in GameRow.model_fields if k in data and k not in
           ("settings", "metrics", "usage", "spent", "sides", "provenance")},
        provenance=_provenance(data.get("provenance")),
        settings=json.loads(data["settings"]), metrics=json.loads(data["metrics"]),
        sides={side: Spend(**spend) for side, spend in json.loads(data["sides"]).items()},
        usage=Spend(calls=data["calls"], prompt_tokens=data["prompt_tokens"],
                    completion_tokens=data["completion_tokens"], cost_usd=data["cost_usd"]),
        spent=Spend(calls=data["spent_calls"], prompt_tokens=data["spent_prompt_tokens"],
                    completion_tokens=data["spent_completion_tokens"],
                    cost_usd=data["spent_cost_usd"]))


class BatchIndex:
    """``batch.sqlite`` of one batch folder."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._db = sqlite3.connect(self.path, timeout=30)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        # WAL with NORMAL survives a crash of the process (the resume case) and skips the
        # fsync per commit that blocked the event loop for ~5 ms per game row.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)
        known = {record[1] for record in self._db.execute("PRAGMA table_info(games)")}
        if "sides" not in known:  # an index written before model use was split by side
            self._db.execute("ALTER TABLE games ADD COLUMN sides TEXT NOT NULL DEFAULT '{}'")
        if "provenance" not in known:  # an index written before provenance was kept
            self._db.execute("ALTER TABLE games ADD COLUMN provenance TEXT")
        if "fallbacks" in known:  # the failures column's earlier name (same numbers)
            self._db.execute("ALTER TABLE games RENAME COLUMN fallbacks TO failures")
        self._db.commit()

    @classmethod
    def of(cls, folder: Path) -> BatchIndex:
        return cls(Path(folder) / INDEX_FILE)

    def put(self, row: GameRow) -> None:
        """Insert or replace one game's row (committed at once)."""
        marks = ", ".join("?" * len(COLUMNS))
        self._db.execute(f"INSERT OR REPLACE INTO games ({', '.join(COLUMNS)}) VALUES ({marks})",
                         _values(row))
        self._db.commit()

    def put_all(self, rows: Iterable[GameRow]) -> None:
        marks = ", ".join("?" * len(COLUMNS))
        with self._db:
            self._db.executemany(
                f"INSERT OR REPLACE INTO games ({', '.join(COLUMNS)}) VALUES ({marks})",
                [_values(row) for row in rows])

    def get(self, game_id: str) -> GameRow | None:
        record = self._db.execute("SELECT * FROM games WHERE id = ?", (game_id,)).fetchone()
        return _row(record) if record else None

    def rows(self) -> list[GameRow]:
        return [_row(r) for r in self._db.execute("SELECT * FROM games ORDER BY position")]

    def ids(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT id FROM games ORDER BY position")]

    def counts(self) -> dict[str, int]:
        """Games per status."""
        return {status: count for status, count in
                self._db.execute("SELECT status, COUNT(*) FROM games GROUP BY status")}

    def clear(self) -> None:
        with self._db:
            self._db.execute("DELETE FROM games")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
