"""How long a restarted `jubensha serve` takes to open its tables again before it answers.

One MIRAGE game is played (scripted model) and noted as a table in its run folder, then
copied N times under new table ids into a ``--runs`` folder, as a server that hosted N
tables leaves it. The figure is the time ``restore_tables`` takes to read them all back
(meta, events, result, the people's answers) and open their links: the server answers
nothing until it is done. Target: the newest 100 ended tables (what a server keeps) in
under 5 s on the project VM.

    python bench/web_restore.py [--tables 100]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from pathlib import Path

from common import figure, machine, table

from jubensha.engine.procedure import find_procedure
from jubensha.runlog.folder import META, read_meta
from jubensha.runs.play import PlayConfig, plan_seats, play_game
from jubensha.scripts.bundled import find_script
from jubensha.web.library import ScriptLibrary
from jubensha.web.restore import restore_tables
from jubensha.web.tablelog import TableRecord, write_record
from jubensha.web.tables import TableHost
from jubensha.web.tokens import server_key


async def one_game(root: Path) -> Path:
    script = find_script("lighthouse-keeper")
    out = root / "game"
    await play_game(PlayConfig(script=script, procedure=find_procedure("mirage"),
                               plans=plan_seats(script, "naive", "scripted", []),
                               script_source=script.id), out)
    return out


def tables(root: Path, game: Path, count: int, key: bytes) -> Path:
    """``count`` copies of ``game``, each noted as a table signed with the server's ``key``
    (a server restores only the tables it signed)."""
    runs = root / "runs"
    for number in range(count):
        folder = runs / f"table-{number:04d}"
        shutil.copytree(game, folder)
        write_record(folder, TableRecord(id=f"{number:016x}", script="lighthouse-keeper",
                                         spectators=True, people=[]),
                     key, read_meta(folder / META))
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=100)
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        game = asyncio.run(one_game(root))
        key = server_key(root / "state")
        runs = tables(root, game, args.tables, key)
        size = sum(path.stat().st_size for path in game.rglob("*") if path.is_file())
        host = TableHost(runs, state=root / "state")
        began = time.perf_counter()
        opened = asyncio.run(restore_tables(host, ScriptLibrary([]), ["scripted"]))
        took = time.perf_counter() - began
    table(f"{args.tables} ended tables opened again", ["measure", "value"], [
        ["run folder of one table", f"{size / 1024:.0f} KiB"],
        ["tables opened", str(len(opened))],
        ["seconds, all", f"{took:.2f}"],
        ["milliseconds per table", f"{took / max(len(opened), 1) * 1000:.1f}"]])
    figure("web_restore", f"{len(opened)} ended tables opened again in {took:.2f} s "
                          f"(target < 5 s for 100)")


if __name__ == "__main__":
    main()
