"""Where a batch's games play: the one small interface the batch runner calls.

An executor plays one attempt (a ``GameJob``) into a run folder and says whether it
finished. It knows nothing of the batch: the runner sets attempts aside, indexes, scores
and counts the batch budget. Three kinds:

- ``local``: this process, every game in its event loop (``play_attempt`` here);
- ``processes``: a pool of processes on this machine, each running several games in its
  own event loop (``runs.process_executor``), so that a machine's cores share the
  engine's and the client's CPU work;
- ``ray``: a Ray cluster (``runs.ray_executor``).

The batch runner picks one (``runs.batch_runner.open_executor``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from jubensha.llm.calls import OnCall
from jubensha.llm.wrappers import Meter, SqliteCache
from jubensha.runs.attempt import GameJob, game_meter, play_attempt
from jubensha.runs.limits import Gate, Limiter
from jubensha.runs.spec_schema import BatchSpec


class ExecutorError(Exception):
    """An executor that cannot start (Ray not reachable, say); one line for the user."""


class Executor(Protocol):
    """Plays attempts at games into run folders."""

    watched: bool
    """Whether the games' model calls reach the runner's ``on_call`` and batch meter in
    this process (else the runner counts a game's calls when it comes back)."""

    async def play(self, job: GameJob, folder: Path) -> bool:
        """One attempt into ``folder``; False (and ``error.json``) without a result."""
        ...

    def close(self) -> None: ...


class LocalExecutor:
    """Every game in this process's event loop, sharing one cache, one gate per limited
    endpoint and the batch meter."""

    watched = True

    def __init__(self, cache: str | None, limits: Mapping[str, int],
                 batch_meter: Meter | None, on_call: OnCall | None = None) -> None:
        self.cache = SqliteCache(Path(cache)) if cache else None
        self.limiters: dict[str, Limiter] = {spec: Gate(n) for spec, n in limits.items()}
        self.batch_meter = batch_meter
        self.on_call = on_call

    async def play(self, job: GameJob, folder: Path) -> bool:
        meters = [m for m in (game_meter(job), self.batch_meter) if m is not None]
        return await play_attempt(job, folder, cache=self.cache, meters=meters,
                                  limiters=self.limiters, on_call=self.on_call)

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()


def endpoint_limits(spec: BatchSpec) -> dict[str, int]:
    """Model spec → calls at once, for the endpoints that have a limit."""
    return {model: endpoint.max_concurrency for model, endpoint in spec.endpoints.items()
            if endpoint.max_concurrency}
