"""The batch index keeps reading indexes written under an earlier column name."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from jubensha.runs.index import BatchIndex, GameRow


def _row() -> GameRow:
    return GameRow(id="g1", position=0, name="g1", script="tiny", procedure="classic",
                   architecture="naive", model="scripted", seed=0, settings={},
                   status="finished", failures=3)


def test_an_index_with_the_old_fallbacks_column_reads_its_numbers_as_failures(
        tmp_path: Path) -> None:
    path = tmp_path / "batch.sqlite"
    with BatchIndex(path) as index:
        index.put(_row())
    with sqlite3.connect(path) as db:  # as an index written before the column was renamed
        db.execute("ALTER TABLE games RENAME COLUMN failures TO fallbacks")
    with BatchIndex(path) as index:
        assert index.rows() == [_row()]
        index.put(_row().model_copy(update={"failures": 4}))
        row = index.get("g1")
    assert row is not None and row.failures == 4
