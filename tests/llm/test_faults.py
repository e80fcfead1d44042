"""Fault injection: every way a real endpoint misbehaves ends in a reply or a recorded,
bounded ``ModelError`` for one call, and whole games against a 30% mix of faults finish or
stop early as honest failures, each failed call with its record, in bounded time."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from jubensha.engine.procedure import find_procedure
from jubensha.llm.base import GenerateConfig, Message, ModelError, Request
from jubensha.llm.calls import MAX_REPLY_CHARS, CallLog, MemorySink
from jubensha.llm.health import ModelUnreachable
from jubensha.llm.openai_client import OpenAIModel
from jubensha.llm.registry import ModelOptions
from jubensha.runlog.folder import read_run
from jubensha.runs.play import PlayConfig, plan_seats, play_game
from jubensha.scripts import load_script
from tests.llm.fault_server import FAULTS, FaultServer

TINY = Path(__file__).parents[1] / "engine" / "tiny_script.yaml"
LONG = os.environ.get("JUBENSHA_LONG_TESTS") == "1"


def client(server: FaultServer, **kw) -> OpenAIModel:
    options = {"base_url": server.base_url, "max_retries": 1, "timeout_s": 0.5,
               "backoff_s": 0.01, "backoff_max_s": 0.05, "deadline_s": 3.0, **kw}
    return OpenAIModel("fake", api_key="sk-test", **options)


@pytest.mark.parametrize("fault", FAULTS)
def test_each_fault_ends_in_a_reply_or_a_recorded_model_error(fault):
    sink = MemorySink()
    with FaultServer(share=1.0, faults=(fault,), hang_s=1.0) as server:
        model = CallLog(sink).seat(client(server), "Ann")
        request = Request(messages=[Message(role="user", content="Where were you?")],
                          config=GenerateConfig(max_tokens=50))
        started = time.perf_counter()
        try:
            reply = asyncio.run(model.generate(request))
        except ModelError:
            reply = None
        elapsed = time.perf_counter() - started
    assert elapsed < 5, f"{fault} took {elapsed:.1f} s"
    assert len(sink.records) == 1
    record = sink.records[0]
    if reply is None:
        assert record.error and fault in ("500", "429", "reset", "hang", "invalid_json",
                                          "non_utf8", "truncated_json")
    else:
        assert record.raw == reply.text and len(reply.text) <= MAX_REPLY_CHARS
    if fault == "huge":
        assert any("reply cut" in note for note in record.notes)


def test_a_dripping_reply_ends_at_the_timeout_whole_and_its_record_says_how_long():
    """A server sends a valid reply one byte every 0.5 s (the HTTP client's read timeout
    never fires): with --timeout 1 --retries 0 the call ends after about a second, and its
    record says so (it once lasted minutes and recorded a latency of 0.0 s)."""
    sink = MemorySink()
    with FaultServer(share=1.0, faults=("drip",), drip_s=0.5) as server:
        model = CallLog(sink).seat(client(server, timeout_s=1.0, max_retries=0), "Ann")
        started = time.perf_counter()
        with pytest.raises(ModelError, match="APITimeoutError"):
            asyncio.run(model.generate(Request(messages=[Message(role="user", content="Hi")])))
        elapsed = time.perf_counter() - started
    assert elapsed < 3, f"the call took {elapsed:.1f} s"
    [record] = sink.records
    assert record.error and 0.9 <= record.usage.latency_s <= elapsed


def test_a_rate_limit_longer_than_the_deadline_stops_the_job_at_once_with_the_reason(
        tmp_path):
    """An exhausted quota answers 429 with Retry-After: 3600. The first such call ends at
    once (no wait, no retry) and stops the game as unreachable, though calls were answered
    before it, instead of a game going on for an hour."""
    script = load_script(TINY)
    plans = plan_seats(script, "naive", "openai:fake")
    started = time.perf_counter()
    with FaultServer(share=0.0) as server:
        plain = server.draw
        server.draw = lambda: "quota" if plain() is None and server.requests > 3 else None
        options = ModelOptions(base_url=server.base_url, api_key="sk-test", timeout_s=5,
                               max_retries=4, deadline_s=300)
        with pytest.raises(ModelUnreachable, match=r"cannot answer now: .*3,600 s"):
            asyncio.run(play_game(PlayConfig(script=script, procedure=find_procedure("demo"),
                                             plans=plans, model_options=options, embedder="none"),
                                  tmp_path / "run"))
    elapsed = time.perf_counter() - started
    assert elapsed < 10, f"took {elapsed:.1f} s"
    calls = read_run(tmp_path / "run").calls
    assert [bool(c.error) for c in calls] == [False, False, False, True]
    assert "Retry-After" in calls[-1].error
    assert server.requests == 4  # three answered, one refused and not tried again


@pytest.mark.parametrize("architecture", ["naive", "player", "thinkthrice"])
def test_games_against_a_30_percent_mix_of_faults_end_honestly(tmp_path, architecture):
    script = load_script(TINY)
    procedure = find_procedure("demo" if architecture != "player" else "player")
    procedure = procedure.with_options(rounds=1)
    plans = plan_seats(script, architecture, "openai:fake")
    started = time.perf_counter()
    with FaultServer(share=0.3, seed=3 if LONG else 1, hang_s=1.0) as server:
        options = ModelOptions(base_url=server.base_url, api_key="sk-test", timeout_s=0.5,
                               max_retries=1, deadline_s=3.0)
        try:
            result = asyncio.run(play_game(PlayConfig(script=script, procedure=procedure,
                                                      plans=plans, model_options=options,
                                                      embedder="none"), tmp_path / "run"))
        except ModelUnreachable:
            result = None
    elapsed = time.perf_counter() - started
    run = read_run(tmp_path / "run")
    failed = [c for c in run.calls if c.error]
    assert server.served, "no fault was injected"
    assert failed and all(c.error.startswith(("OpenAIError", "ModelError")) for c in failed)
    assert result is None or result.decisions > 0
    assert elapsed < 240, f"{architecture} took {elapsed:.0f} s"


@pytest.mark.parametrize("fault", ["500", "429"])
def test_an_error_status_names_the_endpoint_without_its_credentials(fault):
    """The HTTP library's status error names the URL it called, user:password and all;
    the recorded error says what happened without them."""
    sink = MemorySink()
    with FaultServer(share=1.0, faults=(fault,)) as server:
        url = server.base_url.replace("http://", "http://user:hunter2pw@")
        model = CallLog(sink).seat(client(server, base_url=url, max_retries=0), "Ann")
        with pytest.raises(ModelError, match=f"Error code: {fault}") as raised:
            asyncio.run(model.generate(Request(messages=[Message(role="user", content="Hi")])))
    [record] = sink.records
    assert "hunter2pw" not in str(raised.value) and "hunter2pw" not in record.error


def test_no_key_or_credential_reaches_a_run_folder_a_cassette_or_an_error(tmp_path,
                                                                         monkeypatch):
    from typer.testing import CliRunner

    from jubensha.cli import app

    key, password = "sk-SECRET-4242", "hunter2pw"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    with FaultServer(share=0.3, seed=2) as server:
        url = server.base_url.replace("http://", f"http://user:{password}@")
        result = CliRunner().invoke(app, [
            "play", str(TINY), "--model", "openai:fake", "--base-url", url, "--retries", "1",
            "--timeout", "0.5", "--embedder", "none", "--out", str(tmp_path / "run"),
            "--record", str(tmp_path / "cassette.jsonl")])
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written and result.exit_code in (0, 3, 4), result.output
    for path in written:
        text = path.read_bytes().decode("utf-8", "replace")
        assert key not in text and password not in text, path
    assert key not in result.output and password not in result.output
