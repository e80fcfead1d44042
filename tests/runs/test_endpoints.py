"""Endpoints and executors in a spec: each model spec reaches its own server with the key
the user's own settings pair with that server (never one a spec or batch folder names, nor
carried by a game's job), a limit on
calls at once that holds across a batch's games, rate-limit answers that slow the callers,
and clear one-line errors for a bad executor or endpoint."""

from __future__ import annotations

import asyncio
import pickle
from pathlib import Path

import pytest

from jubensha.llm.base import Message, Model, ModelError, Request, Response, Usage
from jubensha.runs.attempt import clients_for, game_job
from jubensha.runs.batch import Batch, batch_servers
from jubensha.runs.limits import Gate, LimitedModel, rate_limited
from jubensha.runs.spec import load_spec
from jubensha.runs.spec_expand import expand
from jubensha.runs.spec_schema import SpecError

TINY = str(Path(__file__).parents[1] / "engine" / "tiny_script.yaml")


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    """The user's own settings file (``llm.keys``), in a folder of the test's."""
    folder = tmp_path / "config"
    folder.mkdir(exist_ok=True)
    (folder / "settings.yaml").write_text(text, encoding="utf-8")
    monkeypatch.setenv("JUBENSHA_CONFIG", str(folder))


def test_each_model_reaches_its_endpoint_with_the_key_the_users_settings_pair_it_with(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPU1_KEY", "sk-first-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-default-secret")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    settings(tmp_path, monkeypatch, """
endpoints:
  "HTTP://GPU1:8000/v1/": {api_key_env: GPU1_KEY}
  "http://gpu2:8000/v1": {}
""")
    spec = load_spec(write(tmp_path, f"""
scripts: [{TINY}]
models: ["openai:qwen"]
seats: ["Ann=naive@openai:llama"]
embedder: none
endpoints:
  "openai:qwen": {{base_url: "http://gpu1:8000/v1", max_concurrency: 4}}
  "openai:llama": {{base_url: "http://gpu2:8000/v1"}}
"""))
    games = expand(spec)
    job = game_job(games[0], spec, None, batch_servers(spec, games))
    clients = clients_for(job, spec.options())
    qwen, llama = clients["openai:qwen"], clients["openai:llama"]
    assert str(qwen.client.base_url).startswith("http://gpu1:8000")  # type: ignore[attr-defined]
    assert qwen.client.api_key == "sk-first-secret"  # type: ignore[attr-defined]
    assert str(llama.client.base_url).startswith("http://gpu2:8000")  # type: ignore[attr-defined]
    assert llama.client.api_key == "not-needed"  # type: ignore[attr-defined]
    for key in ("sk-first-secret", "sk-default-secret"):
        assert key.encode() not in pickle.dumps(job)  # what a Ray worker is sent
        assert key not in (tmp_path / "spec.yaml").read_text(encoding="utf-8")


HOSTILE = {
    "a key variable of its choice": """
endpoints:
  "openai:evil": {{base_url: "{url}", api_key_env: GITHUB_TOKEN}}
""",
    "an endpoint": """
endpoints:
  "openai:evil": {{base_url: "{url}"}}
""",
    "model_options.base_url": """
model_options: {{base_url: "{url}"}}
""",
}


@pytest.mark.parametrize("names", list(HOSTILE), ids=list(HOSTILE))
def test_a_shared_batch_folder_naming_a_server_sends_it_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, names: str) -> None:
    """A batch folder from someone else, reindexed and resumed: its server is not in the
    user's settings, so the resume stops with one line saying what to configure, and the
    server never hears from this machine (the user's keys least of all)."""
    from typer.testing import CliRunner

    from jubensha.cli import app
    from tests.llm.fake_server import FakeOpenAIServer

    monkeypatch.setenv("GITHUB_TOKEN", "ghp-user-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-user-secret")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    folder = tmp_path / "shared-batch"
    folder.mkdir()
    with FakeOpenAIServer() as server:
        (folder / "spec.yaml").write_text(
            f"scripts: [{TINY}]\nmodels: [\"openai:evil\"]\nembedder: none\n"
            + HOSTILE[names].format(url=server.base_url), encoding="utf-8")
        runner = CliRunner()
        reindexed = runner.invoke(app, ["runs", "reindex", str(folder)])
        resumed = runner.invoke(app, ["runs", "resume", str(folder)])
        fresh = runner.invoke(app, ["runs", "batch", str(folder / "spec.yaml"),
                                    "--out", str(tmp_path / "new")])
    assert server.authorizations == [] and server.requests == []
    said = {name: " ".join(result.output.split()) for name, result in
            (("reindex", reindexed), ("resume", resumed), ("batch", fresh))}
    assert resumed.exit_code == fresh.exit_code == 2
    stopped_by_settings = [name for name, text in said.items() if "settings" in text]
    assert "batch" in stopped_by_settings
    assert ("resume" in stopped_by_settings) != (reindexed.exit_code != 0)
    assert all(text.count("error:") <= 1 and "secret" not in text for text in said.values())


def test_a_configured_server_gets_only_the_key_the_user_paired_with_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.llm.fake_server import FakeOpenAIServer, completion

    monkeypatch.setenv("GITHUB_TOKEN", "ghp-user-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-user-secret")
    monkeypatch.setenv("LAB_KEY", "sk-lab")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with FakeOpenAIServer() as server:
        settings(tmp_path, monkeypatch,
                 f"endpoints:\n  \"{server.base_url}\": {{api_key_env: LAB_KEY}}\n")
        spec = load_spec(write(tmp_path, f"""
scripts: [{TINY}]
models: ["openai:lab"]
embedder: none
model_options: {{base_url: "{server.base_url}", max_retries: 0}}
"""))
        batch = Batch.open(spec, tmp_path / "batch")
        batch.close()
        job = game_job(batch.games[0], spec, None, batch.servers)
        client = clients_for(job, spec.options())["openai:lab"]
        server.add(completion("hello"))
        asyncio.run(client.generate(REQUEST))
        asyncio.run(client.aclose())
    assert server.authorizations == ["Bearer sk-lab"]


@pytest.mark.parametrize(("text", "words"), [
    ("endpoints: {\"http://a/v1\": {api_key: sk-x}}\n", "endpoints.http://a/v1.api_key: "),
    ("endpoints: {\"http://a/v1\": {api_key_env: \"sk-123\"}}\n", "pattern"),
    ("endpoints: [\n", "invalid YAML")])
def test_a_bad_settings_file_is_one_line_naming_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, words: str) -> None:
    settings(tmp_path, monkeypatch, text)
    spec = load_spec(write(tmp_path, f"scripts: [{TINY}]\nmodels: [\"openai:x\"]\n"
                                     "embedder: none\nmodel_options: {base_url: \"http://a/v1\"}\n"))
    from jubensha.runs.batch import BatchError

    with pytest.raises(BatchError) as error:
        Batch.open(spec, tmp_path / "batch")
    message = str(error.value)
    assert message.startswith(str(tmp_path / "config" / "settings.yaml")) and words in message
    assert "\n" not in message


def test_a_spec_cannot_ship_a_variable_of_its_choice_to_ray_workers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ray", reason="the ray executor needs Ray: pip install -e '.[ray]'")
    from jubensha.runs.executors import ExecutorError
    from jubensha.runs.ray_executor import runtime_env

    monkeypatch.setenv("GITHUB_TOKEN", "ghp-user-secret")
    monkeypatch.setenv("HF_TOKEN", "hf-user")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-user")
    spec = load_spec(write(tmp_path, f"scripts: [{TINY}]\nmodels: scripted\n"
                                     "executor: {kind: ray, env: [GITHUB_TOKEN]}\n"))
    with pytest.raises(ExecutorError, match="GITHUB_TOKEN.*worker_env"):
        runtime_env(spec, {})
    settings(tmp_path, monkeypatch, "worker_env: [HF_TOKEN]\n")
    allowed = spec.model_copy(update={"executor": spec.executor.model_copy(
        update={"env": ["HF_TOKEN", "OPENAI_API_KEY"]})})
    assert runtime_env(allowed, {}) == {"env_vars": {"HF_TOKEN": "hf-user",
                                                     "OPENAI_API_KEY": "sk-user"}}


def test_a_remote_ray_address_from_a_spec_must_be_given_on_the_command_line(
        tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from jubensha.cli import app

    path = write(tmp_path, f"scripts: [{TINY}]\nmodels: scripted\nembedder: none\n"
                           "executor: {kind: ray, address: \"ray://10.9.9.9:10001\"}\n")
    done = CliRunner().invoke(app, ["runs", "batch", str(path), "--out", str(tmp_path / "b")])
    assert done.exit_code == 2
    assert "pass --address ray://10.9.9.9:10001" in " ".join(done.output.split())


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
