"""How often a password may be tried: a sliding window of attempts per client address, and
one for all addresses together, so that guessing takes years instead of seconds."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

LOGIN_ATTEMPTS = 10
"""Password attempts one address may make per window."""
LOGIN_ATTEMPTS_ALL = 60
"""Password attempts all addresses together may make per window."""
LOGIN_WINDOW_S = 60.0
MAX_ADDRESSES = 10_000
"""Addresses remembered at once; the oldest are forgotten first."""


class Throttle:
    """Counts attempts per key in a sliding window; ``wait`` says how long until another."""

    def __init__(self, per_key: int = LOGIN_ATTEMPTS, overall: int = LOGIN_ATTEMPTS_ALL,
                 window_s: float = LOGIN_WINDOW_S, clock: Callable[[], float] = time.monotonic):
        self.per_key, self.overall, self.window_s, self.clock = per_key, overall, window_s, clock
        self.keys: dict[str, deque[float]] = {}
        self.all: deque[float] = deque()

    def wait(self, key: str) -> float:
        """Seconds until ``key`` may try again (0: now, and the attempt is counted)."""
        now = self.clock()
        mine = self.keys.pop(key, deque())
        self.keys[key] = mine  # most recent last, so the oldest are forgotten first
        for times in (mine, self.all):
            while times and times[0] <= now - self.window_s:
                times.popleft()
        full = [times[0] for times, limit in ((mine, self.per_key), (self.all, self.overall))
                if len(times) >= limit]
        if full:
            return max(oldest + self.window_s - now for oldest in full)
        mine.append(now)
        self.all.append(now)
        while len(self.keys) > MAX_ADDRESSES:
            del self.keys[next(iter(self.keys))]
        return 0.0
