"""The transcribed tables A3/A4 of the PLAYER* paper, and the paper's own aggregation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jubensha.eval.playerlogs import paper_tables
from jubensha.eval.stats import pooled_weighted
from jubensha.scripts.model import CATEGORY_POINTS

PAPERS = Path(__file__).resolve().parents[2].parent / "shared" / "papers"
_CELL = re.compile(r"(\d*\.\d{3})±(\.\d{3})subscript")
_ROW = re.compile(r"^(?:(?P<script>[A-Z][A-Za-z ]+?) \(\d+ players, \d+ victims?\) )?"
                  r"(?:Overall )?(?P<metric>Voting|Objective|Reasoning|Relations|Overall) ")


def _parse(lines: list[str]) -> dict[str, dict[str, list[tuple[float, float]]]]:
    """script -> metric -> the six [mean, std] cells of a row, from the paper's text."""
    out: dict[str, dict[str, list[tuple[float, float]]]] = {}
    script = ""
    for line in lines:
        match = _ROW.match(line)
        cells = _CELL.findall(line)
        if match is None or len(cells) != 6:
            continue
        if match["script"]:
            script = match["script"]
        elif line.startswith("Overall ") and match["metric"] != "Overall" or (
                line.startswith("Overall Overall")):
            script = "Overall"
        out.setdefault(script, {})[match["metric"].lower()] = [
            (float(m), float(s)) for m, s in cells]
    return out


@pytest.fixture(scope="module")
def paper_text() -> list[str]:
    path = PAPERS / "player-star.txt"
    if not path.is_file():
        pytest.skip("../shared/papers/player-star.txt is not present")
    return path.read_text(encoding="utf-8").splitlines()


def test_transcription_matches_the_paper_text(paper_text: list[str]) -> None:
    start = next(i for i, line in enumerate(paper_text) if line.startswith("C.3 Performance"))
    split = next(i for i, line in enumerate(paper_text) if line.startswith("For English Dataset"))
    tables = paper_tables()
    for language, lines in (("zh", paper_text[start:split]), ("en", paper_text[split:])):
        parsed = _parse(lines)
        assert set(parsed) == set(tables.tables[language])
        for script, metrics in parsed.items():
            block = tables.tables[language][script]
            for metric, cells in metrics.items():
                got = [(c.mean, c.std) for c in block.cells[metric].values()]
                assert got == cells, (language, script, metric)


@pytest.mark.parametrize("method", ["SSA", "FSA"])
def test_the_papers_overall_row_is_the_pooled_weighted_statistic(method: str) -> None:
    """Overall = weighted mean and population std over every (script, pass) value, with
    question counts (categories) or total points (score) as weights. Three passes with a
    given mean m and sample std s have the moments of (m - s, m, m + s). The paper agrees
    with itself to within 0.005 (relations and reasoning are the loosest)."""
    table = paper_tables().tables["zh"]
    scripts = [name for name in table if name != "Overall"]
    for metric in ("objective", "reasoning", "relations", "overall"):
        groups, weights = [], []
        for name in scripts:
            cell = table[name].cells[metric][method]
            groups.append([cell.mean - cell.std, cell.mean, cell.mean + cell.std])
            questions = table[name].questions
            weights.append(sum(questions[c] * p for c, p in CATEGORY_POINTS.items())
                           if metric == "overall" else questions[metric])
        pooled = pooled_weighted(groups, weights)
        printed = table["Overall"].cells[metric][method]
        assert pooled.mean == pytest.approx(printed.mean, abs=0.005), metric
        assert pooled.std == pytest.approx(printed.std, abs=0.005), metric
