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

A model's replies are in ``calls.jsonl``; a person's moves are not model calls, so each is
appended here as it is taken: the seat, the number of the decision (the seat's first, its
second...), its kind and the action. A person the host removed gets a line saying from
which decision on the table plays the seat. Nothing here is secret: the moves are in
``events.jsonl`` too, only not in a form the game can be given again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel, ValidationError

from jubensha.engine.decisions import Action
from jubensha.runlog.folder import RunMeta
from jubensha.signing import sign, verify

log = logging.getLogger(__name__)
WEB_DIR = "web"
TABLE = "table.json"
ANSWERS = "answers.jsonl"
MAX_BYTES = 16 * 1024 * 1024
"""A larger answers file is not read (no table's people type that much)."""
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


class Answer(BaseModel):
    """One move of a person: ``action`` answered the seat's decision number ``decision``
    (of type ``kind``), or, with ``left``, the person was removed before it."""

    seat: str
    decision: int
    kind: str = ""
    action: Action | None = None
    left: bool = False


class AnswerLog:
    """The answers file of one run folder, appended to one line at a time."""

    def __init__(self, folder: Path):
        self.path = folder / WEB_DIR / ANSWERS

    def append(self, answer: Answer) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as out:
            out.write(answer.model_dump_json() + "\n")

    def read(self) -> dict[str, list[Answer]]:
        """Each seat's answers in order; a line cut off or spoiled ends the reading (what
        came before it stands), and a file that is too large or a link is not read."""
        found: dict[str, list[Answer]] = defaultdict(list)
        if self.path.is_symlink() or not self.path.is_file() \
                or self.path.stat().st_size > MAX_BYTES:
            return found
        for number, line in enumerate(self.path.read_bytes().splitlines(), 1):
            try:
                answer = Answer.model_validate_json(line)
            except (ValidationError, ValueError):
                log.warning("%s:%d: not an answer; the answers after it are not used",
                            self.path, number)
                break
            found[answer.seat].append(answer)
        return found
