"""The isolation audit: a seat call holding another character's private text (or the truth)
that the seat had not heard is flagged, with whose text it was and where it appears; what
the owner said aloud before the call is not; calls meant to see more are counted apart;
the command exits 1 on a leak, and the audit is a batch metric and a report column."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.engine.events import ActStarted, Spoke
from jubensha.engine.procedure import find_procedure
from jubensha.eval.audit import (
    AuditOptions,
    audit_run,
    count_passages,
    passages_of,
    uncovered,
    units,
)
from jubensha.eval.audit_report import AuditReport
from jubensha.llm.base import GenerateConfig, Message
from jubensha.llm.calls import CallRecord
from jubensha.llm.fake import ScriptedModel
from jubensha.runlog.folder import RunLog, read_run
from jubensha.runs.index import BatchIndex
from jubensha.runs.play import PlayConfig, plan_seats, play_game
from jubensha.scripts import Script, load_script

TINY = Path(__file__).parents[1] / "engine" / "tiny_script.yaml"
runner = CliRunner()


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("audit") / "run"
    script = load_script(TINY)
    asyncio.run(play_game(PlayConfig(script=script, procedure=find_procedure("thinkthrice"),
                                     plans=plan_seats(script, "naive", "scripted"), seed=2,
                                     script_source=str(TINY)), out,
                          models={"scripted": ScriptedModel()}))
    return out


def call(seat: str, text: str, seen: int, index: int = 900, **fields: object) -> CallRecord:
    return CallRecord(index=index, seat=seat, purpose="planted", model="scripted",
                      access="seat", seen=seen, config=GenerateConfig(),
                      messages=[Message(role="system", content="You are at the table."),
                                Message(role="user", content=text)], **fields)  # type: ignore[arg-type]


def gossip(script: Script) -> str:
    """Cara's, Bob's and Ann's stories: one, one and two passages of ten words that only
    their owners hold (until someone says them)."""
    cara, bob, ann = (script.character(name) for name in ("Cara", "Bob", "Ann"))
    return f"Rumour has it: {cara.story} Also, {bob.story} And then {ann.story}"


def audited(run: RunLog, *extra: CallRecord, **options: int) -> AuditReport:
    run = dataclasses.replace(run, calls=[*run.calls, *extra])
    found = audit_run(load_script(TINY), run, AuditOptions(**options), eval_calls=[])
    return AuditReport.of([found], AuditOptions(**options))


def test_our_game_is_clean_and_every_seat_call_is_checked(tiny_run: Path) -> None:
    run = read_run(tiny_run)
    report = audited(run)
    assert report.checked == len(run.calls) > 0 and report.flagged == 0
    assert report.unordered == 0


def test_a_planted_leak_is_flagged_with_whose_text_and_where(tiny_run: Path) -> None:
    script = load_script(TINY)
    run = read_run(tiny_run)
    report = audited(run, call("Dan", gossip(script), seen=0))
    assert report.flagged == 1
    worst = report.worst[0]
    assert (worst.seat, worst.index, worst.passages) == ("Dan", 900, 4)
    assert worst.leak is not None and worst.leak.owner == "Cara"
    assert (worst.leak.part, worst.leak.message) == ("story", 1)
    assert worst.leak.offset == len("Rumour has it: ")
    assert script.character("Cara").story.startswith(worst.leak.passage)
    own = call("Cara", gossip(script), seen=0)  # her own story is no leak: 3 passages left
    assert audited(read_run(tiny_run), own, passages=4).flagged == 0
    assert audited(read_run(tiny_run), call("Dan", gossip(script), seen=0),
                   passages=5).flagged == 0


def test_a_secret_its_owner_said_aloud_before_the_call_is_not_a_leak(tmp_path: Path) -> None:
    script = load_script(TINY)
    out = tmp_path / "run"
    asyncio.run(play_game(PlayConfig(script=script, procedure=find_procedure("demo"),
                                     plans=plan_seats(script, "naive", "scripted"), seed=2), out,
                          models={"scripted": ScriptedModel()}))
    run = read_run(out)
    told = Spoke(index=len(run.events), speaker="Cara", kind="statement",
                 text=gossip(script))
    run.events = [*run.events, told]
    after = call("Dan", gossip(script), seen=told.index)
    before = call("Dan", gossip(script), seen=told.index - 1, index=901)
    report = audited(run, after, before)
    assert [(c.index, c.passages) for c in report.worst] == [(901, 4)]
    private = told.model_copy(update={"audience": ["Cara", "Ann"]})
    run.events = [*run.events[:-1], private]
    assert audited(run, after).flagged == 1  # Dan did not hear it


def test_a_future_act_sheet_is_private_until_it_is_released(tiny_run: Path) -> None:
    script = load_script(TINY)
    run = read_run(tiny_run)
    act2 = script.character("Bob").acts[0].text
    sheet = f"{act2} {act2.upper()} again {act2}"
    released = next(e.index for e in run.events if isinstance(e, ActStarted)
                    and e.sheet is not None and e.audience == ["Bob"])
    early = call("Bob", sheet, seen=released - 1)
    late = call("Bob", sheet, seen=released, index=901)
    report = audited(run, early, late, passages=1, words=5)
    assert [c.index for c in report.worst] == [900]


def test_calls_meant_to_see_more_are_listed_apart(tiny_run: Path) -> None:
    script = load_script(TINY)
    run = read_run(tiny_run)
    judge = call("Dan", gossip(script), seen=0).model_copy(update={
        "seat": None, "subject": "Dan", "access": "truth", "purpose": "factual.judge"})
    found = audit_run(script, run, AuditOptions(), eval_calls=[judge])
    report = AuditReport.of([found], AuditOptions())
    assert report.flagged == 0 and report.checked == len(run.calls)
    assert [(p.purpose, p.access, p.calls) for p in report.privileged] == [
        ("factual.judge", "truth", 1)]
    legacy = judge.model_copy(update={"seat": "Dan", "access": None, "seen": None})
    report = AuditReport.of([audit_run(script, run, AuditOptions(), eval_calls=[legacy])],
                            AuditOptions())
    assert report.flagged == 1 and report.unordered == 1  # undeclared: audited as the seat


def test_a_passage_that_is_mostly_text_the_seat_may_know_is_no_evidence() -> None:
    """Units 2-4 are covered by a legitimate window (n=3); a window needs 2 new units."""
    legit = np.array([False, False, True, False, False, False, False, False])
    assert uncovered(legit, 3).tolist() == [2, 1, 0, 1, 2, 3, 3, 3]


def test_passages_are_counted_without_overlap_in_words_or_chinese_characters() -> None:
    assert units("Dr. Ling's 2nd note, 凶手是她。") == ["dr", "ling", "s", "2nd", "note",
                                                   "凶", "手", "是", "她"]
    assert count_passages([True] * 25 + [False] + [True], 10) == (3, 0)
    same = passages_of(units("a b c d"), 2)
    assert len(same) == 3 and same[0] != same[1]
    assert (passages_of(units("A b"), 2) == passages_of(units("a  B!"), 2)).all()


def test_the_command_exits_1_on_a_leak_and_writes_json_and_markdown(
        tiny_run: Path, tmp_path: Path) -> None:
    clean = runner.invoke(app, ["audit", str(tiny_run), "--format", "json"])
    assert clean.exit_code == 0, clean.output
    assert json.loads(clean.output)["flagged"] == 0
    leaky = tmp_path / "leaky"
    leaky.mkdir()
    for name in ("meta.json", "script.played.yaml", "events.jsonl", "calls.jsonl",
                 "result.json"):
        (leaky / name).write_bytes((tiny_run / name).read_bytes())
    planted = call("Dan", gossip(load_script(TINY)), seen=3)
    with (leaky / "calls.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(planted.model_dump_json() + "\n")
    found = runner.invoke(app, ["audit", str(tmp_path), "--format", "md"])
    assert found.exit_code == 1, found.output
    assert "| naive | planted | 1 | 1 | 1.000 |" in found.output
    assert "Cara (story)" in found.output and "message 1, char 15" in found.output
    missing = runner.invoke(app, ["audit", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "no such folder" in missing.output
    bad = runner.invoke(app, ["audit", str(tiny_run), "--passages", "0"])
    assert bad.exit_code == 2 and "passages" in bad.output


def test_audit_is_a_batch_metric_and_a_report_column(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"scripts: [{TINY}]\narchitectures: [naive, player]\nmodels: scripted\n"
                    "seeds: [0]\nembedder: none\nmetrics: [audit]\n", encoding="utf-8")
    done = runner.invoke(app, ["runs", "batch", str(spec), "--out", str(tmp_path / "b")])
    assert done.exit_code == 0, done.output
    with BatchIndex.of(tmp_path / "b") as index:
        rows = index.rows()
    assert all(row.metrics["audit"]["flagged"] == 0 < row.metrics["audit"]["checked"]
               for row in rows)
    report = runner.invoke(app, ["runs", "report", str(tmp_path / "b"), "--format", "md"])
    assert report.exit_code == 0 and "audit" in report.output
    audit = runner.invoke(app, ["audit", str(tmp_path / "b"), "--format", "json"])
    assert audit.exit_code == 0 and json.loads(audit.output)["runs"] == 2


def test_the_audit_figure_does_not_grow_with_each_evaluation_of_a_run(
        tiny_run: Path, tmp_path: Path) -> None:
    """``eval revote`` asks every seat again; run it three times (as a batch killed and
    resumed would): the second and third are served from the run's cache and logged again,
    and the audit checks each request once however often it was logged."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(tiny_run, run, ignore=shutil.ignore_patterns("eval"))
    checked, logged = [], []
    for _ in range(3):
        done = runner.invoke(app, ["eval", "revote", str(run), "--format", "json"])
        assert done.exit_code == 0, done.output
        report = json.loads(runner.invoke(app, ["audit", str(run), "--format", "json"]).output)
        checked.append(report["checked"])
        logged.append(len((run / "eval" / "calls.jsonl").read_text().splitlines()))
    game = sum(1 for c in read_run(run).calls if c.access == "seat")
    assert logged[0] > 0 and logged[2] == 3 * logged[0]  # every evaluation logs its calls
    assert checked[0] > game and checked == [checked[0]] * 3
