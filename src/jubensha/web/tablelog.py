"""What a table keeps in its run folder (``web/``) so that the server finds it again after a
restart: which table it was (``table.json``) and what its people answered
(``answers.jsonl``).

``table.json`` holds the table's id, the lobby's key of its script, whether spectators
may watch and which seats people play; no link: links are derived from the id with the
server's key (``tokens``), so a run folder someone shares gives none away. It is signed
with that key, together with a digest of what its ``meta.json`` says the game is (the
seats' architectures and models, the script copy's hash, procedure, seed, language,
embedder): a server restores only tables it started itself, as they were started, and
a folder planted under ``--runs`` (or a signed one whose ``meta.json`` was changed) is a
run to review, never a game to play (``restore``).

The people's moves are appended to ``answers.jsonl`` as they are taken (``runlog.moves``);
a person the host removed gets a line saying from which decision on the table plays the
seat.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path

from pydantic import BaseModel, ValidationError

from jubensha.runlog.folder import RunMeta
from jubensha.runlog.moves import MovesLog
from jubensha.signing import sign, verify

log = logging.getLogger(__name__)
WEB_DIR = "web"
TABLE = "table.json"
ANSWERS = "answers.jsonl"
MAX_RECORD_BYTES = 64 * 1024
MAX_FOLDERS = 10_000
"""Entries of the runs folder looked at for tables when the server starts."""


class TableRecord(BaseModel):
    """Which table a run folder belongs to."""

    id: str
    script: str
    spectators: bool
    people: list[str]
    game: str = ""
    """``game_digest`` of the folder's meta.json when the table was noted."""
    signature: str = ""

    def signed_part(self) -> bytes:
        return self.model_dump_json(exclude={"signature"}).encode()

    def signed_by(self, key: bytes) -> bool:
        """Whether the record was signed with ``key`` (by the server that holds it)."""
        return bool(self.signature) and verify(key, SIGNED, self.signed_part(), self.signature)


SIGNED = "jubensha table record"


def game_digest(meta: RunMeta) -> str:
    """What a run's ``meta.json`` says the game is, as far as playing it on goes: who sits
    where with which architecture and model, the script copy, procedure, seed, language and
    the seats' embedder (not when it started or which versions wrote it)."""
    game = meta.model_dump(mode="json", include={"script_id", "script_sha256", "language",
                                                 "procedure", "seats", "seed"})
    game["embedder"] = meta.options.get("embedder")
    return hashlib.sha256(json.dumps(game, sort_keys=True).encode()).hexdigest()


def write_record(folder: Path, record: TableRecord, key: bytes, meta: RunMeta | None) -> None:
    """Note the table in its run folder, signed with the server's ``key`` for the game
    ``meta`` describes (a folder without meta.json gets no record: nothing to restore)."""
    if meta is None:
        return
    record = record.model_copy(update={"game": game_digest(meta)})
    record.signature = sign(key, SIGNED, record.signed_part())
    path = folder / WEB_DIR / TABLE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(record.model_dump_json(indent=2) + "\n", encoding="utf-8")


def read_record(folder: Path) -> TableRecord | None:
    """The folder's table record; None when it has none or it does not read as one."""
    path = folder / WEB_DIR / TABLE
    if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_RECORD_BYTES:
        return None
    try:
        return TableRecord.model_validate_json(path.read_bytes())
    except (ValidationError, ValueError):
        log.warning("%s: not a table record; the table is not restored", path)
        return None


def table_folders(runs: Path) -> list[Path]:
    """The run folders directly under ``runs`` that tables of a server wrote, newest
    first."""
    if not runs.is_dir():
        return []
    found = []
    with os.scandir(runs) as entries:
        for number, entry in enumerate(entries):
            if number >= MAX_FOLDERS:
                break
            folder = Path(entry.path)
            if entry.is_dir(follow_symlinks=False) and (folder / WEB_DIR / TABLE).is_file():
                found.append(folder)
    return sorted(found, key=lambda folder: folder.stat().st_mtime, reverse=True)


class AnswerLog(MovesLog):
    """The answers file of a table's run folder (``runlog.moves``)."""

    def __init__(self, folder: Path):
        super().__init__(folder / WEB_DIR / ANSWERS)
