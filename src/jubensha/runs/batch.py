"""Running a batch: many games from a spec, concurrently, each into its own run folder.

The batch folder holds ``spec.yaml`` (the resolved spec), ``batch.sqlite`` (the index) and
one run folder per game, named by ``spec.folder_name`` and written by ``play.play_game``
exactly as ``jubensha play`` writes it. A game that fails (an exception, a spent budget, a
timeout, the batch being stopped) never stops the others: its folder gets ``error.json``.
Running the batch again skips games whose folder has ``result.json``, keeps the folder of
an unfinished attempt as ``<game>.partial-<n>`` and plays the game again, answering the
calls the longest earlier attempt logged from its log before going live
(``runlog.resume``). Where the games play is the executor's business
(``runs.executors``); a run of the batch is ``runs.batch_runner``'s, and what the folders
say ``runs.batch_folders``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path

from jubensha.llm.calls import OnCall
from jubensha.llm.keys import (
    Server,
    SettingsError,
    UnconfiguredServer,
    default_server,
    server_for,
)
from jubensha.outdir import write_whole
from jubensha.runs.batch_folders import BatchFolder
from jubensha.runs.batch_runner import BatchRunner, BatchSummary, Update
from jubensha.runs.executors import ExecutorError
from jubensha.runs.index import INDEX_FILE, GameRow
from jubensha.runs.spec import dump_spec, load_spec
from jubensha.runs.spec_expand import expand
from jubensha.runs.spec_schema import SPEC_FILE, BatchSpec, PlannedGame
from jubensha.runs.spec_trust import foreign_paths, sign_spec, unsigned
from jubensha.safeload import DocumentError, read_bounded


class BatchError(Exception):
    """A batch that cannot run as asked (its folder holds another game list, say)."""


def batch_servers(spec: BatchSpec, games: Iterable[PlannedGame]) -> dict[str, Server]:
    """Where each OpenAI-compatible model of the batch (and, as ``""``, the batch's
    ``model_options``) is served, with the variable holding its key, by the user's
    settings: a ``BatchError`` saying what to configure for a server the spec names and
    the settings do not list, before anything is sent."""
    fallback = spec.model_options.get("base_url")
    models = {plan.model for game in games for plan in game.plans.values()} | {
        spec.judge or ""}
    named: dict[str, str | None] = {"": fallback} | {
        model: (spec.endpoints[model].base_url if model in spec.endpoints else None)
        or fallback for model in sorted(models) if model.startswith("openai:")}
    try:
        return {model: server_for(url, model or "model_options") if url else default_server()
                for model, url in named.items()}
    except (UnconfiguredServer, SettingsError) as exc:
        raise BatchError(str(exc)) from None


def explain_change(old: list[GameRow], games: list[PlannedGame]) -> tuple[
        list[PlannedGame], list[GameRow]]:
    """Games the spec adds to the batch, and games of the batch the spec no longer has."""
    old_ids = {row.id for row in old}
    new_ids = {game.id for game in games}
    return ([g for g in games if g.id not in old_ids], [r for r in old if r.id not in new_ids])


def _examples(names: list[str]) -> str:
    return ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")


def _write_spec(path: Path, text: str) -> None:
    """Write the resolved spec whole or not at all, and only when it changed: every resume
    writes it, and a kill mid-write must not leave a batch that cannot be resumed."""
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return
    write_whole(path, text)


class Batch(BatchFolder):
    """A batch folder and the games its spec expands to: opened, resumed or rebuilt from
    its spec, and run."""

    @classmethod
    def open(cls, spec: BatchSpec, root: Path, *, extend: bool = False) -> Batch:
        """Expand ``spec`` into ``root``: a new batch, or the same game list as the one the
        folder holds (``extend`` also accepts a list that only adds games)."""
        games = expand(spec)
        servers = batch_servers(spec, games)
        root.mkdir(parents=True, exist_ok=True)
        batch = cls(root, spec, games, servers)
        old = batch.index.rows()
        added, removed = explain_change(old, games)
        if old and (removed or (added and not extend)):
            batch.close()
            parts = []
            if added:
                parts.append(f"{len(added)} game(s) added ({_examples([g.name for g in added])})")
            if removed:
                parts.append(f"{len(removed)} game(s) of the batch no longer in the spec "
                             f"({_examples([r.name for r in removed])})")
            hint = ("pass --extend to add them to this batch" if not removed else
                    "a batch never drops games it holds")
            raise BatchError(
                f"{root}: the spec's game list differs from this batch's: {'; '.join(parts)}. "
                "Changes to scripts, procedures, rounds, architectures, models, the murderer, "
                "seats, seeds, language, embedder or model options change the games; "
                "concurrency, wrappers, timeout, metrics, executor and endpoints do not. Write "
                f"to a new folder (--out), or {hint}.")
        _write_spec(root / SPEC_FILE, sign_spec(dump_spec(spec)))
        return batch

    @staticmethod
    def stored_spec(root: Path) -> BatchSpec:
        """The batch folder's spec; unless this user's key signed it, it may name files
        only inside the folder (``runs.spec_trust``)."""
        path = Path(root) / SPEC_FILE
        if not path.is_file():
            raise BatchError(f"{root}: not a batch folder (no {SPEC_FILE})")
        try:
            _, own = unsigned(read_bounded(path, links=False).decode("utf-8"))
        except (DocumentError, UnicodeDecodeError):
            own = False  # load_spec says what is wrong with the file
        return load_spec(path, None if own else partial(foreign_paths, root=Path(root)))

    @classmethod
    def resume(cls, root: Path) -> Batch:
        """The batch in ``root`` with the spec it was started with."""
        if not (Path(root) / INDEX_FILE).is_file():
            hint = (f"; if only the index was deleted: jubensha runs reindex {root}"
                    if (Path(root) / SPEC_FILE).is_file() else "")
            raise BatchError(f"{root}: not a batch folder (no {INDEX_FILE}){hint}")
        spec = cls.stored_spec(root)
        return cls.open(spec, Path(root))

    @classmethod
    def rebuild(cls, root: Path) -> Batch:
        """The batch in ``root`` with its index deleted (``reindex`` writes it again)."""
        spec = cls.stored_spec(root)
        games = expand(spec)
        for suffix in ("", "-wal", "-shm"):
            (Path(root) / f"{INDEX_FILE}{suffix}").unlink(missing_ok=True)
        return cls(Path(root), spec, games)

    async def run(self, *, concurrency: int | None = None,
                  on_update: Callable[[Update], None] | None = None,
                  on_call: OnCall | None = None) -> BatchSummary:
        """Play every game that has not finished; see the module docstring. ``on_call`` is
        told of each model call made in this process (games of a watched executor, and
        the metrics' calls)."""
        try:
            runner = BatchRunner(self, concurrency or self.spec.concurrency, on_update,
                                 on_call)
        except ExecutorError as exc:
            raise BatchError(str(exc)) from None
        return await runner.run()
