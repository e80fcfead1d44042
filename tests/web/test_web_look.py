"""How the pages look, computed: every text colour of the stylesheet and every seat colour
reaches WCAG AA contrast (4.5:1) on the backgrounds it is drawn on, the seat colours of
the stylesheet are the palette the charts use, and the charts give each person one colour
in every chart, say whose ratings of whom they show, draw a zero line, show suspect lists
as rows instead of crossing lines, mark the murderers, and can leave a person's own
ratings out."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import jubensha.web
from jubensha.engine.events import Rated
from jubensha.llm.base import GenerateConfig
from jubensha.llm.calls import CallRecord
from jubensha.web.charts import charts
from jubensha.web.pages import Pages
from jubensha.web.roster import PALETTE, colours

STYLE = (Path(jubensha.web.__file__).parent / "static" / "style.css").read_text("utf-8")
AA = 4.5
TEXT_ON = {  # each text colour and the backgrounds the stylesheet puts it on
    "--ink": ["--bg", "--panel", "--accent-bg", "--stage-bg", "--result-bg", "--private-bg"],
    "--dim": ["--bg", "--panel", "--accent-bg", "--stage-bg"],
    "--host-ink": ["--bg", "--panel"],
    "--error": ["--bg", "--panel", "--accent-bg"],
    "--ok": ["--bg", "--panel", "--result-bg"],
    "--accent": ["--bg", "--panel", "--accent-bg"],
    "--private-ink": ["--bg", "--panel", "--accent-bg"],
    "--head-ink": ["--head", "--button", "--danger", "--accent", "--error"],
    "--button-ink": ["--button", "--danger"],
    "--link": ["--bg", "--panel", "--accent-bg"],
}
SEAT_ON = ["--bg", "--panel", "--accent-bg", "--stage-bg"]


def luminance(colour: str) -> float:
    channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(one: str, two: str) -> float:
    high, low = sorted((luminance(one), luminance(two)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def variables() -> dict[str, str]:
    root = re.search(r":root\s*{(.*?)}", STYLE, re.DOTALL).group(1)
    return dict(re.findall(r"(--[\w-]+):\s*(#[0-9a-fA-F]{6})", root))


def test_contrast_helper_matches_known_values():
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)


def test_every_text_colour_reaches_aa_contrast_on_its_backgrounds():
    colour = variables()
    low = {(text, ground): round(contrast(colour[text], colour[ground]), 2)
           for text, grounds in TEXT_ON.items() for ground in grounds
           if contrast(colour[text], colour[ground]) < AA}
    assert not low, low


def test_every_seat_colour_reaches_aa_contrast_and_is_the_charts_palette():
    colour = variables()
    in_css = dict(re.findall(r"\.p(\d+) { --seat: (#[0-9a-f]{6}); }", STYLE))
    assert [in_css[str(n)] for n in range(len(PALETTE))] == list(PALETTE)
    low = {(seat, ground): round(contrast(seat, colour[ground]), 2)
           for seat in PALETTE for ground in SEAT_ON if contrast(seat, colour[ground]) < AA}
    assert not low, low
    assert contrast("#4a453e", "#ffffff") >= AA  # the charts' labels on their white


def rated(index: int, rater: str, speaker: str, trust: int, doubt: int) -> Rated:
    return Rated(index=index, rater=rater, speaker=speaker, statement=index, trust=trust,
                 doubt=doubt, audience=[])


SEATS = ["Ann", "Bob", "Cy", "Dee"]
EVENTS = [rated(1, "Ann", "Bob", 2, 0), rated(2, "Ann", "Cy", 0, 2), rated(3, "Bob", "Cy", 1, 2),
          rated(4, "Bob", "Ann", 0, 1), rated(5, "Ann", "Cy", 0, 2), rated(6, "Dee", "Ann", 1, 1)]


def test_each_person_has_one_colour_in_every_chart():
    drawn = charts(EVENTS, [], SEATS)
    assert [chart.owner for chart in drawn] == ["Ann", "Bob", "Dee"]
    palette = colours(SEATS)
    for chart in drawn:
        assert chart.colour == palette[chart.owner]
        assert all(line.colour == palette[line.seat] for line in chart.lines)
    cy = {line.colour for chart in drawn for line in chart.lines if line.seat == "Cy"}
    assert cy == {palette["Cy"]}


def test_trust_charts_show_running_doubt_minus_trust_around_a_zero_line():
    ann = charts(EVENTS, [], SEATS)[0]
    assert {line.seat: line.last for line in ann.lines} == {"Bob": -2.0, "Cy": 4.0}
    assert ann.low <= 0 <= ann.high and ann.top < ann.zero < ann.bottom


def test_a_persons_ratings_can_be_left_out_and_murderers_are_marked():
    drawn = charts(EVENTS, [], SEATS, hide={"Ann"}, murderers={"Cy"})
    assert "Ann" not in [chart.owner for chart in drawn]
    bob = drawn[0]
    assert {line.seat: line.murderer for line in bob.lines} == {"Ann": False, "Cy": True}


def pruner(index: int, seat: str, suspects: list[str]) -> CallRecord:
    return CallRecord(index=index, seat=seat, purpose="pruner", model="scripted",
                      messages=[], config=GenerateConfig(), parsed={"suspicion": suspects})


def test_suspect_lists_are_rows_filled_while_a_seat_is_on_the_list():
    calls = [pruner(1, "Ann", ["Bob", "Cy"]), pruner(2, "Ann", ["Cy"]), pruner(3, "Ann", ["Cy"]),
             pruner(4, "Ann", ["Bob"])]
    chart, = charts([], calls, SEATS, murderers={"Cy"})
    rows = {row.seat: row for row in chart.rows}
    assert list(rows) == ["Bob", "Cy"] and chart.kind == "suspects"
    assert len(rows["Bob"].spans) == 2 and len(rows["Cy"].spans) == 1
    assert rows["Bob"].now and not rows["Cy"].now and rows["Cy"].murderer
    assert rows["Cy"].spans[0][0] < rows["Cy"].spans[0][1] <= rows["Bob"].spans[1][0]


@pytest.mark.parametrize("lang, trust, suspects", [
    ("en", "How Ann rates the others: doubt minus trust", "Whom Ann suspects"),
    ("zh", "Ann对其他人的评价：怀疑减信任", "Ann怀疑谁")])
def test_chart_titles_say_who_rates_whom_with_axis_labels(lang, trust, suspects):
    calls = [pruner(1, "Ann", ["Bob"])]
    drawn = Pages().fragment("charts.html", lang, charts=charts(EVENTS, calls, SEATS))
    assert trust in drawn and suspects in drawn
    assert 'stroke-dasharray="4 3"' in drawn  # the zero line
    assert ('doubt − trust' if lang == "en" else "怀疑减信任") in drawn
    assert 'font-size="10"' not in drawn and 'font-size="13"' in drawn
