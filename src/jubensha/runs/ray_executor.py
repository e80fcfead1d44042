"""Playing a batch's games on a Ray cluster (``executor: {kind: ray}``; ``pip install
'jubensha[ray]'``).

Each attempt at a game is one Ray task. The worker plays it with the same
``attempt.play_attempt`` as the local executor. A worker that sees the batch folder (the
same machine, or a shared filesystem: it finds the batch's ``spec.yaml`` with the
driver's content) plays straight into it, so that the calls of a game in flight when the
driver is killed are in the folder like a local game's, counted as spent and resumed.
Elsewhere it plays into a temporary folder of its own and returns the folder's files; the
driver writes them into the batch folder. Either way the runner indexes and scores the
game exactly as a local one, so resume, reindex and reports do not know where a game was
played. Keys reach them
only through the environment: the variables holding the keys of the batch's servers (as the
user's settings pair them, ``llm.keys``) and those named in ``executor.env`` that the
settings allow are copied from the driver's environment into the tasks' runtime
environment, never into the spec, a task's arguments or a run folder.

Per-endpoint limits hold across the cluster: one ``EndpointGate`` actor per limited
endpoint, which every worker's ``LimitedModel`` asks for a slot. A worker that dies is
retried by Ray (``executor.retries``); when the retries are spent the game fails alone.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

import ray
from ray.exceptions import RayError, RayTaskError, TaskCancelledError

from jubensha.llm.keys import Server, SettingsError, allowed_env, settings_path
from jubensha.llm.wrappers import SqliteCache
from jubensha.runlog.folder import RESULT
from jubensha.runs.attempt import GameJob, game_meter, play_attempt, write_error
from jubensha.runs.executors import ExecutorError
from jubensha.runs.limits import Gate
from jubensha.runs.spec_schema import SPEC_FILE, BatchSpec

NAMESPACE = "jubensha"
MAX_FOLDER_BYTES = 512 * 1024 * 1024
"""A run folder larger than this is not shipped back (the game fails)."""


class RunFolderTooLarge(Exception):
    """A worker's run folder that exceeds ``MAX_FOLDER_BYTES``."""


GATE_OPTIONS: dict[str, Any] = {"num_cpus": 0, "max_concurrency": 10_000}
"""An actor's options (ray's type hints know a task's only)."""


@ray.remote(**GATE_OPTIONS)
class EndpointGate:
    """One endpoint's ``Gate``, shared by every worker of the cluster."""

    def __init__(self, limit: int | None) -> None:
        self.gate = Gate(limit)

    async def acquire(self) -> None:
        await self.gate.acquire()

    async def release(self, rate_limited: bool) -> None:
        await self.gate.release(rate_limited)

    def rate_limits(self) -> int:
        return self.gate.rate_limits


class RayLimiter:
    """A worker's handle on an ``EndpointGate`` (a release is sent, not awaited, so that a
    cancelled game still gives its slot back)."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    async def acquire(self) -> None:
        await self.actor.acquire.remote()

    async def release(self, rate_limited: bool) -> None:
        self.actor.release.remote(rate_limited)


def pack(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder``, by its relative POSIX path."""
    files: dict[str, bytes] = {}
    total = 0
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            total += path.stat().st_size
            if total > MAX_FOLDER_BYTES:
                raise RunFolderTooLarge(f"the run folder exceeds {MAX_FOLDER_BYTES} bytes")
            files[path.relative_to(folder).as_posix()] = path.read_bytes()
    return files


def unpack(files: dict[str, bytes], folder: Path) -> None:
    """Write a worker's files into ``folder``; a path that would leave it is refused."""
    for name, data in files.items():
        relative = PurePosixPath(name)
        if relative.is_absolute() or not relative.parts or ".." in relative.parts:
            raise ValueError(f"a worker returned the path {name!r}, outside its run folder")
        target = folder.joinpath(*relative.parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def sees_batch(root: str, spec_digest: str) -> bool:
    """Whether this worker sees the driver's batch folder (its spec.yaml, same content)."""
    try:
        return _digest((Path(root) / SPEC_FILE).read_bytes()) == spec_digest
    except OSError:
        return False


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def play_remote(job: GameJob, folder: str, spec_digest: str, cache: str | None,
                gates: dict[str, Any]) -> dict[str, bytes] | None:
    """The Ray task: one attempt, into the batch folder when this worker sees it (returns
    None), else in a folder of the worker's own, returned as files."""
    if sees_batch(str(Path(folder).parent), spec_digest):
        _play(job, Path(folder), cache, gates)
        return None
    with tempfile.TemporaryDirectory(prefix="jubensha-") as tmp:
        own = Path(tmp) / job.name
        _play(job, own, cache, gates)
        return pack(own)


def _play(job: GameJob, folder: Path, cache: str | None, gates: dict[str, Any]) -> None:
    store = SqliteCache(Path(cache)) if cache else None
    meter = game_meter(job)
    try:
        asyncio.run(play_attempt(job, folder, cache=store, meters=[meter] if meter else [],
                                 limiters={s: RayLimiter(a) for s, a in gates.items()}))
    finally:
        if store is not None:
            store.close()


def runtime_env(spec: BatchSpec, servers: dict[str, Server]) -> dict[str, Any]:
    """The variables the workers need, taken from this (the driver's) environment: the
    servers' key variables and ``executor.env``, which may name only variables the user's
    settings let leave this machine (a spec must not ship any secret it likes)."""
    try:
        allowed = allowed_env(list(servers.values()))
    except SettingsError as exc:
        raise ExecutorError(str(exc)) from None
    refused = [name for name in spec.executor.env if name not in allowed]
    if refused:
        raise ExecutorError(f"executor.env names {', '.join(refused)}, which your settings do "
                            f"not let a batch copy to its workers; if it should, list it under "
                            f"worker_env in {settings_path()}")
    names = [*spec.executor.env, *(s.key_env for s in servers.values() if s.key_env)]
    values = {name: os.environ[name] for name in dict.fromkeys(names) if name in os.environ}
    return {"env_vars": values} if values else {}


def gate_name(batch: str, spec: str) -> str:
    digest = hashlib.sha256(f"{batch}\0{spec}".encode()).hexdigest()[:16]
    return f"endpoint-{digest}"


class RayExecutor:
    """Sends attempts to a Ray cluster and writes what they return into the batch folder."""

    watched = False

    def __init__(self, spec: BatchSpec, root: Path, servers: dict[str, Server]) -> None:
        self.spec = spec
        self.env = runtime_env(spec, servers)
        self.spec_digest = _digest((root / SPEC_FILE).read_bytes())
        self.started = not ray.is_initialized()
        if self.started:
            self._start()
        self.task = ray.remote(play_remote).options(
            num_cpus=spec.executor.cpus_per_game, max_retries=spec.executor.retries,
            retry_exceptions=False, runtime_env=self.env or None)
        self.gates = {
            model: EndpointGate.options(  # type: ignore[attr-defined]
                name=gate_name(spec.name, model), get_if_exists=True).remote(
                    endpoint.max_concurrency)
            for model, endpoint in spec.endpoints.items() if endpoint.max_concurrency}

    def _start(self, **options: Any) -> None:
        address = options.pop("address", self.spec.executor.address)
        try:
            ray.init(address=address, namespace=NAMESPACE, log_to_driver=False,
                     include_dashboard=False, configure_logging=False, **options)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = address or "a local cluster"
            raise ExecutorError(f"Ray: cannot start or reach {where}: "
                                f"{str(exc).splitlines()[0]}") from None

    def _submit(self, job: GameJob, folder: Path) -> Any:
        return self.task.remote(job, str(folder.resolve()), self.spec_digest,
                                self.spec.wrappers.cache, self.gates)

    async def play(self, job: GameJob, folder: Path) -> bool:
        return await self._outcome(self._submit(job, folder), folder)

    async def _outcome(self, ref: Any, folder: Path) -> bool:
        """Wait for an attempt sent to the cluster; write its files, or its error."""
        try:
            files = await ref
        except asyncio.CancelledError:
            ray.cancel(ref)
            write_error(folder, "cancelled", "the batch was stopped while this game played")
            raise
        except TaskCancelledError:
            write_error(folder, "cancelled", "the Ray task of this game was cancelled")
            return False
        except RayTaskError as exc:
            write_error(folder, "error", f"{type(exc.cause).__name__}: {exc.cause}", str(exc))
            return False
        except RayError as exc:
            write_error(folder, "error", f"the Ray worker playing this game died "
                        f"({self.spec.executor.retries} retries spent): "
                        f"{type(exc).__name__}: {str(exc).splitlines()[0]}")
            return False
        try:
            if files is not None:
                unpack(files, folder)
        except (OSError, ValueError) as exc:
            write_error(folder, "error", f"{type(exc).__name__}: {exc}")
            return False
        return (folder / RESULT).is_file()

    def close(self) -> None:
        for actor in self.gates.values():
            ray.kill(actor)
        if self.started:
            ray.shutdown()
