"""What a new player meets in the browser, over HTTP: the lobby and the set-up page in the
browser's language, two live tables told apart (when each started, who sits there), a
folder still being played listed as playing, every set-up field labelled with its seat,
a warning before a script is framed in another language, ``HEAD`` and a favicon on every
server, error pages without the server's English status line; and the ending: one
murderer wins alone, an abstention is neither right nor wrong, the truth is told once,
and a seat rated once is a point on its chart."""

from __future__ import annotations

import html
import json
import re

from jubensha.engine.events import GameEnded, Rated, VictimOutcome, VoteCast
from jubensha.web.charts import charts
from jubensha.web.ending import ending
from jubensha.web.pages import Pages
from jubensha.web.timeline import timeline
from tests.web.web_helpers import client, open_table, play_seat, seat_form


def visible(page: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))


ZH = {"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.5"}


def test_the_lobby_and_the_set_up_follow_the_browsers_language(tmp_path):
    with client(tmp_path) as web:
        lobby = web.get("/", headers=ZH).text
        assert 'lang="zh-Hans"' in lobby and "开一桌" in lobby and "A new table" not in lobby
        assert "英文" in lobby  # the scripts' languages named, not coded
        assert "A new table" in web.get("/", headers={"Accept-Language": "en-GB"}).text
        new = web.get("/new?script=lighthouse-keeper&procedure=demo", headers=ZH).text
        assert "由谁扮演" in new and "剧本本身" in new
        assert "历史对局" in web.get("/runs", headers=ZH).text


def test_every_seat_field_of_the_set_up_has_a_label_naming_its_seat(tmp_path):
    with client(tmp_path) as web:
        page = web.get("/new?script=lighthouse-keeper&procedure=demo").text
    fields = re.findall(r'<select id="((?:arch|model)\d+)"', page)
    assert len(fields) == 8
    for field in fields:
        label = re.search(rf'<label class="sr-only" for="{field}">([^<]+)</label>', page)
        assert label is not None, field
    assert '<label class="sr-only" for="arch1">Nora Vance: played by</label>' in page
    assert '<label class="sr-only" for="model3">Agnes Pike: model</label>' in page


def test_choosing_another_language_than_the_scripts_is_warned_of(tmp_path):
    with client(tmp_path) as web:
        new = visible(web.get("/new?script=lighthouse-keeper&procedure=demo").text)
        assert "stays in English, the language it is written in" in new
        _, invites, _ = open_table(web, seat_form("lighthouse-keeper", "demo", {0: "human"}, 4,
                                                  language="zh"))
        invite = next(iter(invites.values()))
        for _ in range(500):
            seat = web.get(invite).text
            if 'id="sheet"' in seat:
                break
        assert "这个剧本以英文写成，所以你的剧本和线索卡都是英文" in seat
        _, invites, _ = open_table(web, seat_form("lighthouse-keeper", "demo", {0: "human"}, 4))
        invite = next(iter(invites.values()))
        assert 'id="sheet-language"' not in web.get(invite).text


def test_live_tables_say_when_they_started_and_who_sits_there(tmp_path):
    with client(tmp_path) as web:
        open_table(web, seat_form("lighthouse-keeper", "mirage", {0: "human"}, 4))
        open_table(web, seat_form("lighthouse-keeper", "demo", {2: "human"}, 4))
        lobby = web.get("/").text
        rows = [visible(row) for row in re.findall(r'<li class="live-table">(.*?)</li>', lobby,
                                                   re.DOTALL)]
        assert len(rows) == 2 and rows[0] != rows[1]
        assert any("People: Tom Hale" in row and "mirage" in row for row in rows)
        assert any("People: Samuel Reed" in row for row in rows)
        assert all(re.search(r"started \d{4}-\d\d-\d\d \d\d:\d\d UTC", row) for row in rows)
        assert all("agents: naive · scripted ×3" in row for row in rows)
        runs = visible(re.search(r'<table class="grid runs.*?</table>', lobby, re.DOTALL)[0])
        assert "playing" in runs and "unfinished" not in runs
        review = visible(web.get(re.search(r'href="(/review/[^"]+)"', lobby)[1]).text)
        assert "playing" in review and "unfinished" not in review


def test_head_answers_every_page_and_the_favicon_is_served(tmp_path):
    with client(tmp_path) as web:
        host, invites, _ = open_table(web, seat_form("lighthouse-keeper", "demo",
                                                     {0: "human"}, 4, spectators="on"))
        for path in ("/", "/runs", host, next(iter(invites.values())), "/static/style.css",
                     "/favicon.ico"):
            head, got = web.head(path), web.get(path)
            assert head.status_code == got.status_code == 200, path
            assert head.content == b"" and head.headers["content-type"] == \
                got.headers["content-type"]
        assert web.head("/seat/nothing").status_code == 404
        stream = web.head(next(iter(invites.values())) + "/stream")  # ends with its head
        assert stream.status_code == 200 and stream.content == b""
        assert stream.headers["content-type"].startswith("text/event-stream")
        icon = web.get("/favicon.ico")
        assert icon.headers["content-type"].startswith("image/svg+xml")
        assert 'rel="icon" href="/static/favicon.svg"' in web.get("/").text


def main_text(page: str) -> str:
    return html.unescape(visible(re.search(r"<main.*?</main>", page, re.DOTALL)[0]))


def test_error_pages_say_it_in_the_readers_language_only(tmp_path):
    with client(tmp_path) as web:
        page = web.get("/seat/no-such-link", headers=ZH).text
        assert "这个链接在这里打不开" in page and "Not Found" not in page
        assert "Method Not Allowed" not in web.post("/", headers=ZH).text
        for path in ("/new?script=no-such&procedure=demo",
                     "/new?script=lighthouse-keeper&procedure=no-such"):
            shown = main_text(web.get(path, headers=ZH).text)
            assert "没有这个" in shown and not re.search(r"[A-Za-z]{2,}", shown), shown
            assert "There is no such" in main_text(web.get(path).text)
        form = seat_form("lighthouse-keeper", "demo", {}, 4, language="fr")
        shown = main_text(web.post("/tables", data=form, headers=ZH).text)
        assert "语言只能是英文" in shown and "must be" not in shown
        form = {**seat_form("lighthouse-keeper", "demo", {}, 4), "seed": "x"}
        assert "不是数字" in main_text(web.post("/tables", data=form, headers=ZH).text)


CHINESE_BESIDE_ASCII_BRACKET = re.compile(r"[\u4e00-\u9fff][ ]?[()]|[()][ ]?[\u4e00-\u9fff]")


def test_chinese_pages_use_full_width_brackets(tmp_path):
    with client(tmp_path) as web:
        for path in ("/", "/new?script=lighthouse-keeper&procedure=demo"):
            page = web.get(path, headers=ZH).text
            found = CHINESE_BESIDE_ASCII_BRACKET.findall(html.unescape(visible(page)))
            assert found == [], (path, found)
            assert "（" in page
    vote = {"type": "vote", "candidates": ["Ann", "Bob"], "victim": None, "accused": []}
    card = {"title": "气窗", "text": "绳子解开了。", "caption": "", "location": "", "found_by": "",
            "only_me": False}
    shown = Pages().fragment("decision.html", "zh", pending={"id": 1, "decision": vote},
                             form={}, error="", cards=[card], token="t", table=None,
                             gone=False, colours={})
    assert "你见过的线索卡（1）" in visible(shown)


def vote(voter: str, target: str | None) -> VoteCast:
    return VoteCast(voter=voter, target=target, audience=[])


def ended(murderers: list[str]) -> GameEnded:
    outcome = VictimOutcome(victim=None, eliminated=["Bob"], murderers=murderers, caught=False,
                            tally={"Bob": 1})
    return GameEnded(winner="murderers", outcomes=[outcome], truth="Ann did it.",
                     audience="public")


def test_one_murderer_wins_alone_and_an_abstention_is_neither_right_nor_wrong():
    events = [vote("Ann", "Bob"), vote("Bob", None), vote("Cy", "Ann"), ended(["Ann"])]
    mine = ending(events, me="Bob")
    assert mine is not None and mine.winner_key == "murderer"
    assert [b.right for b in mine.verdicts[0].ballots] == [None, None, True]  # Ann's: hers
    assert mine.right is None  # Bob named nobody
    shown = visible(Pages().fragment("ending.html", "en", ending=mine, review_link=None))
    assert "The murderer wins." in shown and "You abstained" in shown
    assert "Bob abstain — " in shown and "abstain ✗" not in shown
    zh = visible(Pages().fragment("ending.html", "zh", ending=mine, review_link=None))
    assert "弃权 ✗" not in zh and "弃权 —" in zh
    two = ending([vote("Cy", "Bob"), ended(["Ann", "Dee"])])
    assert two is not None and two.winner_key == "murderers"
    assert "The murderers win." in Pages().fragment("ending.html", "en", ending=two,
                                                     review_link=None)


def test_the_ending_is_told_by_its_panel_not_again_in_the_conversation():
    entries = timeline([vote("Ann", "Bob"), ended(["Ann"])], "en", ["Ann", "Bob", "Cy"])
    shown = " ".join(f"{entry.speaker} {entry.text}" for entry in entries)
    for told in ("Ann did it.", "The murderer wins.", "eliminated", "votes:", "The murder"):
        assert told not in shown


def test_a_seat_rated_once_is_a_point_on_the_chart():
    rated = Rated(index=3, rater="Ann", speaker="Bob", statement=1, trust=0, doubt=2,
                  audience=[])
    drawn = Pages().fragment("charts.html", "en", charts=charts([rated], [], ["Ann", "Bob"]))
    assert len(re.findall(r"<circle ", drawn)) == 1 and "Bob" in drawn


def test_a_whole_game_ends_with_a_single_murderer_winning_or_losing_in_the_singular(tmp_path):
    with client(tmp_path) as web:
        _, invites, _ = open_table(web, seat_form("lighthouse-keeper", "demo", {0: "human"}, 4))
        invite = next(iter(invites.values()))
        play_seat(web, invite)
        page = visible(web.get(invite).text)
    assert "The murderers win." not in page
    assert "The murderer wins." in page or "The civilians win." in page


def test_a_murderers_own_ballot_is_neither_right_nor_wrong():
    events = [vote("Ann", "Bob"), vote("Bob", "Ann"), ended(["Ann"])]
    mine = ending(events, me="Ann")
    assert mine is not None and [b.right for b in mine.verdicts[0].ballots] == [None, True]
    assert mine.right is None  # no "Your vote was wrong." for the murderer
    shown = html.unescape(visible(Pages().fragment("ending.html", "en", ending=mine,
                                                   review_link=None)))
    assert "You voted for Bob" in shown and "✗ wrong" not in shown
    assert "Ann Bob — the murderer's own" in shown and "Bob Ann ✓ right" in shown


def test_a_tie_of_votes_is_not_followed_by_the_most_votes_rule():
    outcome = VictimOutcome(victim=None, eliminated=[], murderers=["Ann"], caught=False,
                            tally={"Ann": 1, "Bob": 1})
    tie = ending([vote("Ann", "Bob"), vote("Bob", "Ann"),
                  GameEnded(winner="murderers", outcomes=[outcome], audience="public")])
    assert tie is not None and tie.verdicts[0].tie
    for lang, told, rule in (("en", "A tie for the most votes", "the most votes, by"),
                             ("zh", "最高票并列", "得票最多者出局")):
        shown = visible(Pages().fragment("ending.html", lang, ending=tie, review_link=None))
        assert told in shown and rule not in shown and "最高分" not in shown, shown


def set_started(folder, when: str) -> None:
    meta = json.loads((folder / "meta.json").read_text())
    (folder / "meta.json").write_text(json.dumps({**meta, "started": when}))


def test_the_lobby_lists_only_live_tables_each_list_newest_first_in_plain_words(tmp_path):
    with client(tmp_path) as web:
        _, invites, _ = open_table(web, seat_form("lighthouse-keeper", "demo", {0: "human"}, 4))
        play_seat(web, next(iter(invites.values())))  # this table has ended
        open_table(web, seat_form("lighthouse-keeper", "mirage", {1: "human"}, 4))
        open_table(web, seat_form("lighthouse-keeper", "demo", {2: "human"}, 4))
        folders = list(tmp_path.iterdir())
        ended_folder, = [f for f in folders if (f / "result.json").exists()]
        first, = [f for f in folders if '"mirage"' in (f / "meta.json").read_text()]
        second, = [f for f in folders if f not in (ended_folder, first)]
        set_started(ended_folder, "2026-01-01T10:00:00+00:00")
        set_started(first, "2026-01-03T10:00:00+00:00")  # started after the second
        set_started(second, "2026-01-02T10:00:00+00:00")
        lobby = web.get("/").text
    live = [visible(row) for row in re.findall(r'<li class="live-table">(.*?)</li>', lobby,
                                               re.DOTALL)]
    assert len(live) == 2 and "ended" not in " ".join(live)
    assert "2026-01-03 10:00" in live[0] and "2026-01-02 10:00" in live[1]
    runs = visible(re.search(r'<table class="grid runs.*?</table>', lobby, re.DOTALL)[0])
    assert runs.index("2026-01-03") < runs.index("2026-01-02") < runs.index("2026-01-01")
    assert "1 person, 3 agents" in runs and "1 people" not in runs


def test_the_host_page_says_what_each_agent_is_doing_as_the_other_pages_do():
    from types import SimpleNamespace

    from jubensha.runs.play import SeatPlan
    from jubensha.web.roster import SeatChip

    chips = [SeatChip(name="Ann", colour=0, person=False, state="thinking", doing="ask"),
             SeatChip(name="Bob", colour=1, person=False, state="thinking", doing="speak"),
             SeatChip(name="Cy", colour=2, person=True, state="turn")]
    table = SimpleNamespace(plans={c.name: SeatPlan(name=c.name, architecture="naive",
                                                    model="scripted") for c in chips},
                            seat_tokens={}, ios={}, ended=False, host_token="h")
    for lang, ask, speak in (("en", "thinking of a question…", "speaking…"),
                             ("zh", "正在想问题…", "正在发言…")):
        host = visible(Pages().fragment("host_seats.html", lang, roster=chips, table=table,
                                        base=""))
        seat = visible(Pages().fragment("roster.html", lang, roster=chips))
        for shown in (host, seat):
            assert ask in shown and speak in shown, shown
        assert "thinking…" not in host and "思考中" not in host


def test_a_search_reads_as_a_sentence_with_the_clue_named():
    from jubensha.engine.events import Investigated

    searched = Investigated(seat="Agnes Pike", location="Kitchen", clue_ids=["c1"],
                            clue_titles=["The rolling pin"], audience="public")
    empty = Investigated(seat="Agnes Pike", location="Boathouse", clue_ids=[], clue_titles=[],
                         audience="public")
    texts = [e.text for e in timeline([searched, empty], "en", ["Agnes Pike"])]
    assert texts == ["Agnes Pike searched Kitchen and found the clue “The rolling pin”.",
                     "Agnes Pike searched Boathouse and found nothing."]
    zh = [e.text for e in timeline([searched], "zh", ["Agnes Pike"])]
    assert zh == ["Agnes Pike搜查了Kitchen，发现了线索「The rolling pin」。"]


def test_the_set_up_says_which_language_the_table_plays_in_when_the_page_differs(tmp_path):
    with client(tmp_path) as web:
        zh = web.get("/new?script=lighthouse-keeper&procedure=demo", headers=ZH).text
        en = web.get("/new?script=lighthouse-keeper&procedure=demo").text
    default = re.search(r'<p class="warn note" id="language-default"( hidden)?>(.*?)</p>', zh)
    assert default is not None and default[1] is None  # shown to a Chinese browser
    assert "不作选择时，这一桌用剧本的语言（英文）进行" in default[2]
    assert 'id="language-default" hidden' in en
    warning = re.search(r'id="language-warning" hidden>(.*?)</p>', en)[1]
    assert "will be in Chinese, but the mystery stays in English" in html.unescape(warning)
