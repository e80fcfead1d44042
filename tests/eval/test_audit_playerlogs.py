"""Positive control of the isolation audit: over the PLAYER* authors' released GPT-3.5 games
(imported with ``runs import player-log``) it finds the leaks a first count of these logs found in their
PLAYER* and Werewolf prompts, and none in their ThinkThrice and O-CoT prompts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jubensha.eval.audit import AuditOptions
from jubensha.runs.audit_command import audit_paths
from jubensha.runs.importers.player_log import import_player_log
from jubensha.scripts.importers.wellplay import import_wellplay

REPORTED = {("en", "PLAYER"): (319, 787), ("zh", "PLAYER"): (618, 1529),
            ("en", "Werewolf"): (732, 1715), ("zh", "Werewolf"): (1248, 2919),
            ("en", "ThinkThrice"): (0, None), ("zh", "ThinkThrice"): (0, None),
            ("en", "O-CoT"): (0, None), ("zh", "O-CoT"): (0, None)}
"""(language, method) -> (prompts flagged, prompts) in that first count (docs/isolation.md)."""
FOLDERS = {"PLAYER": "PLAYER", "Werewolf": "Werewolf", "ThinkThrice": "think*",
           "O-CoT": "O-CoT"}


@pytest.fixture(scope="module")
def imported(datasets: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every game of the four methods, imported with the WellPlay script it was played on
    (the log's folder name, without its number prefix, names the script folder)."""
    root = datasets / "player-logs"
    if not root.is_dir():
        pytest.skip("player-logs dataset absent")
    out = tmp_path_factory.mktemp("player-logs")
    for lang, wellplay in (("en", "english"), ("cn", "chinese")):
        for method, pattern in FOLDERS.items():
            for log in sorted((root / f"log_{lang}").glob(f"log_{pattern}/*/*.xlsx")):
                folder = datasets / "wellplay" / wellplay / re.sub(r"^\d+-", "",
                                                                  log.parent.name)
                import_player_log(log, out / lang / method / log.parent.name,
                                  script=import_wellplay(folder),
                                  script_source=str(folder))
    return out


@pytest.mark.parametrize(("language", "method"), list(REPORTED))
def test_the_audit_reproduces_the_reported_leaks(imported: Path, language: str,
                                                 method: str) -> None:
    report = audit_paths([imported / ("cn" if language == "zh" else "en") / method],
                         AuditOptions())
    flagged, prompts = REPORTED[(language, method)]
    assert {row.architecture for row in report.rows} == {method}
    if prompts is None:
        assert report.flagged == 0 and report.checked > 0
        return
    assert report.checked == prompts
    assert abs(report.share - flagged / prompts) <= 0.02
    assert report.unordered == 0
