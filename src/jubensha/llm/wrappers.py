"""Internal.

Wrappers add one behaviour around any model without changing the ``Model`` interface.

- ``CachedModel``: replies by ``Request.cache_key`` in memory or in an SQLite file.
- ``BudgetModel``: refuses calls once a game's or a batch's ``Meter`` has spent its budget
  (``BudgetExceeded``, of kind ``spent``: the game stops, and nothing retries it).
- ``AccountingModel``: prices each reply from a ``PriceTable`` and totals usage per seat,
  purpose and model.

``stack`` puts them in the order that makes each see what it needs (see its docstring).
Retrying is no wrapper: a client retries what is worth another try, once, where it knows
why the call failed (``openai_client.with_retries``: rate limits and their
``Retry-After``, server errors, timeouts), so that no two layers multiply their attempts.
"""

from __future__ import annotations

import asyncio
import sqlite3
import stat
from collections.abc import Callable, Iterable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field, RootModel, ValidationError

from jubensha.llm.base import (
    ErrorKind,
    Model,
    ModelError,
    ModelWrapper,
    Request,
    Response,
    Usage,
)
from jubensha.safeload import DocumentError, read_document, shown_key

if TYPE_CHECKING:
    from jubensha.llm.calls import CallRecord


# --- cache ---------------------------------------------------------------------------------

class MemoryCache:
    """Replies kept for the life of the process."""

    def __init__(self) -> None:
        self._replies: dict[str, Response] = {}

    def get(self, key: str) -> Response | None:
        return self._replies.get(key)

    def put(self, key: str, response: Response) -> None:
        self._replies[key] = response


SQLITE_HEADER = b"SQLite format 3\x00"


class SqliteCache:
    """Replies kept in an SQLite file, shared by runs and processes."""

    @staticmethod
    def unusable(path: Path) -> str | None:
        """Why ``path`` cannot be a reply cache, or None: what is there must be a regular
        file holding an SQLite database with no table but ``replies``, so that a spec
        naming an unrelated database never gets a table added to it."""
        try:
            info = path.lstat()
        except FileNotFoundError:
            return None
        except OSError as exc:
            return f"cannot read: {exc.strerror or exc}"
        if not stat.S_ISREG(info.st_mode):
            return "not a regular file (a reply cache is an SQLite file of its own)"
        if info.st_size == 0:
            return None
        with path.open("rb") as handle:
            if handle.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
                return "not an SQLite database; name a new file for the reply cache"
        try:
            with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
                tables = {row[0] for row in db.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.Error as exc:
            return f"not a readable SQLite database ({exc})"
        if tables - {"replies"}:
            return (f"an SQLite database holding {len(tables - {'replies'})} other table(s), "
                    "not a reply cache; name a new file for it")
        return None

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path)
        self._db.execute("CREATE TABLE IF NOT EXISTS replies "
                         "(key TEXT PRIMARY KEY, response TEXT NOT NULL)")
        self._db.commit()

    def get(self, key: str) -> Response | None:
        row = self._db.execute("SELECT response FROM replies WHERE key = ?", (key,)).fetchone()
        return Response.model_validate_json(row[0]) if row else None

    def put(self, key: str, response: Response) -> None:
        self._db.execute("INSERT OR REPLACE INTO replies VALUES (?, ?)",
                         (key, response.model_dump_json()))
        self._db.commit()

    def close(self) -> None:
        self._db.close()


def deterministic(request: Request) -> bool:
    """Whether ``request`` asks for the same reply every time: temperature 0 and no seed
    (what any caller sends gets what any other sending it got)."""
    return request.config.temperature == 0 and request.config.seed is None


class CachedModel(ModelWrapper):
    """Answers a request seen before (same ``cache_key``: messages, settings, schema,
    sample index, model and the server it is served by) from the store; hits come back
    with ``origin="cache"``.

    ``only`` limits the cache to the requests it accepts (a game shares the replies of
    ``deterministic`` requests among its seats). A request already on its way is awaited,
    not sent twice, so seats asking the same thing at once cost one call. Closing it
    closes the model, not the store: whoever opened a store shares it and closes it."""

    def __init__(self, inner: Model, store: MemoryCache | SqliteCache | None = None,
                 only: Callable[[Request], bool] | None = None) -> None:
        super().__init__(inner)
        self.store = store if store is not None else MemoryCache()
        self.only = only
        self.hits = 0
        self.misses = 0
        self._pending: dict[str, asyncio.Future[Response]] = {}

    async def generate(self, request: Request) -> Response:
        if self.only is not None and not self.only(request):
            return await self.inner.generate(request)
        served = self.inner.server
        key = request.cache_key(f"{self.inner.name}@{served}" if served else self.inner.name)
        cached = self.store.get(key)
        if cached is None and key in self._pending:
            cached = await _outcome(self._pending[key])
        if cached is not None:
            self.hits += 1
            return cached.model_copy(update={"origin": "cache"})
        self.misses += 1
        return await self._ask(key, request)

    async def _ask(self, key: str, request: Request) -> Response:
        pending: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        self._pending[key] = pending
        try:
            response = await self.inner.generate(request)
        except BaseException:
            pending.cancel()  # whoever waited on it asks for itself
            raise
        finally:
            self._pending.pop(key, None)
        self.store.put(key, response)
        pending.set_result(response)
        return response


async def _outcome(pending: asyncio.Future[Response]) -> Response | None:
    """The reply another caller is waiting for, or None when its call failed."""
    try:
        return await asyncio.shield(pending)
    except asyncio.CancelledError:
        if pending.cancelled():
            return None
        raise


# --- prices and accounting -----------------------------------------------------------------

class Price(BaseModel):
    input_per_1m: float = Field(ge=0, description="Dollars per million prompt tokens.")
    output_per_1m: float = Field(ge=0, description="Dollars per million completion tokens.")


class PriceTable(RootModel[dict[str, Price]]):
    """``{model: {input_per_1m, output_per_1m}}``, keyed by model name with or without the
    ``openai:`` prefix (``gpt-4o-mini`` prices ``openai:gpt-4o-mini``)."""

    @classmethod
    def load(cls, path: Path) -> PriceTable:
        """Read YAML or JSON; problems name the file and the field."""
        path = Path(path)
        try:
            data = read_document(path)
        except DocumentError as error:
            raise ValueError(f"price table {path}: {error}") from None
        try:
            return cls.model_validate(data or {})
        except ValidationError as error:
            problem = error.errors()[0]
            where = ".".join(shown_key(str(part)) for part in problem["loc"]) or "the table"
            raise ValueError(f"price table {path}: {where}: {problem['msg']}") from None

    def price(self, model: str) -> Price | None:
        prices = self.root
        return prices.get(model) or prices.get(model.partition(":")[2] or model)

    def cost(self, model: str, usage: Usage) -> float | None:
        price = self.price(model)
        if price is None:
            return None
        return (usage.prompt_tokens * price.input_per_1m
                + usage.completion_tokens * price.output_per_1m) / 1_000_000


class UsageTotals(BaseModel):
    calls: int = 0
    reused_calls: int = Field(0, description="Answered from a cache or a cassette (free).")
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float | None = Field(None, description="None while no call had a known price.")

    def add(self, usage: Usage, reused: bool) -> None:
        self.calls += 1
        self.reused_calls += int(reused)
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.latency_s += usage.latency_s
        if usage.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + usage.cost_usd

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class Accounting(BaseModel):
    """Usage totals overall and per seat, purpose and model."""

    total: UsageTotals = Field(default_factory=UsageTotals)
    by_seat: dict[str, UsageTotals] = Field(default_factory=dict,
                                            description='Calls with no seat count under "".')
    by_purpose: dict[str, UsageTotals] = Field(default_factory=dict)
    by_model: dict[str, UsageTotals] = Field(default_factory=dict)

    def add(self, seat: str | None, purpose: str, model: str, usage: Usage,
            reused: bool = False) -> None:
        for totals in (self.total, self.by_seat.setdefault(seat or "", UsageTotals()),
                       self.by_purpose.setdefault(purpose, UsageTotals()),
                       self.by_model.setdefault(model, UsageTotals())):
            totals.add(usage, reused)

    @classmethod
    def from_calls(cls, records: Iterable[CallRecord]) -> Accounting:
        """Totals of a run's call log (failed calls count as calls with no tokens)."""
        accounting = cls()
        for record in records:
            accounting.add(record.seat, record.purpose, record.model, record.usage,
                           record.origin != "live")
        return accounting


class AccountingModel(ModelWrapper):
    """Prices each reply (``usage.cost_usd``) and adds it to ``accounting``.

    Replies from a cache or cassette cost nothing; models missing from the table keep
    ``cost_usd`` unset, so an unknown price never reads as free.
    """

    def __init__(self, inner: Model, prices: PriceTable | None = None,
                 accounting: Accounting | None = None) -> None:
        super().__init__(inner)
        self.prices = prices
        self.accounting = accounting if accounting is not None else Accounting()

    async def generate(self, request: Request) -> Response:
        response = await self.inner.generate(request)
        reused = response.origin != "live"
        cost = 0.0 if reused else (self.prices.cost(self.inner.name, response.usage)
                                   if self.prices else None)
        if cost is not None:
            response = response.model_copy(
                update={"usage": response.usage.model_copy(update={"cost_usd": cost})})
        self.accounting.add(request.seat, request.purpose, self.inner.name, response.usage,
                            reused)
        return response


# --- budget --------------------------------------------------------------------------------

class Budget(BaseModel):
    max_calls: int | None = Field(None, ge=0)
    max_tokens: int | None = Field(None, ge=0)
    max_cost_usd: float | None = Field(None, ge=0)


@dataclass
class Meter:
    """Model use counted against one ``Budget`` and shared by the clients it limits (a
    game's, or a whole batch's): calls count when they start, so that calls at once cannot
    overshoot; tokens and dollars when a live reply arrives, so the call that crosses those
    limits completes and the next one is refused. Replies from a cache or cassette spend
    neither."""

    budget: Budget
    scope: str
    """What the budget is of, as its refusal says: ``game``, ``batch``."""
    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0

    def charge(self, calls: int = 0, tokens: int = 0, cost_usd: float | None = None) -> None:
        self.calls += calls
        self.tokens += tokens
        self.cost_usd += cost_usd or 0.0

    def exceeded(self) -> str | None:
        """Which limit is spent, in words, or None."""
        limits = self.budget
        if limits.max_calls is not None and self.calls >= limits.max_calls:
            return f"{self.calls} calls of {limits.max_calls}"
        if limits.max_tokens is not None and self.tokens >= limits.max_tokens:
            return f"{self.tokens} tokens of {limits.max_tokens}"
        if limits.max_cost_usd is not None and self.cost_usd >= limits.max_cost_usd:
            return f"${self.cost_usd:.4f} of ${limits.max_cost_usd:.4f}"
        return None


class BudgetExceeded(ModelError):
    """A budget is spent: the game stops at once (the run's health stops on ``spent``),
    and the call is never retried (no retry reads ``spent`` as worth another try, and the
    clients' retries lie below the budget)."""

    kind = ErrorKind.SPENT


class BudgetModel(ModelWrapper):
    """Charges each call to every meter; the first call one of them refuses raises
    ``BudgetExceeded`` without reaching the model."""

    def __init__(self, inner: Model, meters: list[Meter]) -> None:
        super().__init__(inner)
        self.meters = meters

    async def generate(self, request: Request) -> Response:
        for meter in self.meters:
            spent = meter.exceeded()
            if spent:
                raise BudgetExceeded(f"{meter.scope} budget spent ({spent}); refused "
                                     f"{request.purpose or 'a call'} for "
                                     f"{request.seat or 'the run'}")
        for meter in self.meters:
            meter.charge(calls=1)
        response = await self.inner.generate(request)
        if response.origin == "live":
            for meter in self.meters:
                meter.charge(tokens=response.usage.total_tokens,
                             cost_usd=response.usage.cost_usd)
        return response


# --- the usual stack -----------------------------------------------------------------------

def stack(client: Model, *, cache: MemoryCache | SqliteCache | None = None,
          prices: PriceTable | None = None, meters: list[Meter] | None = None) -> Model:
    """Wrap ``client`` as ``Budget(Accounting(Cache(client)))``, each where given.

    The cache answers known requests before anything is spent; accounting prices what the
    cache did not answer; the budget, outermost, sees those prices. Seat models
    (``CallLog.seat``) go on top, one per seat.
    """
    cached: Model = CachedModel(client, cache) if cache is not None else client
    counted = AccountingModel(cached, prices)
    return BudgetModel(counted, meters) if meters else counted
