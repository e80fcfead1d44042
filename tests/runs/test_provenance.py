"""Provenance: every run folder's meta.json (and the batch index) says which code, prompts
and models played, and reports and comparisons refuse to pool games that differ unless
told ``--allow-mixed``, saying what differs."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.llm.catalog import KnownModel, _write_stamp, file_sha256
from jubensha.llm.identity import ModelIdentity, model_identity
from jubensha.prompts import PROMPTS_DIR
from jubensha.runlog.provenance import (
    Code,
    Prompts,
    Provenance,
    changes_of,
    code_provenance,
    git_folder,
    head_commit,
    is_dirty,
)
from jubensha.runs.index import BatchIndex, GameRow
from jubensha.runs.provenance import MixedProvenance, check_pooled, differences
from tests.runs.accuser import accuser_batch

runner = CliRunner()
TINY = str(Path(__file__).parents[1] / "engine" / "tiny_script.yaml")
SHA = "0123456789abcdef0123456789abcdef01234567"


def test_meta_json_says_which_code_prompts_and_model_played(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = runner.invoke(app, ["play", TINY, "--model", "scripted", "--embedder", "none",
                               "--out", str(out)])
    assert done.exit_code == 0, done.output
    meta = json.loads((out / "meta.json").read_text(encoding="utf-8"))
    found = Provenance.model_validate(meta["provenance"])
    assert found.code.version == meta["versions"]["jubensha"]
    assert found.code == code_provenance(found.code.version)
    assert found.models == {"scripted": ModelIdentity(kind="scripted")}
    templates = found.prompts.templates
    assert "host/en/introduce.j2" in templates  # the host's, and the seats' agent's (play's
    assert any(t.startswith("detective/") for t in templates)  # default, the detective)
    for path, digest in templates.items():  # each hash is of the template's own text
        assert hashlib.sha256((PROMPTS_DIR / path).read_bytes()).hexdigest()[:16] == digest
    assert len(found.prompts.sha256) == 64


def test_the_endpoints_model_string_and_what_it_said_it_ran(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    from tests.llm.fake_server import FakeOpenAIServer, completion

    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    with FakeOpenAIServer(respond=lambda body: completion("I was in the kitchen.")) as server:
        done = runner.invoke(app, ["play", TINY, "--model", "openai:fake-model",
                                   "--base-url", server.base_url + "?key=x", "--embedder",
                                   "none", "--out", str(tmp_path / "run")])
    text = (tmp_path / "run" / "meta.json").read_text(encoding="utf-8")
    assert "sk-secret" not in text and "key=x" not in text
    identity = json.loads(text)["provenance"]["models"]["openai:fake-model"]
    assert identity["name"] == "fake-model"
    assert identity["served"] == ["fake"]  # what the server's replies named
    assert identity["endpoint"] == server.base_url.rstrip("/")
    assert done.exit_code in (0, 4), done.output


def test_a_local_models_file_is_hashed_once_and_a_verified_one_not_at_all(
        tmp_path: Path) -> None:
    weights = tmp_path / "model.gguf"
    weights.write_bytes(b"GGUF" + b"\0" * 1000)
    digest = hashlib.sha256(weights.read_bytes()).hexdigest()
    assert file_sha256(weights) == digest
    stat = weights.stat()
    weights.write_bytes(b"GGUF" + b"\1" * 1000)  # same size; put the old time back
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert file_sha256(weights) == digest  # the stamp was reused, the file not read again
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert file_sha256(weights) != digest  # changed on disk: hashed again
    known = KnownModel(name="model", title="t", package="p", distribution="p", version="1",
                       size=weights.stat().st_size, sha256="ab" * 32, parts=2)
    _write_stamp(weights)  # what joining the parts writes once their hash was checked
    assert file_sha256(weights, known) == "ab" * 32
    assert model_identity(f"local:{weights}").sha256 == file_sha256(weights)
    missing = model_identity(f"local:{tmp_path / 'nope.gguf'}")
    assert missing.sha256 == "" and "No such file" in missing.problem


def fake_git(root: Path, head: str, refs: dict[str, str] | None = None,
             packed: str = "") -> Path:
    git = root / ".git"
    git.mkdir(parents=True)
    (git / "HEAD").write_text(head + "\n", encoding="utf-8")
    for name, sha in (refs or {}).items():
        (git / name).parent.mkdir(parents=True, exist_ok=True)
        (git / name).write_text(sha + "\n", encoding="utf-8")
    if packed:
        (git / "packed-refs").write_text(packed, encoding="utf-8")
    return git


def test_the_commit_is_read_from_git_files_without_git(tmp_path: Path) -> None:
    loose = fake_git(tmp_path / "a", "ref: refs/heads/main", {"refs/heads/main": SHA})
    assert head_commit(loose) == SHA
    packed = fake_git(tmp_path / "b", "ref: refs/heads/dev",
                      packed=f"# pack-refs with: peeled\n{SHA} refs/heads/dev\n")
    assert head_commit(packed) == SHA
    assert head_commit(fake_git(tmp_path / "c", SHA)) == SHA  # detached
    assert head_commit(fake_git(tmp_path / "d", "ref: refs/heads/gone")) is None
    # a worktree: .git is a file naming its folder, whose refs are in the common one
    common = fake_git(tmp_path / "main", "ref: refs/heads/main", {"refs/heads/wt": SHA})
    own = common / "worktrees" / "wt"
    own.mkdir(parents=True)
    (own / "HEAD").write_text("ref: refs/heads/wt\n", encoding="utf-8")
    (own / "commondir").write_text("../..\n", encoding="utf-8")
    tree = tmp_path / "wt"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {own}\n", encoding="utf-8")
    assert git_folder(tree) == own.resolve()
    assert head_commit(own) == SHA
    assert git_folder(tmp_path / "nowhere") is None


def test_without_git_installed_the_dirty_flag_is_unknown(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no git to run
    assert is_dirty(tmp_path) is None


def provenance(commit: str = SHA, dirty: bool | None = False,
               template: str = "aaaa", served: list[str] | None = None,
               changes: str | None = None, endpoint: str = "") -> Provenance:
    return Provenance(code=Code(version="0.1.0", commit=commit, dirty=dirty, changes=changes),
                      prompts=Prompts(sha256="x", templates={"naive/en/speak.j2": template,
                                                             "host/en/round.j2": "bbbb"}),
                      models={"openai:m": ModelIdentity(kind="openai", name="m",
                                                        endpoint=endpoint,
                                                        served=served or [])})


def test_two_edits_of_a_dirty_checkout_are_two_codes(tmp_path: Path) -> None:
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty",
        "-m", "empty")
    agent = tmp_path / "agent.py"
    agent.write_text("x = 1\n", encoding="utf-8")
    git("add", "agent.py")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "agent")
    clean = changes_of(tmp_path)
    agent.write_text("x = 2\n", encoding="utf-8")
    first = changes_of(tmp_path)
    agent.write_text("x = 3\n", encoding="utf-8")
    second = changes_of(tmp_path)
    assert is_dirty(tmp_path) and first and second and len({clean, first, second}) == 3
    games = [row("a", provenance(dirty=True, changes=first)),
             row("b", provenance(dirty=True, changes=first))]
    assert differences(games) == []
    games.append(row("c", provenance(dirty=True, changes=second)))
    assert differences(games) == [(
        f"code: jubensha 0.1.0 0123456789ab (dirty {first}) (2 games); "
        f"jubensha 0.1.0 0123456789ab (dirty {second}) (1 game)")]


def test_two_servers_serving_one_model_name_are_two_models() -> None:
    games = [row("a", provenance(endpoint="http://gpu1:8000/v1")),
             row("b", provenance(endpoint="http://gpu2:8000/v1"))]
    assert differences(games) == [("model openai:m: m at http://gpu1:8000/v1 (1 game); "
                                   "m at http://gpu2:8000/v1 (1 game)")]
    with pytest.raises(MixedProvenance):
        check_pooled(games, allow_mixed=False)


def row(name: str, found: Provenance | None, status: str = "finished") -> GameRow:
    return GameRow(id=name, position=0, name=name, script="s", procedure="demo",
                   architecture="naive", model="openai:m", seed=0, settings={},
                   status=status, provenance=found)  # type: ignore[arg-type]


def test_games_of_one_provenance_pool_and_differences_are_named() -> None:
    same = [row("a", provenance()), row("b", provenance(served=["m-0613"])),
            row("c", provenance(commit="f" * 40), status="failed")]  # failed: not pooled
    assert differences(same) == []
    mixed = [row("a", provenance()), row("b", provenance(commit="f" * 40, dirty=True)),
             row("c", provenance(template="cccc")), row("d", provenance(served=["m-0613"])),
             row("e", provenance(served=["m-1106"])), row("f", None)]
    found = differences(mixed)
    assert found[0] == "1 of 6 games record no provenance (played before it was recorded)"
    assert found[1].startswith("code: jubensha 0.1.0 0123456789ab (4 games); "
                               "jubensha 0.1.0 ffffffffffff (dirty, changes unknown) (1 game)")
    assert found[2] == ("prompts: 1 template(s) differ between games: naive/en/speak.j2")
    assert found[3] == "model openai:m: served m-0613 (1 game); served m-1106 (1 game)"
    with pytest.raises(MixedProvenance, match="pass --allow-mixed"):
        check_pooled(mixed, allow_mixed=False)
    assert check_pooled(mixed, allow_mixed=True)[2] == ("Mixed provenance: prompts: 1 "
                                                        "template(s) differ between games: "
                                                        "naive/en/speak.j2")


def test_the_index_keeps_each_games_provenance(tmp_path: Path) -> None:
    with BatchIndex(tmp_path / "batch.sqlite") as index:
        index.put(row("a", provenance()))
        index.put(row("b", None))
        found = {r.name: r.provenance for r in index.rows()}
    assert found == {"a": provenance(), "b": None}


def test_a_batch_with_a_game_of_other_prompts_is_not_pooled_unless_asked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch is read as another person would read it (another settings folder, so
    another batch.key): its spec may name only files inside it, the script included."""
    batch = accuser_batch(tmp_path, script_inside=True)
    monkeypatch.setenv("JUBENSHA_CONFIG", str(tmp_path / "another-person"))
    pooled = runner.invoke(app, ["runs", "report", str(batch), "--format", "md"])
    assert pooled.exit_code == 0 and "Provenance: jubensha " in pooled.output
    with BatchIndex.of(batch) as index:
        rows = index.rows()
    assert all(r.provenance and r.provenance.code.version for r in rows)
    changed = batch / rows[0].name / "meta.json"
    meta = json.loads(changed.read_text(encoding="utf-8"))
    template = next(iter(meta["provenance"]["prompts"]["templates"]))
    meta["provenance"]["prompts"]["templates"][template] = "0" * 16
    changed.write_text(json.dumps(meta), encoding="utf-8")
    from tests.runs.accuser import accuser_registered

    with accuser_registered():  # the spec's games are expanded again
        reindexed = runner.invoke(app, ["runs", "reindex", str(batch)])
    assert reindexed.exit_code == 0, reindexed.output
    for command in (["runs", "report", str(batch)],
                    ["runs", "compare", str(batch), "accuser:Ann@scripted",
                     "accuser:Bob@scripted"]):
        refused = runner.invoke(app, command)
        assert refused.exit_code == 2, refused.output
        assert f"prompts: 1 template(s) differ between games: {template}" in refused.output
        allowed = runner.invoke(app, [*command, "--allow-mixed", "--format", "json"])
        assert allowed.exit_code == 0, allowed.output
        notes = json.loads(allowed.output)["provenance"]
        assert any(note.startswith("Mixed provenance: prompts:") for note in notes)


def test_pooled_on_request_two_servers_are_still_two_entrants() -> None:
    from jubensha.runs.compare import compare
    from jubensha.runs.report import build_report

    rows = [row(f"g{i}", provenance(endpoint=f"http://gpu{i % 2}:8000/v1"))
            for i in range(4)]
    rows = [r.model_copy(update={"position": i, "seed": i // 2, "winner": "civilians"})
            for i, r in enumerate(rows)]
    report = build_report(rows, allow_mixed=True)
    assert [g.model for g in report.groups] == ["openai:m at http://gpu0:8000/v1",
                                                "openai:m at http://gpu1:8000/v1"]
    found = compare(rows, "naive@openai:m at http://gpu0:8000/v1",
                    "naive@openai:m at http://gpu1:8000/v1", allow_mixed=True)
    assert found.pairs == 2
