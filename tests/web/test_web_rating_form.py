"""A MIRAGE round's ratings on one form, as a person meets it: the statements grouped
under each speaker (the name once), questions rated as the MIRAGE release rates them (the
asker's turn, the answer, the introduction), a compact line per statement whose toggles
stay on its line; the whole round on a laptop screen with Send in sight, at least four
statements on a phone, the conversation still readable above the dock, and the page never
scrolling under it. The hint names the options as they are written."""

from __future__ import annotations

import re

from jubensha.engine.events import Spoke
from jubensha.web.pages import Pages
from jubensha.web.rating import rating_groups
from tests.web.test_web_browser import (
    DESKTOP,
    PHONE,
    browser,  # noqa: F401  (a fixture)
    fill,
    in_view,
    next_decision,
    seat_page,
    send,
    server,  # noqa: F401  (a fixture)
    shots,  # noqa: F401  (a fixture)
    start_table,
)


def said(speaker: str, kind: str, text: str, to: str | None = None) -> Spoke:
    return Spoke(speaker=speaker, kind=kind, text=text, to=to, audience="public")  # type: ignore[arg-type]


ROUND = [said("Ann", "question", "Where were you?", "Bob"), said("Bob", "answer", "Home.", "Ann"),
         said("Cy", "question", "Who saw you?", "Ann"), said("Ann", "answer", "Nobody.", "Cy")]


def test_a_round_is_grouped_under_each_speaker_in_the_order_they_spoke():
    groups = rating_groups(ROUND, "en")
    assert [g.speaker for g in groups] == ["Ann", "Bob", "Cy"]
    assert [(line.number, line.kind) for line in groups[0].lines] == [
        (0, "asks Bob"), (3, "answers Cy")]
    zh = rating_groups(ROUND, "zh")
    assert zh[0].lines[0].kind == "向Bob提问" and zh[1].lines[0].kind == "回答Ann"


def form(lang: str) -> str:
    decision = {"type": "rate_round", "statements": ROUND}
    return Pages().fragment("decision.html", lang, pending={"id": 7, "decision": decision},
                            form={}, error="", cards=[], token="t", table=None, gone=False,
                            colours={"Ann": 0, "Bob": 1, "Cy": 2})


def test_the_form_names_each_speaker_once_and_its_hint_names_the_options_as_written():
    page = form("en")
    assert len(re.findall(r'<h3 class="who">Ann</h3>', page)) == 1
    assert page.count('class="rate-line"') == 4
    for n in range(4):  # the answer is read back by the statement's place
        assert f'name="trust{n}" value="1" checked' in page
        assert f'name="doubt{n}" value="1" checked' in page
    hint = re.search(r'<p class="dim rate-help">(.*?)</p>', page)[1]
    assert "0 · none" in hint and "starts at 1 · some" in hint and "somewhat" not in hint
    assert "1 · 有一些" in re.search(r'<p class="dim rate-help">(.*?)</p>', form("zh"))[1]


MEASURE = """() => {
  const dock = document.getElementById("decision").getBoundingClientRect();
  const bottom = Math.min(dock.bottom, innerHeight) + 1;
  const lines = [...document.querySelectorAll("#decision-form .rate-line")];
  const seen = lines.filter(l => { const b = l.getBoundingClientRect();
                                   return b.top >= dock.top - 1 && b.bottom <= bottom; });
  const broken = lines.filter(l => [...l.querySelectorAll(".seg")].some(seg => {
    const tops = [...seg.querySelectorAll(".pill")].map(p => Math.round(p.getBoundingClientRect().top));
    const box = l.getBoundingClientRect(), own = seg.getBoundingClientRect();
    return new Set(tops).size > 1 || own.top < box.top - 1 || own.bottom > box.bottom + 1; }));
  return {lines: lines.length, seen: seen.length, broken: broken.length,
          names: [...document.querySelectorAll("#decision-form .rate-group .who")].map(h => h.textContent),
          kinds: [...document.querySelectorAll("#decision-form .said .kind")].map(k => k.textContent),
          events: document.getElementById("events").getBoundingClientRect().height,
          scrolls: document.documentElement.scrollHeight - innerHeight};
}"""


def test_a_round_fits_a_laptop_and_a_phone_shows_four_statements(
        server, browser, shots):  # noqa: F811
    for script, lang in (("lighthouse-keeper", "en"), ("tingsong-tea-estate", "zh")):
        lobby = browser.new_page(viewport=DESKTOP)
        invites, _ = start_table(lobby, server, script, "mirage", [0], False)
        seat = seat_page(browser, invites[0])
        measured, turns = [], 0
        while len(measured) < 4:  # the introductions' form, then the first round's
            kind = next_decision(seat)
            assert kind is not None, "the game ended before a round was rated"
            turns += kind == "turn"
            if kind == "rate_round":
                for size_name, size in (("desktop", DESKTOP), ("phone", PHONE)):
                    seat.set_viewport_size(size)
                    seat.wait_for_timeout(150)
                    got = seat.evaluate(MEASURE)
                    measured.append((size_name, got))
                    assert in_view(seat, "#decision-form button[type=submit]"), size_name
                    assert len(got["names"]) == len(set(got["names"])), got  # each name once
                    assert got["broken"] == 0 and got["scrolls"] <= 1, (size_name, got)
                    if size_name == "desktop":
                        assert got["seen"] == got["lines"], got  # the whole round
                    else:
                        assert got["seen"] >= min(4, got["lines"]), got
                        assert got["events"] >= 180, got  # the conversation stays readable
                    seat.screenshot(path=str(shots / f"rate-{lang}-{size_name}.png"))
                seat.set_viewport_size(DESKTOP)
            fill(seat, kind, turns, "I was on the cliff path at ten.")
            send(seat)
        kinds = " ".join(" ".join(got["kinds"]) for _, got in measured)
        assert ("asks" if lang == "en" else "提问") in kinds  # questions are rated too
        assert max(got["lines"] for _, got in measured) >= 4
        seat.context.close()
        lobby.context.close()
