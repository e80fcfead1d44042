"""The report as one HTML page: self-contained (plots embedded, no remote resource, no
script), every batch text escaped, the paper-style tables, the Pareto front, the
leaderboard and a link to each transcript; and it opens in a real browser (Debian's
chromium, headless), which saves a screenshot (to $JUBENSHA_SCREENSHOTS when set)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.runs.batch import Batch
from jubensha.runs.html import paper_tables, pareto_front, render_html
from jubensha.runs.index import GameRow
from jubensha.runs.spec import load_spec

TINY = str(Path(__file__).parents[1] / "engine" / "tiny_script.yaml")
BROWSERS = ("chromium", "chromium-browser", "google-chrome")


class Links(HTMLParser):
    """Every src and href of a page, and the tags seen."""

    def __init__(self) -> None:
        super().__init__()
        self.sources: list[str] = []
        self.links: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        for name, value in attrs:
            if name == "src":
                self.sources.append(value or "")
            if name == "href":
                self.links.append(value or "")


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small arena, played: two scripts, three entrants, two games each."""
    folder = tmp_path_factory.mktemp("html")
    (folder / "arena.yaml").write_text(f"""
scripts: [{TINY}, lighthouse-keeper]
arena:
  entrants: ["naive@scripted", "extractive@scripted", "werewolf@scripted"]
  games_per_script: 2
embedder: none
""", encoding="utf-8")
    batch = Batch.open(load_spec(folder / "arena.yaml"), folder / "batch")
    asyncio.run(batch.run(concurrency=2))
    batch.close()
    return folder / "batch"


def test_the_page_is_self_contained_and_links_every_transcript(played: Path,
                                                               tmp_path: Path) -> None:
    page = tmp_path / "site" / "report.html"
    done = CliRunner().invoke(app, ["runs", "report", str(played), "--format", "md",
                                    "--html", str(page)])
    assert done.exit_code == 0, done.output
    text = page.read_text(encoding="utf-8")
    parsed = Links()
    parsed.feed(text)
    assert "script" not in parsed.tags and "link" not in parsed.tags
    assert len(parsed.sources) >= 4 and all(s.startswith("data:image/png;base64,")
                                            for s in parsed.sources)
    transcripts = [link for link in parsed.links if not link.startswith("#")]
    assert len(transcripts) == 4
    for link in transcripts:
        assert (page.parent / link).resolve().is_file() and link.endswith("transcript.md")
    for heading in ("Script × method", "Civilian win rate", "Murderer identification",
                    "Cost against win rate", "Pareto front", "Leaderboard", "Games"):
        assert heading in text


def test_every_text_of_the_batch_is_escaped(tmp_path: Path) -> None:
    hostile = "<img src=x onerror=alert(1)>"
    row = GameRow(id="g", position=0, name="../../outside", script=hostile,
                  procedure="demo", architecture="naive", model=f"m{hostile}", seed=0,
                  settings={}, status="failed", error=f"error: {hostile}")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "transcript.md").write_text("secret", encoding="utf-8")
    text = render_html(tmp_path / "batch" / "x", [row], tmp_path / "report.html")
    assert hostile not in text and "&lt;img src=x onerror=alert(1)&gt;" in text
    assert "outside" not in "".join(link for link in _links(text) if not link.startswith("#"))
    (tmp_path / "batch" / "x" / "sub" / "game").mkdir(parents=True)
    (tmp_path / "batch" / "x" / "sub" / "game" / "transcript.md").write_text("ok")
    nested = row.model_copy(update={"name": "sub/game"})
    text = render_html(tmp_path / "batch" / "x", [nested], tmp_path / "report.html")
    assert "batch/x/sub/game/transcript.md" in _links(text)


def _links(text: str) -> list[str]:
    parsed = Links()
    parsed.feed(text)
    return parsed.links


def test_the_pareto_front_keeps_only_undominated_groups() -> None:
    points = [(1.0, 0.2), (2.0, 0.5), (3.0, 0.4), (2.0, 0.5), (0.5, 0.1), (4.0, 0.9)]
    assert pareto_front(points) == [0, 1, 3, 4, 5]
    assert pareto_front([]) == []


def test_paper_tables_give_mean_and_sample_std_per_script_and_method() -> None:
    def row(position: int, script: str, winner: str, on: int, counted: int) -> GameRow:
        return GameRow(id=str(position), position=position, name=str(position), script=script,
                       procedure="demo", architecture="naive", model="m", seed=position,
                       settings={}, status="finished", winner=winner,
                       votes_on_murderer=on, votes_counted=counted,
                       metrics={"culprit-rank": {"reciprocal_rank": position / 4,
                                                 "scoring": "judge none"}})

    rows = [row(0, "a", "civilians", 4, 4), row(1, "a", "murderers", 0, 4),
            row(2, "a", "civilians", 2, 4), row(3, "b", "civilians", 1, 2)]
    tables = {t.title: t for t in paper_tables(rows)}
    # mean ± sample std (n [95% interval of the mean where a method holds for the cell])
    assert tables["Civilian win rate"].cell("a", "naive@m") == (
        "0.67 ± 0.58 (n=3 [0.21, 0.94])")  # Wilson score: 2 wins in 3 games
    assert tables["Murderer identification"].cell("a", "naive@m") == (
        "0.50 ± 0.50 (n=3; no interval: 3 games, a bootstrap needs 10)")  # shares: none
    assert tables["Civilian win rate"].cell("b", "naive@m") == "1.00 (n=1 [0.21, 1.00])"
    assert tables["Murderer identification"].cell("b", "naive@m") == (
        "0.50 (n=1; no interval: 1 game, a bootstrap needs 10)")
    assert tables["culprit-rank: reciprocal_rank"].cell("a", "naive@m") == (
        "0.25 ± 0.25 (n=3; no interval: 3 games, a bootstrap needs 10)")
    assert tables["Civilian win rate"].cell("c", "naive@m") == "–"


def test_the_page_opens_in_a_headless_browser(played: Path, tmp_path: Path) -> None:
    browser = next((found for name in BROWSERS if (found := shutil.which(name))), None)
    if browser is None:
        pytest.skip("no headless browser: install Debian's chromium (apt-get install -y "
                    "chromium; .ci/run does) to open the HTML report")
    page = tmp_path / "report.html"
    CliRunner().invoke(app, ["runs", "report", str(played), "--format", "md", "--html",
                             str(page)])
    shots = Path(os.environ.get("JUBENSHA_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    shot = shots / "batch-report.png"
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,2400"]
    subprocess.run([*flags, f"--screenshot={shot}", page.as_uri()], capture_output=True,
                   timeout=120, check=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    dom = subprocess.run([*flags, "--dump-dom", page.as_uri()], capture_output=True,
                         text=True, timeout=120, check=True).stdout
    assert "Leaderboard" in dom and dom.count("<img") >= 4 and "transcript.md" in dom
