"""Endpoints and executors in a spec: each model spec reaches its own server with the key
named by an environment variable (never carried by the spec or a game's job), a limit on
calls at once that holds across a batch's games, rate-limit answers that slow the callers,
and clear one-line errors for a bad executor or endpoint."""

from __future__ import annotations

import asyncio
import pickle
from pathlib import Path

import pytest

from jubensha.llm.base import Message, Model, ModelError, Request, Response, Usage
from jubensha.runs.attempt import clients_for
from jubensha.runs.batch import Batch, game_job
from jubensha.runs.limits import Gate, LimitedModel, rate_limited
from jubensha.runs.spec import SpecError, expand, load_spec

TINY = str(Path(__file__).parents[1] / "engine" / "tiny_script.yaml")


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_each_model_reaches_its_endpoint_with_the_key_of_the_named_variable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPU1_KEY", "sk-first-secret")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    spec = load_spec(write(tmp_path, f"""
scripts: [{TINY}]
models: ["openai:qwen"]
seats: ["Ann=naive@openai:llama"]
embedder: none
endpoints:
  "openai:qwen": {{base_url: "http://gpu1:8000/v1", api_key_env: GPU1_KEY, max_concurrency: 4}}
  "openai:llama": {{base_url: "http://gpu2:8000/v1"}}
"""))
    job = game_job(expand(spec)[0], spec, None)
    clients = clients_for(job, spec.options())
    qwen, llama = clients["openai:qwen"], clients["openai:llama"]
    assert str(qwen.client.base_url).startswith("http://gpu1:8000")  # type: ignore[attr-defined]
    assert qwen.client.api_key == "sk-first-secret"  # type: ignore[attr-defined]
    assert str(llama.client.base_url).startswith("http://gpu2:8000")  # type: ignore[attr-defined]
    assert b"sk-first-secret" not in pickle.dumps(job)  # what a Ray worker is sent
    assert "sk-first-secret" not in (tmp_path / "spec.yaml").read_text(encoding="utf-8")


class Slow(Model):
    """Answers after a pause, counting how many calls run at once; fails as told."""

    name = "slow"

    def __init__(self, error: Exception | None = None) -> None:
        self.running = self.peak = 0
        self.error = error

    async def generate(self, request: Request) -> Response:
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            await asyncio.sleep(0.02)
            if self.error is not None:
                raise ModelError("refused") from self.error
            return Response(text="ok", model="slow", usage=Usage())
        finally:
            self.running -= 1


REQUEST = Request(messages=[Message(role="user", content="hi")])


def test_a_gate_admits_at_most_its_limit_of_calls_at_once() -> None:
    inner = Slow()
    model = LimitedModel(inner, Gate(2))

    async def many() -> None:
        await asyncio.gather(*(model.generate(REQUEST) for _ in range(7)))

    asyncio.run(many())
    assert inner.peak == 2


class RateLimitError(Exception):
    """Named as the OpenAI SDK names an HTTP 429."""


def test_a_rate_limit_answer_closes_the_gate_for_a_growing_pause() -> None:
    gate = Gate(None)
    refused = LimitedModel(Slow(RateLimitError("429")), gate)

    async def scenario() -> tuple[float, float]:
        loop = asyncio.get_running_loop()
        with pytest.raises(ModelError):
            await refused.generate(REQUEST)
        start = loop.time()
        await gate.acquire()
        first = loop.time() - start
        await gate.release(rate_limited=True)
        start = loop.time()
        await gate.acquire()
        return first, loop.time() - start

    first, second = asyncio.run(scenario())
    assert first >= 0.95 and second >= 1.95 and gate.rate_limits == 2
    assert rate_limited(ModelError("x")) is False


def test_a_batch_holds_an_endpoint_limit_across_its_games(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, f"""
scripts: [{TINY}]
models: scripted
seeds: [0, 1, 2, 3]
embedder: none
concurrency: 4
model_options: {{latency_s: 0.02}}
endpoints: {{scripted: {{max_concurrency: 1}}}}
"""))
    batch = Batch.open(spec, tmp_path / "batch")
    try:
        summary = asyncio.run(batch.run())
    finally:
        batch.close()
    assert summary.finished == 4
    # one call at a time: the batch lasts at least as long as all its calls one after another
    assert summary.seconds >= summary.spent.calls * 0.02


@pytest.mark.parametrize(("extra", "field", "words"), [
    ("executor: {kind: spark}\n", "executor.kind", "'local', 'processes' or 'ray'"),
    ("executor: {kind: ray, cpus_per_game: 0}\n", "executor.cpus_per_game", "greater than 0"),
    ("executor: {kind: ray, env: [\"sk-123\"]}\n", "executor.env.0", "pattern"),
    ("endpoints: {\"wizard:x\": {max_concurrency: 2}}\n", "endpoints.wizard:x", "unknown model"),
    ("endpoints: {scripted: {max_concurrency: 0}}\n", "endpoints.scripted.max_concurrency",
     "greater than or equal to 1"),
])
def test_a_bad_executor_or_endpoint_is_one_line_naming_the_field(
        tmp_path: Path, extra: str, field: str, words: str) -> None:
    path = write(tmp_path, f"scripts: [{TINY}]\nmodels: scripted\n" + extra)
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    line = next(line for line in str(caught.value).splitlines() if line.startswith(
        f"{path}: {field}: "))
    assert words in line


def test_an_unreachable_ray_cluster_is_one_line(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="the ray executor needs Ray: pip install -e '.[ray]'")
    import ray

    if ray.is_initialized():
        pytest.skip("a Ray cluster is already attached to this process")
    from typer.testing import CliRunner

    from jubensha.cli import app

    path = write(tmp_path, f"scripts: [{TINY}]\nmodels: scripted\nembedder: none\n")
    done = CliRunner().invoke(app, ["runs", "batch", str(path), "--out", str(tmp_path / "b"),
                                    "--executor", "ray", "--address", "auto"])
    assert done.exit_code == 2
    assert "Ray: cannot start or reach auto: Could not find any running Ray instance" in \
        " ".join(done.output.split())
