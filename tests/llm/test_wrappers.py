"""Cache, budget and accounting wrappers, alone and stacked (retries are the client's:
tests/llm/test_openai_client.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from jubensha.llm.base import (
    ErrorKind,
    GenerateConfig,
    Message,
    ModelError,
    Request,
    Response,
    Usage,
)
from jubensha.llm.calls import CallLog, MemorySink
from jubensha.llm.fake import ScriptedModel
from jubensha.llm.wrappers import (
    Accounting,
    AccountingModel,
    Budget,
    BudgetExceeded,
    BudgetModel,
    CachedModel,
    MemoryCache,
    Meter,
    PriceTable,
    SqliteCache,
    deterministic,
    stack,
)


def _request(seat: str = "Mary", purpose: str = "answer", sample: int = 0) -> Request:
    return Request(messages=[Message(role="user", content="You saw the knife. Where?")],
                   seat=seat, purpose=purpose, sample=sample)


def _usage_reply(prompt: int, completion: int, text: str = "ok") -> Response:
    return Response(text=text, model="m", usage=Usage(prompt_tokens=prompt,
                                                      completion_tokens=completion))


async def test_cache_hits_skip_the_model(tmp_path: Path) -> None:
    fake = ScriptedModel()
    cached = CachedModel(fake)
    first = await cached.generate(_request())
    second = await cached.generate(_request(seat="Tom"))
    assert second.text == first.text and second.origin == "cache"
    await cached.generate(_request(sample=1))
    assert (cached.hits, cached.misses, len(fake.requests)) == (1, 2, 2)

    store = SqliteCache(tmp_path / "cache.sqlite")
    await CachedModel(ScriptedModel(), store).generate(_request())
    store.close()
    reopened = CachedModel(ScriptedModel(), SqliteCache(tmp_path / "cache.sqlite"))
    assert (await reopened.generate(_request())).origin == "cache"
    assert reopened.hits == 1
    await reopened.aclose()


def _meter(**limits: float) -> Meter:
    return Meter(Budget.model_validate(limits), "game")


async def test_budget_stops_calls_tokens_and_dollars() -> None:
    calls = BudgetModel(ScriptedModel(), [_meter(max_calls=2)])
    await calls.generate(_request())
    await calls.generate(_request())
    with pytest.raises(BudgetExceeded, match="^game budget spent \\(2 calls of 2\\); refused "
                       "answer for Mary$"):
        await calls.generate(_request())

    big = ScriptedModel(replies={"answer": lambda r: _usage_reply(60, 50)})
    tokens = BudgetModel(big, [_meter(max_tokens=220)])
    await tokens.generate(_request())
    await tokens.generate(_request())  # 110 tokens, then 220: the call that crosses ends
    with pytest.raises(BudgetExceeded, match="220 tokens of 220"):
        await tokens.generate(_request())

    prices = PriceTable.model_validate({"scripted": {"input_per_1m": 1e6, "output_per_1m": 0}})
    dollars = BudgetModel(AccountingModel(big, prices), [_meter(max_cost_usd=120)])
    await dollars.generate(_request())
    await dollars.generate(_request())
    with pytest.raises(BudgetExceeded, match=r"\$120.0000 of \$120.0000"):
        await dollars.generate(_request())


async def test_under_its_limits_a_budget_lets_every_call_through() -> None:
    meter = _meter(max_calls=3, max_tokens=331, max_cost_usd=1.0)
    model = BudgetModel(ScriptedModel(replies={"*": lambda r: _usage_reply(60, 50)}), [meter])
    for _ in range(3):
        await model.generate(_request())
    assert (meter.calls, meter.tokens, meter.cost_usd) == (3, 330, 0.0)
    unlimited = _meter()
    for _ in range(5):
        await BudgetModel(ScriptedModel(), [unlimited]).generate(_request())
    assert unlimited.exceeded() is None and unlimited.calls == 5


async def test_a_budget_is_spent_never_retried_and_never_reaches_the_model() -> None:
    fake = ScriptedModel()
    limited = BudgetModel(fake, [_meter(max_calls=0)])
    with pytest.raises(BudgetExceeded) as refused:
        await limited.generate(Request(messages=[]))
    assert refused.value.kind is ErrorKind.SPENT
    assert "refused a call for the run" in str(refused.value)
    assert fake.requests == []


async def test_one_meter_shared_by_two_clients_and_two_meters_on_one() -> None:
    batch, game = Meter(Budget(max_calls=3), "batch"), _meter(max_calls=10)
    first = BudgetModel(ScriptedModel(), [game, batch])
    second = BudgetModel(ScriptedModel(), [batch])
    await first.generate(_request())
    await second.generate(_request())
    await first.generate(_request())
    with pytest.raises(BudgetExceeded, match="^batch budget spent"):
        await second.generate(_request())
    assert (game.calls, batch.calls) == (2, 3)


async def test_replies_from_a_cache_spend_no_tokens_or_dollars() -> None:
    meter = _meter()
    prices = PriceTable.model_validate({"scripted": {"input_per_1m": 1e6, "output_per_1m": 0}})
    model = ScriptedModel(replies={"*": lambda r: _usage_reply(60, 50)})
    cached = stack(model, cache=MemoryCache(), prices=prices, meters=[meter])
    await cached.generate(_request())
    await cached.generate(_request())
    assert (meter.calls, meter.tokens, meter.cost_usd) == (2, 110, 60.0)


def test_a_meter_charged_with_an_earlier_spend() -> None:
    meter = _meter(max_cost_usd=1.0)
    meter.charge(calls=2, tokens=5, cost_usd=None)
    assert (meter.calls, meter.tokens, meter.cost_usd) == (2, 5, 0.0)
    meter.charge(cost_usd=1.0)
    assert meter.exceeded() == "$1.0000 of $1.0000"


async def test_accounting_per_seat_and_purpose_with_prices(tmp_path: Path) -> None:
    table = tmp_path / "prices.yaml"
    table.write_text("gpt-4o-mini:\n  input_per_1m: 0.15\n  output_per_1m: 0.60\n")
    prices = PriceTable.load(table)
    model = ScriptedModel(name="openai:gpt-4o-mini",
                          replies={"*": lambda r: _usage_reply(1000, 500)})
    counted = AccountingModel(model, prices)
    reply = await counted.generate(_request("Mary", "answer"))
    assert reply.usage.cost_usd == pytest.approx((1000 * 0.15 + 500 * 0.60) / 1e6)
    await counted.generate(_request("Mary", "vote"))
    await counted.generate(_request("Tom", "answer"))
    books = counted.accounting
    assert books.total.calls == 3 and books.total.prompt_tokens == 3000
    assert books.by_seat["Mary"].calls == 2 and books.by_seat["Tom"].completion_tokens == 500
    assert books.by_purpose["answer"].calls == 2
    assert books.by_model["openai:gpt-4o-mini"].cost_usd == pytest.approx(3 * 0.00045)


async def test_unknown_prices_stay_unknown_and_reused_replies_are_free() -> None:
    counted = AccountingModel(CachedModel(ScriptedModel()), PriceTable.model_validate({}))
    first = await counted.generate(_request())
    assert first.usage.cost_usd is None
    again = await counted.generate(_request())
    assert again.usage.cost_usd == 0.0
    assert counted.accounting.total.reused_calls == 1


@pytest.mark.parametrize(("text", "problem"), [
    ("gpt: [1, 2]", "gpt: Input should be a valid dictionary"),
    ("gpt:\n  input_per_1m: -1\n  output_per_1m: 1\n", "gpt.input_per_1m"),
    ("gpt: {input_per_1m: 1}", "gpt.output_per_1m: Field required"),
    ("{not yaml", "invalid YAML"),
])
def test_bad_price_tables_name_file_and_field(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=problem.replace("[", r"\[")) as caught:
        PriceTable.load(path)
    assert "prices.yaml" in str(caught.value)


def test_json_price_tables_and_prefixed_names(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text('{"deepseek-chat": {"input_per_1m": 0.27, "output_per_1m": 1.1}}')
    table = PriceTable.load(path)
    assert table.cost("openai:deepseek-chat", Usage(prompt_tokens=10**6)) == pytest.approx(0.27)
    assert table.cost("local", Usage(prompt_tokens=5)) is None
    with pytest.raises(ValueError, match="missing.yaml"):
        PriceTable.load(tmp_path / "missing.yaml")


async def test_the_stack_caches_prices_and_limits_in_that_order() -> None:
    prices = PriceTable.model_validate({"scripted": {"input_per_1m": 1e6, "output_per_1m": 0}})
    fake = ScriptedModel(replies={"*": lambda r: _usage_reply(60, 50)})
    meter = _meter(max_calls=3)
    built = stack(fake, cache=MemoryCache(), prices=prices, meters=[meter])
    sink = MemorySink()
    seat = CallLog(sink).seat(built, "Mary")
    live = await seat.generate(_request(purpose="answer"))
    again = await seat.generate(_request(purpose="answer"))
    await seat.generate(_request(purpose="vote", sample=1))
    assert (live.usage.cost_usd, again.origin, again.usage.cost_usd) == (60.0, "cache", 0.0)
    assert len(fake.requests) == 2 and meter.calls == 3
    with pytest.raises(BudgetExceeded):
        await seat.generate(_request(purpose="vote", sample=2))
    assert [r.purpose for r in sink.records] == ["answer", "answer", "vote", "vote"]
    assert sink.records[-1].error is not None and "budget spent" in sink.records[-1].error
    bare = stack(ScriptedModel())
    assert isinstance(bare, AccountingModel) and not isinstance(bare.inner, CachedModel)


def test_accounting_from_a_call_log() -> None:
    from jubensha.llm.calls import CallRecord

    records = [CallRecord(seat="Mary", purpose="answer", model="m", messages=[],
                          config={}, usage=Usage(prompt_tokens=5, completion_tokens=2)),
               CallRecord(seat="Tom", purpose="answer", model="m", messages=[], config={},
                          origin="cache", usage=Usage(prompt_tokens=5))]
    books = Accounting.from_calls(records)
    assert books.total.calls == 2 and books.total.reused_calls == 1
    assert books.by_purpose["answer"].prompt_tokens == 10


async def test_one_model_name_on_two_servers_shares_no_cached_reply() -> None:
    store = MemoryCache()
    first, second = ScriptedModel(), ScriptedModel()
    first.server, second.server = "http://gpu1:8000/v1", "http://gpu2:8000/v1"
    request = Request(messages=[Message(role="user", content="Who did it?")])
    assert first.name == second.name
    await CachedModel(first, store).generate(request)
    other = CachedModel(second, store)
    assert (await other.generate(request)).origin != "cache" and other.misses == 1
    again = CachedModel(first, store)
    assert (await again.generate(request)).origin == "cache"


@pytest.mark.parametrize(("temperature", "seed", "shared"), [
    (0, None, True), (0.7, None, False), (1, None, False), (None, None, False), (0, 3, False)])
def test_only_a_request_at_temperature_zero_without_a_seed_is_deterministic(
        temperature: float | None, seed: int | None, shared: bool) -> None:
    request = Request(messages=[Message(role="user", content="Who?")],
                      config=GenerateConfig(temperature=temperature, seed=seed))
    assert deterministic(request) is shared


class Slow(ScriptedModel):
    """Answers after a pause, so that callers overlap."""

    async def generate(self, request: Request) -> Response:
        await asyncio.sleep(0.01)
        return await super().generate(request)


async def test_seats_asking_the_same_at_once_cost_one_call() -> None:
    slow = Slow()
    cached = CachedModel(slow)
    first, second = await asyncio.gather(cached.generate(_request()),
                                         cached.generate(_request(seat="Tom")))
    assert len(slow.requests) == 1 and first.text == second.text
    assert (first.origin, second.origin) == ("live", "cache")


async def test_a_call_that_failed_leaves_the_next_caller_to_ask_again() -> None:
    flaky = ScriptedModel(replies={"answer": [ModelError("blip"), "ok"]})
    cached = CachedModel(flaky)
    with pytest.raises(ModelError):
        await cached.generate(_request())
    assert (await cached.generate(_request())).text == "ok" and len(flaky.requests) == 2


def test_a_reply_cache_file_may_lie_in_folders_not_made_yet(tmp_path: Path) -> None:
    store = SqliteCache(tmp_path / "a" / "b" / "cache.sqlite")
    store.put("k", Response(text="kept", model="m"))
    assert store.get("k") == Response(text="kept", model="m") and store.get("x") is None
    store.close()


async def test_the_stack_keeps_replies_in_the_store_it_is_given() -> None:
    store = MemoryCache()
    await stack(ScriptedModel(), cache=store).generate(_request())
    again = await stack(ScriptedModel(), cache=store).generate(_request())
    assert again.origin == "cache"
    unpriced = await stack(ScriptedModel()).generate(_request())
    assert unpriced.origin == "live" and unpriced.usage.cost_usd is None


def test_prices_match_the_whole_name_first_then_without_the_client_prefix() -> None:
    table = PriceTable.model_validate({
        "openai:gpt-4o": {"input_per_1m": 1, "output_per_1m": 0},
        "gpt-4o": {"input_per_1m": 2, "output_per_1m": 0},
        "ft:gpt-4o:acme": {"input_per_1m": 3, "output_per_1m": 0}})
    per_million = Usage(prompt_tokens=10**6)
    assert table.cost("openai:gpt-4o", per_million) == 1
    assert table.cost("openai:ft:gpt-4o:acme", per_million) == 3


def test_a_price_table_that_is_no_mapping_says_so(tmp_path: Path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text("[1, 2]\n")
    with pytest.raises(ValueError, match=r"prices.yaml: the table: Input should be a valid "):
        PriceTable.load(path)


def test_totals_add_up_every_call_and_keep_callers_apart() -> None:
    books = Accounting()
    books.add("Mary", "answer", "m", Usage(prompt_tokens=5, completion_tokens=2,
                                          latency_s=0.5))
    for _ in range(2):
        books.add(None, "judge", "j", Usage(prompt_tokens=1, completion_tokens=3,
                                            latency_s=0.25), reused=True)
    total = books.total
    assert (total.calls, total.reused_calls, total.completion_tokens) == (3, 2, 8)
    assert total.latency_s == pytest.approx(1.0) and total.total_tokens == 15
    assert books.by_seat[""].calls == 2 and books.by_seat["Mary"].reused_calls == 0
    assert books.by_model["j"].reused_calls == 2


def test_totals_of_a_call_log_per_seat_and_model() -> None:
    from jubensha.llm.calls import CallRecord

    def record(seat: str, model: str, origin: str) -> CallRecord:
        return CallRecord(seat=seat, purpose="answer", model=model, messages=[], config={},
                          origin=origin, usage=Usage(prompt_tokens=5))

    books = Accounting.from_calls([record("Mary", "a", "live"), record("Tom", "a", "live"),
                                   record("Tom", "b", "cache")])
    assert books.total.reused_calls == 1 and books.by_seat["Tom"].calls == 2
    assert books.by_model["a"].calls == 2 and books.by_model["b"].reused_calls == 1


async def test_accounting_adds_to_the_books_it_is_given() -> None:
    books = Accounting()
    await AccountingModel(ScriptedModel(), None, books).generate(_request())
    assert books.total.calls == 1


async def test_a_games_cache_shares_only_the_requests_it_accepts() -> None:
    fake = ScriptedModel()
    shared = CachedModel(fake, only=deterministic)
    cold = Request(messages=[Message(role="user", content="Who?")],
                   config=GenerateConfig(temperature=0))
    warm = cold.model_copy(update={"config": GenerateConfig(temperature=0.7)})
    for request in (cold, cold, cold, warm, warm):
        await shared.generate(request)
    assert len(fake.requests) == 3 and (shared.hits, shared.misses) == (2, 1)


def _file(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _sqlite(path: Path, *tables: str) -> Path:
    import sqlite3

    with sqlite3.connect(path) as db:
        for table in tables:
            db.execute(f"CREATE TABLE {table} (x TEXT)")
    return path


@pytest.mark.parametrize(("make", "says"), [
    (lambda d: d / "new.sqlite", None),
    (lambda d: _file(d / "empty.sqlite", b""), None),
    (lambda d: _sqlite(d / "ours.sqlite", "replies"), None),
    (lambda d: d, "not a regular file"),
    (lambda d: d / ("x" * 300), "cannot read: File name too long"),
    (lambda d: _file(d / "notes.txt", b"hello"),
     "not an SQLite database; name a new file for the reply cache"),
    (lambda d: _sqlite(d / "app.sqlite", "replies", "users", "orders"),
     "an SQLite database holding 2 other table(s), not a reply cache"),
    (lambda d: _file(d / "torn.sqlite", b"SQLite format 3\x00" + b"\x00" * 90),
     "not a readable SQLite database"),
])
def test_a_reply_cache_is_never_put_into_a_file_that_is_not_one(
        tmp_path: Path, make: Any, says: str | None) -> None:
    path = make(tmp_path)
    found = SqliteCache.unusable(path)
    assert found == says if says is None else (found or "").startswith(says)
