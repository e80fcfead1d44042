"""Importing a PLAYER* authors' transcript as a run folder that the run reader accepts."""

from __future__ import annotations

from pathlib import Path

import pytest
from openpyxl import Workbook
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.engine.events import Spoke, StageStarted
from jubensha.eval.playerlogs import TRANSCRIPT_COLUMNS
from jubensha.runlog.folder import read_run
from jubensha.runs.importers.player_log import PlayerLogImportError, import_player_log

ROWS = [
    (0, "self introduction stage", "Li", "all", "I am Li, the constable.", "Your Script is Li"),
    (1, "self introduction stage", "Wang", "all", "I am Wang, the mayor.", "Your Script is Wang"),
    (2, "Li ask Wang for death of Zhao", "Li", "Wang", "Where were you at nine?", "ask prompt"),
    (3, "Li ask Wang for death of Zhao", "Wang", "Li", "In my office all night.", "reply prompt"),
    (4, "Wang ask Li for death of Zhao", "Wang", "Li", "Did you see the body?", None),
    (5, "Wang ask Li for death of Zhao", "Li", "Wang", "No, I did not.", "reply prompt"),
]


def transcript(root: Path, rows: list[tuple] = ROWS) -> Path:
    path = root / "log_en" / "log_think_thrice" / "Sin (4 people closed)" / "Sin.xlsx"
    path.parent.mkdir(parents=True)
    book = Workbook()
    for row in [TRANSCRIPT_COLUMNS, *rows]:
        book.active.append(row)
    book.save(path)
    return path


def test_import_maps_stages_speakers_and_prompts(tmp_path: Path) -> None:
    summary = import_player_log(transcript(tmp_path), tmp_path / "run")
    assert (summary.method, summary.language, summary.seats) == ("ThinkThrice", "en",
                                                                ["Li", "Wang"])
    run = read_run(tmp_path / "run")
    assert run.finished and run.result.winner == "none" and run.result.votes == []
    stages = [e.kind for e in run.events if isinstance(e, StageStarted)]
    assert stages == ["introduction", "questioning"]
    speech = [e for e in run.events if isinstance(e, Spoke)]
    assert [(e.speaker, e.kind, e.to) for e in speech] == [
        ("Li", "introduction", None), ("Wang", "introduction", None),
        ("Li", "question", "Wang"), ("Wang", "answer", "Li"),
        ("Wang", "question", "Li"), ("Li", "answer", "Wang")]
    assert speech[3].reply_to == speech[2].index and speech[5].reply_to == speech[4].index
    assert all(e.audience == "public" for e in run.events)
    assert [e.index for e in run.events] == list(range(len(run.events)))
    # One call record per row that kept its prompt (row 4 has none).
    assert [(c.seat, c.purpose, c.raw) for c in run.calls][2:4] == [
        ("Li", "question", "Where were you at nine?"), ("Wang", "answer", "In my office all night.")]
    assert len(run.calls) == 5 and run.calls[0].messages[0].content == "Your Script is Li"
    imported = run.meta.options["imported"]
    assert imported["format"] == "player-log" and "not played here" in imported["note"]
    assert run.meta.seats["Li"].architecture == "ThinkThrice"
    assert "Where were you at nine?" in (tmp_path / "run" / "transcript.md").read_text()


def test_bad_transcripts_and_used_folders_are_refused(tmp_path: Path) -> None:
    source = transcript(tmp_path, [*ROWS, (6, "vote stage", "Li", "all", "Wang", "")])
    with pytest.raises(PlayerLogImportError, match=r"Sin\.xlsx: row with index 6: unknown "
                                                   "stage 'vote stage'"):
        import_player_log(source, tmp_path / "a")
    good = transcript(tmp_path / "second")
    import_player_log(good, tmp_path / "b")
    with pytest.raises(PlayerLogImportError, match="already holds a run"):
        import_player_log(good, tmp_path / "b")


def test_cli_reports_a_broken_file_in_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "Sin.xlsx"
    broken.write_bytes(b"not a workbook")
    result = CliRunner().invoke(app, ["runs", "import", "player-log", str(broken),
                                      str(tmp_path / "run")])
    assert result.exit_code == 2
    assert "Sin.xlsx: not a readable xlsx workbook" in result.output
    assert "Traceback" not in result.output


@pytest.mark.datasets
def test_import_a_real_game_and_score_its_chat_history(datasets: Path, tmp_path: Path) -> None:
    source = datasets / "player-logs/log_cn/log_PLAYER/131-罪恶（4人封闭）/罪恶.xlsx"
    script = datasets / "wellplay/chinese/罪恶（4人封闭）"
    runner = CliRunner()
    result = runner.invoke(app, ["runs", "import", "player-log", str(source),
                                 str(tmp_path / "run"), "--script", str(script)])
    assert result.exit_code == 0, result.output
    run = read_run(tmp_path / "run")
    assert run.meta.script_id == "wellplay-zh-罪恶-4人封闭" and run.meta.language == "zh"
    assert sum(isinstance(e, Spoke) for e in run.events) == 48
    assert run.meta.options["imported"]["unknown_speakers"] == []
    scored = runner.invoke(app, ["eval", "similarity", str(tmp_path / "run"),
                                 "--embedder", "none", "--format", "json"])
    assert scored.exit_code == 0, scored.output
    assert '"tfidf": 0.57' in scored.output  # 0.55 before the line-break fix (d1b213a)
