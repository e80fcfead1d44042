"""A batch's games spread over this machine's processes (``executor: {kind: processes}``;
``pip install 'jubensha[ray]'``).

One event loop drives a game's engine, agents, log and HTTP client: about 4 ms of CPU per
model call, so one process cannot keep 64 games against a fast server busy. This executor
starts a local Ray cluster for the batch and one asynchronous Ray actor per process
(``executor.processes``, default the machine's CPU count); each actor plays several games
at once in its own event loop, straight into the batch folder, with the same
``attempt.play_attempt`` as the local executor. A game goes to the actor with the fewest
games in flight. Per-endpoint limits hold across the actors (the Ray executor's
``EndpointGate``); the reply cache is one SQLite file every actor opens. A driver that is
killed takes its cluster and actors with it, and the games they were playing are left in
the batch folder, counted and resumed like a local game's.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import ray

from jubensha.agents.registry import make_agent
from jubensha.llm.keys import Server
from jubensha.llm.wrappers import SqliteCache
from jubensha.runs.attempt import GameJob, game_meter, play_attempt
from jubensha.runs.ray_executor import RayExecutor, RayLimiter
from jubensha.runs.spec_schema import BatchSpec


@ray.remote
class GameHost:
    """One process playing games in its event loop."""

    def __init__(self, cache: str | None, architectures: list[str]) -> None:
        self.cache = SqliteCache(Path(cache)) if cache else None
        for spec in architectures:  # import them now, not in the first game's time
            make_agent(spec)

    def ready(self) -> bool:
        return True

    async def play(self, job: GameJob, folder: str, gates: dict[str, Any]) -> None:
        meter = game_meter(job)
        await play_attempt(job, Path(folder), cache=self.cache,
                           meters=[meter] if meter else [],
                           limiters={s: RayLimiter(a) for s, a in gates.items()})


def architectures_of(spec: BatchSpec) -> list[str]:
    """The architectures the spec seats (overrides aside), warmed up in each process."""
    named = list(spec.architectures)
    if spec.arena is not None:
        fixed = [spec.arena.murderer] if spec.arena.murderer else []
        named = [e.architecture for e in [*spec.arena.entrants, *fixed]]
    if spec.murderer and spec.murderer.architecture:
        named.append(spec.murderer.architecture)
    return list(dict.fromkeys(named))


def process_count(spec: BatchSpec) -> int:
    return spec.executor.processes or os.cpu_count() or 1


class ProcessExecutor(RayExecutor):
    """Games on this machine's processes: a local Ray cluster of async actors."""

    def __init__(self, spec: BatchSpec, root: Path, servers: dict[str, Server]) -> None:
        super().__init__(spec, root, servers)
        options = {"num_cpus": 0, "max_concurrency": 10_000, "runtime_env": self.env or None}
        self.hosts = [GameHost.options(**options).remote(  # type: ignore[attr-defined]
            spec.wrappers.cache, architectures_of(spec)) for _ in range(process_count(spec))]
        self.load = [0] * len(self.hosts)
        # started before the first game, so that no game's time includes a process start
        ray.get([host.ready.remote() for host in self.hosts])

    def _start(self, **options: Any) -> None:
        super()._start(address="local", num_cpus=process_count(self.spec))  # its own cluster

    async def play(self, job: GameJob, folder: Path) -> bool:
        host = min(range(len(self.hosts)), key=self.load.__getitem__)
        self.load[host] += 1
        try:
            ref = self.hosts[host].play.remote(job, str(folder.resolve()), self.gates)
            return await self._outcome(ref, folder)
        finally:
            self.load[host] -= 1

    def close(self) -> None:
        for host in self.hosts:
            ray.kill(host)
        super().close()
