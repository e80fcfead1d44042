"""Per-endpoint concurrency limits for a batch's model calls, and slowing down on rate limits.

A ``Gate`` admits at most ``limit`` calls at once to one endpoint; a call that ended in a
rate-limit answer (the client's own retries spent) closes the gate to new calls for a
back-off that doubles with each such answer (up to ``MAX_PAUSE_S``) and resets on a
success. The local executor shares one gate per endpoint between its games; the Ray
executor puts the same gate in one actor per endpoint, so the limit holds across the
cluster (``runs.ray_executor``). ``LimitedModel`` wraps a raw client so that replies served
from a cache never take a slot.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from jubensha.llm.base import Model, ModelError, ModelWrapper, Request, Response

FIRST_PAUSE_S = 1.0
MAX_PAUSE_S = 60.0


def rate_limited(error: BaseException) -> bool:
    """Whether a failed call was refused for its rate (an HTTP 429 behind the ModelError:
    ``openai.RateLimitError`` or any error whose class says so)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if "RateLimit" in type(current).__name__ or getattr(current, "status_code", None) == 429:
            return True
        current = current.__cause__ or current.__context__
    return False


class Limiter(Protocol):
    async def acquire(self) -> None: ...

    async def release(self, rate_limited: bool) -> None: ...


class Gate:
    """At most ``limit`` holders at once (``None``: any), paused after rate limits."""

    def __init__(self, limit: int | None) -> None:
        self.slots = asyncio.Semaphore(limit) if limit else None
        self.paused_until = 0.0
        self.pause_s = FIRST_PAUSE_S
        self.rate_limits = 0

    async def acquire(self) -> None:
        if self.slots is not None:
            await self.slots.acquire()
        loop = asyncio.get_running_loop()
        while (wait := self.paused_until - loop.time()) > 0:
            await asyncio.sleep(wait)

    async def release(self, rate_limited: bool) -> None:
        if rate_limited:
            self.rate_limits += 1
            self.paused_until = asyncio.get_running_loop().time() + self.pause_s
            self.pause_s = min(MAX_PAUSE_S, self.pause_s * 2)
        else:
            self.pause_s = FIRST_PAUSE_S
        if self.slots is not None:
            self.slots.release()


class LimitedModel(ModelWrapper):
    """Every call passes through the endpoint's limiter."""

    def __init__(self, inner: Model, limiter: Limiter) -> None:
        super().__init__(inner)
        self.limiter = limiter

    async def generate(self, request: Request) -> Response:
        await self.limiter.acquire()
        try:
            response = await self.inner.generate(request)
        except ModelError as exc:
            await self.limiter.release(rate_limited(exc))
            raise
        except BaseException:
            await self.limiter.release(False)
            raise
        await self.limiter.release(False)
        return response
