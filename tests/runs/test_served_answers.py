"""Post-game answers come from the server the game was played on: a batch's seats answer
on the base URL (or endpoint) their games used, a run evaluated later answers on the server
its provenance names, and the reply cache keys on the server as well as the model name."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.llm.base import Message, Request
from jubensha.llm.fake import ScriptedModel
from jubensha.runs.batch import Batch
from jubensha.runs.spec import load_spec
from tests.llm.fake_server import FakeOpenAIServer, Reply, completion, error

SCRIPT = "lighthouse-keeper"


def scripted(body: dict[str, Any]) -> Reply:
    """The scripted fake's reply to an OpenAI chat request (schema-valid when asked)."""
    schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema")
    request = Request(messages=[Message(role=m["role"], content=m["content"])
                                for m in body["messages"]], json_schema=schema)
    return completion(asyncio.run(ScriptedModel().generate(request)).text)


def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *urls: str) -> None:
    """The user's settings list ``urls`` as servers without a key (``llm.keys``)."""
    folder = tmp_path / "config"
    folder.mkdir(exist_ok=True)
    listed = "".join(f'  "{url}": {{}}\n' for url in urls)
    (folder / "settings.yaml").write_text(f"endpoints:\n{listed}", encoding="utf-8")
    monkeypatch.setenv("JUBENSHA_CONFIG", str(folder))


@pytest.fixture
def default_host(monkeypatch: pytest.MonkeyPatch) -> FakeOpenAIServer:
    """The environment's default server, which must never be asked."""
    with FakeOpenAIServer(respond=lambda body: error(500, "wrong server")) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-default")
        yield server


@pytest.mark.parametrize("where", ["model_options", "endpoints"])
def test_a_batchs_post_game_answers_go_to_the_server_its_games_played_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, default_host: FakeOpenAIServer,
        where: str) -> None:
    with FakeOpenAIServer(respond=scripted) as served:
        settings(tmp_path, monkeypatch, served.base_url)
        place = (f"model_options: {{base_url: \"{served.base_url}\"}}\n"
                 if where == "model_options" else
                 f"endpoints: {{\"openai:fake\": {{base_url: \"{served.base_url}\"}}}}\n")
        spec = tmp_path / "spec.yaml"
        spec.write_text(f"scripts: [{SCRIPT}]\nmodels: [\"openai:fake\"]\nembedder: none\n"
                        f"metrics: [wellplay]\nmetric_samples: 1\n{place}", encoding="utf-8")
        batch = Batch.open(load_spec(spec), tmp_path / "batch")
        asyncio.run(batch.run())
        batch.close()
    assert default_host.requests == []
    folder = next(p for p in (tmp_path / "batch").iterdir() if (p / "meta.json").is_file())
    summary = json.loads((folder / "eval" / "all.json").read_text(encoding="utf-8"))
    assert summary["statuses"][0]["status"] == "scored", summary
    identity = json.loads((folder / "meta.json").read_text(encoding="utf-8"))[
        "provenance"]["models"]["openai:fake"]
    assert identity["endpoint"] == served.base_url


def test_a_run_evaluated_later_answers_on_its_recorded_server_and_caches_per_server(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, default_host: FakeOpenAIServer
        ) -> None:
    with FakeOpenAIServer(respond=scripted) as first, \
            FakeOpenAIServer(respond=scripted) as second:
        settings(tmp_path, monkeypatch, first.base_url, second.base_url)
        run = tmp_path / "run"
        played = CliRunner().invoke(app, [
            "play", SCRIPT, "--model", "openai:fake", "--base-url", first.base_url,
            "--embedder", "none", "--out", str(run)])
        assert played.exit_code == 0, played.output
        during_game = len(first.requests)
        scored = CliRunner().invoke(app, ["eval", "wellplay", str(run), "--samples", "1"])
        assert scored.exit_code == 0, scored.output
        answers = len(first.requests) - during_game
        assert answers > 0 and default_host.requests == []
        # The same run as if played on the second server: same model name, another server.
        meta = json.loads((run / "meta.json").read_text(encoding="utf-8"))
        meta["provenance"]["models"]["openai:fake"]["endpoint"] = second.base_url
        (run / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
        again = CliRunner().invoke(app, ["eval", "all", str(run), "--metric", "wellplay",
                                         "--samples", "1", "--embedder", "none"])
        assert again.exit_code == 0, again.output
        assert len(second.requests) == answers  # none answered from the first's replies
        assert "from the cache" not in again.output
    assert default_host.requests == []


def test_a_recorded_server_the_user_does_not_list_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, default_host: FakeOpenAIServer
        ) -> None:
    with FakeOpenAIServer(respond=scripted) as served:
        settings(tmp_path, monkeypatch, served.base_url)
        run = tmp_path / "run"
        played = CliRunner().invoke(app, [
            "play", SCRIPT, "--model", "openai:fake", "--base-url", served.base_url,
            "--embedder", "none", "--out", str(run)])
        assert played.exit_code == 0, played.output
    moved = tmp_path / "elsewhere"
    shutil.copytree(run, moved)
    meta = json.loads((moved / "meta.json").read_text(encoding="utf-8"))
    meta["provenance"]["models"]["openai:fake"]["endpoint"] = "http://gpu9.invalid:8000/v1"
    (moved / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    refused = CliRunner().invoke(app, ["eval", "wellplay", str(moved), "--samples", "1"])
    assert refused.exit_code == 2, refused.output
    assert "played on http://gpu9.invalid:8000/v1" in " ".join(refused.output.split())
    assert default_host.requests == []
