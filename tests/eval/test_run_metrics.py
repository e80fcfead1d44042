"""Registered metrics on run folders, the metric registry, and the `jubensha eval` CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.engine.events import HostSpoke, Spoke, VoteCast
from jubensha.eval.registry import MetricContext, UnknownMetric, get_metric, load_metrics
from jubensha.eval.similarity import character_text, chat_text, scripts_text
from jubensha.eval.text import ngram_jaccard, tfidf_cosine
from jubensha.llm.fake import HashingEmbedder
from jubensha.runlog.folder import RunFolder, RunMeta, read_run
from jubensha.scripts.io import save_script
from jubensha.scripts.model import Character, Kill, Script, TimelineEntry, Truth, Victim

SCRIPT = Script(
    id="garden", title="Garden", language="en", victims=[Victim(name="Zhao")],
    characters=[
        Character(name="Li", story="Li buried the knife in the garden.",
                  timeline=[TimelineEntry(time="21:00", text="Li walked to the shed.")]),
        Character(name="Wang", side="murderer", killed=["Zhao"],
                  story="Wang poisoned the tea at dinner."),
        Character(name="Zhou", story="Zhou slept through the storm."),
    ],
    truth=Truth(murderers=["Wang"], kills=[Kill(victim="Zhao", killers=["Wang"])]))

EVENTS = [
    HostSpoke(index=0, text="Welcome. This line is the host's, not chat."),
    Spoke(index=1, speaker="Li", kind="statement", text="I saw a knife in the garden."),
    Spoke(index=2, speaker="Wang", kind="answer", text="The tea was fine at dinner."),
    VoteCast(index=3, voter="Li", target="Zhou", victim="Zhao", audience=[]),
    VoteCast(index=4, voter="Zhou", target="Li", victim="Zhao", audience=[]),
    VoteCast(index=5, voter="Wang", target="Li", victim="Zhao", audience=[]),
    # A re-vote replaces the first round.
    VoteCast(index=6, round=2, voter="Li", target="Wang", victim="Zhao", audience=[]),
    VoteCast(index=7, round=2, voter="Zhou", target="Wang", victim="Zhao", audience=[]),
    VoteCast(index=8, round=2, voter="Wang", target="Li", victim="Zhao", audience=[]),
]


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    script_file = save_script(SCRIPT, tmp_path / "garden.yaml")
    meta = RunMeta(script_id="garden", script_source=str(script_file), language="en",
                   procedure={"name": "test"}, seats={}, seed=1)
    folder = RunFolder(tmp_path / "run", meta, SCRIPT)
    for event in EVENTS:
        folder.write_event(event)
    folder.close()
    return tmp_path / "run"


async def test_similarity_compares_what_seats_said_with_every_private_script(
        run_dir: Path) -> None:
    run = read_run(run_dir)
    chat = chat_text(run)
    assert chat == "I saw a knife in the garden.\nThe tea was fine at dinner."
    assert character_text(SCRIPT.characters[0]) == (
        "Li buried the knife in the garden.\n21:00 Li walked to the shed.")
    scripts = scripts_text(SCRIPT)
    context = MetricContext(script=SCRIPT, run=run, embedder=HashingEmbedder())
    result = await get_metric("similarity").compute(context)
    assert result.tfidf == pytest.approx(tfidf_cosine(chat, scripts))
    assert result.ngram == pytest.approx(ngram_jaccard(chat, scripts))
    assert 0 < result.embedding <= 1 and result.run == str(run_dir)
    no_embedder = await get_metric("similarity").compute(
        MetricContext(script=SCRIPT, run=run))
    assert no_embedder.embedding is None and "no embedder" in no_embedder.tables()[0].notes[0]


async def test_identification_and_culprit_rank_use_the_last_round(run_dir: Path) -> None:
    context = MetricContext(script=SCRIPT, run=read_run(run_dir))
    found = await get_metric("identification").compute(context)
    assert found.victims == {"Zhao": (2, 3)} and found.accuracy == pytest.approx(2 / 3)
    ranks = await get_metric("culprit-rank").compute(context)
    assert ranks.ranks == {"Zhao": 1} and ranks.reciprocal_rank == 1.0


def test_registry_lists_metrics_and_names_the_known_ones() -> None:
    assert {"similarity", "identification", "culprit-rank"} <= set(load_metrics())
    with pytest.raises(UnknownMetric, match="unknown metric 'nope'; known: audit, culprit-rank"):
        get_metric("nope")


def test_eval_cli_scores_a_run_folder_as_json_and_markdown(run_dir: Path,
                                                          tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "identification.json"
    result = runner.invoke(app, ["eval", "identification", str(run_dir), "--format", "json",
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["victims"] == {"Zhao": [2, 3]}
    table = runner.invoke(app, ["eval", "similarity", str(run_dir), str(run_dir),
                                "--embedder", "scripted", "--format", "markdown"])
    assert table.exit_code == 0, table.output
    # Two runs of one metric share a table: a header and one row per run folder ("run").
    lines = [line for line in table.output.splitlines() if line.startswith("| run |")]
    assert len(lines) == 3 and "TF-IDF cosine" in lines[0]


def test_eval_cli_errors_are_one_line(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(app, ["eval", "similarity", str(tmp_path / "none")])
    assert missing.exit_code == 2 and "no such run folder" in missing.output
    logs = runner.invoke(app, ["eval", "player-logs", str(tmp_path)])
    assert logs.exit_code == 2 and "no log_cn" in logs.output
    assert "Traceback" not in missing.output + logs.output
