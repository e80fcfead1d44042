"""Retry, cache, budget and accounting wrappers, alone and stacked."""

from __future__ import annotations

from pathlib import Path

import pytest

from jubensha.llm.base import Message, ModelError, Request, Response, Usage
from jubensha.llm.calls import CallLog, MemorySink
from jubensha.llm.fake import ScriptedModel
from jubensha.llm.replay import ReplayModel
from jubensha.llm.structured import StructuredOutputError
from jubensha.llm.wrappers import (
    Accounting,
    AccountingModel,
    Budget,
    BudgetExceeded,
    BudgetModel,
    CachedModel,
    PriceTable,
    RetryModel,
    SqliteCache,
    stack,
)


def _request(seat: str = "Mary", purpose: str = "answer", sample: int = 0) -> Request:
    return Request(messages=[Message(role="user", content="You saw the knife. Where?")],
                   seat=seat, purpose=purpose, sample=sample)


def _usage_reply(prompt: int, completion: int, text: str = "ok") -> Response:
    return Response(text=text, model="m", usage=Usage(prompt_tokens=prompt,
                                                      completion_tokens=completion))


async def test_retry_recovers_from_flaky_failures_within_bounds() -> None:
    flaky = ScriptedModel(replies={"answer": [ModelError("blip"), ModelError("blip"), "ok"]})
    assert (await RetryModel(flaky, attempts=3, backoff_s=0.001).generate(_request())).text == "ok"
    failing = ScriptedModel(replies={"answer": [ModelError("down")] * 5})
    with pytest.raises(ModelError, match="down"):
        await RetryModel(failing, attempts=2, backoff_s=0.001).generate(_request())
    assert len(failing.requests) == 2


async def test_retry_leaves_permanent_errors_alone() -> None:
    model = ScriptedModel(replies={"answer": [StructuredOutputError("bad", [], [])] * 3})
    with pytest.raises(StructuredOutputError):
        await RetryModel(model, attempts=3, backoff_s=0.001).generate(_request())
    assert len(model.requests) == 1


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


async def test_budget_stops_calls_tokens_and_dollars() -> None:
    calls = BudgetModel(ScriptedModel(), Budget(max_calls=2))
    await calls.generate(_request())
    await calls.generate(_request())
    with pytest.raises(BudgetExceeded, match="2 calls of 2"):
        await calls.generate(_request())

    big = ScriptedModel(replies={"answer": lambda r: _usage_reply(60, 50)})
    tokens = BudgetModel(big, Budget(max_tokens=200))
    await tokens.generate(_request())
    await tokens.generate(_request())
    with pytest.raises(BudgetExceeded, match="220 tokens of 200"):
        await tokens.generate(_request())

    prices = PriceTable.model_validate({"scripted": {"input_per_1m": 1e6, "output_per_1m": 0}})
    dollars = BudgetModel(AccountingModel(big, prices), Budget(max_cost_usd=100))
    await dollars.generate(_request())
    await dollars.generate(_request())
    with pytest.raises(BudgetExceeded, match=r"\$120.0000 of \$100"):
        await dollars.generate(_request())


async def test_budget_is_never_retried() -> None:
    limited = BudgetModel(ScriptedModel(), Budget(max_calls=0))
    with pytest.raises(BudgetExceeded):
        await RetryModel(limited, attempts=5, backoff_s=0.001).generate(_request())


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


async def test_the_stack_records_caches_accounts_and_limits(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    built = stack(ScriptedModel(), cache=None, record_to=cassette, budget=Budget(max_calls=3))
    sink = MemorySink()
    seat = CallLog(sink).seat(built.model, "Mary")
    await seat.generate(_request(purpose="answer"))
    await seat.generate(_request(purpose="vote"))
    assert built.accounting.by_seat["Mary"].calls == 2
    assert len(cassette.read_text().splitlines()) == 2
    assert [r.purpose for r in sink.records] == ["answer", "vote"]
    replayed = stack(ReplayModel.load(cassette), attempts=2)
    reply = await CallLog().seat(replayed.model, "Mary").generate(_request(purpose="vote"))
    assert reply.text == sink.records[1].raw


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
    from jubensha.llm.wrappers import CachedModel, MemoryCache

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
