"""Attack: a planted table played on the host's key. A run folder under ``--runs`` that
carries ``web/table.json`` used to be resumed at start-up with the seat models its own
``meta.json`` named, paid for with the host's API key. Now a server restores only the
tables it started (their record signed with its key, for the game their meta.json still
describes), and plays on only with models it offers; every other folder stays a run to
review, and the model server hears nothing."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from jubensha.llm.registry import ModelOptions
from jubensha.runlog.folder import read_run
from jubensha.web.restore import resume_table
from jubensha.web.tables import TableHost
from tests.llm.fault_server import FaultServer
from tests.web.test_web_restart import answer_some, wait_for_decision
from tests.web.web_helpers import client, open_table, seat_form

PAID = "openai:gpt-4o-mini"


def unfinished_table(runs: Path, state: Path) -> tuple[Path, str]:
    """A table of the server keyed in ``state``, left waiting for its person; its folder
    and the person's link."""
    with client(runs, TableHost(runs, state=state)) as web:
        _, invites, _ = open_table(web, seat_form("lighthouse-keeper", "demo",
                                                  {0: "human"}, 4))
        invite = next(iter(invites.values()))
        answer_some(web, invite, 1)
        wait_for_decision(web, invite)
    folder, = runs.iterdir()
    assert not read_run(folder).finished
    return folder, invite


def seat_paid_models(folder: Path) -> None:
    """Change the folder's meta.json so that its agents play a model billed to the key."""
    path = folder / "meta.json"
    meta = json.loads(path.read_text("utf-8"))
    for seat in meta["seats"].values():
        if seat["model"] != "none":
            seat["model"] = PAID
    path.write_text(json.dumps(meta), encoding="utf-8")


def plant_by_hand(folder: Path, runs: Path, name: str, table_id: str) -> Path:
    """A copy of ``folder`` whose table record was written by hand (no signature)."""
    copy = runs / name
    shutil.copytree(folder, copy)
    record = json.loads((copy / "web" / "table.json").read_text("utf-8"))
    record = {key: record[key] for key in ("script", "spectators", "people")}
    (copy / "web" / "table.json").write_text(json.dumps({"id": table_id, **record}), "utf-8")
    seat_paid_models(copy)
    return copy


def start_over(runs: Path, state: Path, server: FaultServer, models: list[str]):
    host = TableHost(runs, ModelOptions(base_url=server.base_url), state=state,
                     resumer=resume_table)
    return host, client(runs, host, models=models)


def listed(web, runs: Path) -> set[str]:
    return {folder.name for folder in runs.iterdir() if folder.name in web.get("/").text}


def test_a_server_over_another_servers_and_planted_tables_plays_none_and_sends_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-hosts-own-key")
    runs = tmp_path / "runs"
    theirs, _ = unfinished_table(runs, tmp_path / "another-server")
    planted = [plant_by_hand(theirs, runs, f"planted-{n}", f"{n:016x}") for n in range(3)]
    before = {folder.name: (folder / "events.jsonl").read_bytes()
              for folder in [theirs, *planted]}
    with FaultServer(share=0.0) as server:
        host, web = start_over(runs, tmp_path / "state", server, ["scripted", PAID])
        with web:
            time.sleep(1.5)  # what a resumed table would have played meanwhile
            assert host.tables == {}
            assert listed(web, runs) == set(before)  # each a run to review
        assert server.requests == 0
    assert sorted(folder.name for folder in runs.iterdir()) == sorted(before)  # no .partial-N
    for name, events in before.items():
        assert (runs / name / "events.jsonl").read_bytes() == events


def test_a_table_of_this_server_whose_meta_json_was_changed_is_not_played(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-hosts-own-key")
    runs, state = tmp_path / "runs", tmp_path / "state"
    folder, invite = unfinished_table(runs, state)
    seat_paid_models(folder)  # shared, changed, and given back
    with FaultServer(share=0.0) as server:
        host, web = start_over(runs, state, server, ["scripted", PAID])
        with web:
            time.sleep(1.5)
            assert host.tables == {} and web.get(invite).status_code == 404
            assert listed(web, runs) == {folder.name}
        assert server.requests == 0


def test_a_table_whose_seats_play_a_model_the_server_no_longer_offers_is_interrupted(
        tmp_path: Path) -> None:
    runs, state = tmp_path / "runs", tmp_path / "state"
    folder, invite = unfinished_table(runs, state)
    with FaultServer(share=0.0) as server:
        _, web = start_over(runs, state, server, ["local"])  # not `scripted` any more
        with web:
            assert web.get(invite + "/live").json()["status"] == "interrupted"
    assert [path.name for path in runs.iterdir()] == [folder.name]  # nothing set aside
