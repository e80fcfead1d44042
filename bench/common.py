"""What the bench scripts share: a model wrapper that times the model, games into a
temporary folder, tables, and the closing ``NAME: figure`` line."""

from __future__ import annotations

import math
import os
import platform
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from rich.console import Console
from rich.table import Table

from jubensha.llm.base import Model, Request, Response

console = Console(width=160)


class TimedModel(Model):
    """Wraps a model and adds up the seconds spent inside it: time in the model is not
    framework overhead, whatever the fake does to build its reply."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.name = inner.name
        self.seconds = 0.0
        self.calls = 0

    async def generate(self, request: Request) -> Response:
        started = time.perf_counter()
        try:
            return await self.inner.generate(request)
        finally:
            self.seconds += time.perf_counter() - started
            self.calls += 1

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return await self.inner.embed(texts)

    async def aclose(self) -> None:
        await self.inner.aclose()


def machine() -> str:
    """One line naming the machine and the moment, for the README."""
    return (f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC · {platform.node()} · "
            f"{os.cpu_count()} cores · Python {platform.python_version()}")


def table(title: str, columns: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """Print a table; the first column left-aligned, the others right-aligned."""
    grid = Table(title=title, title_justify="left")
    for i, column in enumerate(columns):
        grid.add_column(column, justify="left" if i == 0 else "right")
    for row in rows:
        grid.add_row(*(str(cell) for cell in row))
    console.print(grid)


def figure(name: str, value: str) -> None:
    """The script's last line, ``NAME: figure``, so a tracker can read it."""
    print(f"{name}: {value}", flush=True)


@dataclass(frozen=True)
class Share:
    """``k`` of ``n`` with its 95% Wilson score interval (Wilson 1927), which stays inside
    [0, 1] and is sensible for the few games a bench plays."""

    k: int
    n: int
    rate: float
    low: float
    high: float

    def __str__(self) -> str:
        return f"{self.rate:.2f} [{self.low:.2f}, {self.high:.2f}]"


def wilson(k: int, n: int, z: float = 1.959963984540054) -> Share:
    if not 0 <= k <= n or n == 0:
        raise ValueError(f"wilson: need 0 <= k <= n and n > 0, got k={k}, n={n}")
    rate = k / n
    denominator = 1 + z * z / n
    centre = (rate + z * z / (2 * n)) / denominator
    half = z * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n)) / denominator
    return Share(k, n, rate, 0.0 if k == 0 else max(0.0, centre - half),
                 1.0 if k == n else min(1.0, centre + half))
