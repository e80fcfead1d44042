"""The seat, spectator, host and review pages as a game table: a roster with whose turn it
is and who is thinking, the stage and round, clue cards, forms that say what their choices
mean, an ending with every ballot and the truth, a live host page, a review with the
metrics in eval/, titles that tell pages apart, and error pages in the table's language."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.engine.decisions import CastVote, Speak
from jubensha.engine.events import (
    GameEnded,
    HostSpoke,
    Spoke,
    StageStarted,
    VictimOutcome,
    VoteCast,
)
from jubensha.engine.procedure import find_procedure
from jubensha.scripts.bundled import find_script
from jubensha.web.ending import ending
from jubensha.web.roster import progress, roster
from tests.web.web_helpers import DECISION, client, open_table, play_seat, seat_form

TITLE = re.compile(r"<title>(.*?)</title>", re.DOTALL)


def visible(page: str) -> str:
    page = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", page, flags=re.DOTALL)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def title(page: str) -> str:
    return html.unescape(TITLE.search(page).group(1).strip())


def wait_for_decision(web, invite: str) -> str:
    for _ in range(3000):
        page = web.get(invite).text
        if DECISION.search(page):
            return page
    raise AssertionError("no decision came")


@pytest.fixture(scope="module")
def mirage(tmp_path_factory) -> Iterator[dict]:
    """A MIRAGE table with a person at the first seat and spectators, played to the end."""
    runs = tmp_path_factory.mktemp("runs")
    with client(runs) as web:
        host, invites, host_page = open_table(web, seat_form(
            "lighthouse-keeper", "mirage", {0: "human"}, 4, spectators="on"))
        (person, invite), = invites.items()
        first = wait_for_decision(web, invite)
        live = web.get(invite + "/live").json()
        host_live = web.get(host + "/live").json()
        watch = re.search(r'id="spectator" href="([^"]+)"', host_page).group(1)
        play_seat(web, invite, limit_s=180)
        yield {"web": web, "host": host, "invite": invite, "person": person, "watch": watch,
               "first": first, "live": live, "host_live": host_live, "runs": runs}


def test_the_roster_names_people_and_agents_and_whose_turn_it_is(mirage):
    roster = mirage["live"]["roster"]
    assert "your turn" in roster and roster.count("an agent") == 3
    assert "a person" in roster and mirage["person"] in roster
    assert "answering…" in mirage["host_live"]["seats"]
    assert 'role="log"' in mirage["first"] and 'aria-live="polite"' in mirage["first"]


def test_a_seat_being_asked_is_shown_doing_it_until_it_has_answered(tmp_path):
    with client(tmp_path) as web:
        _, invites, _ = open_table(web, seat_form("lighthouse-keeper", "demo", {0: "human"}, 4))
        invite = next(iter(invites.values()))
        wait_for_decision(web, invite)
        table = next(iter(web.app.state.tables.tables.values()))
        agent, other = [name for name in table.plans if name not in invites][:2]
        speaking = table.on_ask(agent, Speak(kind="statement"))
        voting = table.on_ask(other, CastVote(candidates=[agent]))
        chips = web.get(invite + "/live").json()["roster"]
        assert re.search(re.escape(agent) + r".*?speaking…", chips, re.DOTALL)
        assert re.search(re.escape(other) + r".*?weighing the vote…", chips, re.DOTALL)
        speaking()
        voting()
        chips = web.get(invite + "/live").json()["roster"]
        assert "speaking…" not in chips and "weighing" not in chips


def test_before_the_first_stage_the_agents_are_shown_reading_their_scripts():
    chips = roster(["Ann", "Bob", "Cy"], people=["Ann"], asked=[], removed=["Cy"],
                   starting=True)
    assert [chip.state for chip in chips] == ["waiting", "starting", "removed"]
    later = roster(["Ann", "Bob"], people=["Ann"], asked=["Ann", "Bob"], removed=[], me="Ann")
    assert [(chip.state, chip.you) for chip in later] == [("turn", True), ("thinking", False)]
    assert [chip.colour for chip in later] == [0, 1]


def test_progress_names_the_stage_its_place_and_the_round():
    events = [StageStarted(index=0, stage="distribution", kind="act", title="Script"),
              StageStarted(index=1, stage="conversation", kind="conversation",
                           title="Open conversation"),
              HostSpoke(index=2, stage="conversation", round=2, text="Round 2")]
    script = find_script("lighthouse-keeper")
    shown = progress(find_procedure("mirage"), script, events)
    assert (shown.title, shown.stage, shown.stages, shown.round, shown.rounds) == (
        "Open conversation", 5, 7, 2, 5)
    assert progress(find_procedure("mirage"), script, []).stage == 0


def test_progress_counts_a_block_of_stages_once_per_act():
    events = [StageStarted(index=0, stage="questioning-act2", kind="questioning",
                           title="Questions")]
    shown = progress(find_procedure("demo"), find_script("halvard-observatory"), events)
    # act 1: sheets, introductions, clues, questions; act 2: clues, then its questions (the
    # 6th); then statements, the vote and the reveal
    assert (shown.stage, shown.stages) == (6, 9)


def test_the_live_page_says_the_stage_and_round(mirage):
    assert "stage" in mirage["live"]["progress"] and " of 7" in mirage["live"]["progress"]


def ballot_events() -> list:
    return [VoteCast(voter="Ann", target="Bob", audience=[]),
            VoteCast(voter="Bob", target="Cy", audience=[]),
            VoteCast(voter="Cy", target=None, audience=[]),
            GameEnded(outcomes=[VictimOutcome(victim=None, tally={"Bob": 1, "Cy": 1},
                                              eliminated=[], murderers=["Cy"],
                                              caught=False)],
                      winner="murderers", truth="Cy did it.")]


def test_the_ending_marks_each_ballot_and_the_readers_own_vote():
    shown = ending(ballot_events(), me="Bob")
    verdict, = shown.verdicts
    assert [(b.voter, b.target, b.right) for b in verdict.ballots] == [
        ("Ann", "Bob", False), ("Bob", "Cy", True), ("Cy", None, None)]  # abstained
    assert verdict.mine.target == "Cy" and shown.right is True
    assert verdict.tie and shown.truth == "Cy did it."
    assert ending(ballot_events()[:-1]) is None  # no ballots before the reveal
    assert ending(ballot_events(), me="Ann").right is False


def test_a_weighed_vote_says_each_suspects_votes_suspicion_and_score():
    extra = {"mirage": {"verdicts": [{"victim": None, "votes": {"Bob": 1, "Cy": 1},
                                      "scores": {"Bob": 7.0, "Cy": 9.0},
                                      "suspicion": {"Bob": 3, "Cy": 5},
                                      "eliminated": ["Cy"]}]}}
    events = ballot_events()
    events[-1] = events[-1].model_copy(update={"outcomes": [VictimOutcome(
        victim=None, tally={"Bob": 1, "Cy": 1}, eliminated=["Cy"], murderers=["Cy"],
        caught=True)]})
    verdict, = ending(events, extra=extra).verdicts
    assert [(s.seat, s.votes, s.suspicion, s.score) for s in verdict.scores] == [
        ("Cy", 1, 5.0, 9.0), ("Bob", 1, 3.0, 7.0)]
    assert not verdict.tie


def test_the_seat_page_ends_with_the_reveal_the_ballots_and_links(mirage):
    web, invite = mirage["web"], mirage["invite"]
    page = web.get(invite).text
    text = visible(page)
    assert "The reveal" in text and "Everyone's ballots" in text and "The murderer" in text
    assert re.search(r"You (voted for .+?|abstained) · (right|wrong)", text)
    assert "Suspect Votes Doubt − trust Score" in text  # MIRAGE weighs the vote
    assert "Nothing for you to answer" not in text and 'id="decision-form"' not in page
    assert f'href="{invite}/review"' in page and "Play again" in text
    assert web.get(invite + "/review").status_code == 200


def test_the_clue_cards_a_seat_has_seen_are_gathered_and_counted(mirage):
    page = mirage["web"].get(mirage["invite"]).text
    cards = re.findall(r'<article class="card', page)
    count = int(re.search(r'id="clue-count" class="count">(\d+)<', page).group(1))
    assert cards and len(cards) == count
    assert "only you" in visible(page)  # the seat's own clue card is marked as private


def test_the_forms_say_what_their_choices_mean(tmp_path):
    with client(tmp_path) as web:
        _, invites, _ = open_table(web, seat_form("lighthouse-keeper", "mirage", {0: "human"}, 4))
        invite = next(iter(invites.values()))
        seen: dict[str, str] = {}
        while {"speak", "rate_round", "turn", "accuse", "vote"} - set(seen):
            page = wait_for_decision(web, invite)
            kind = re.search(r'data-kind="(\w+)"', page).group(1)
            seen.setdefault(kind, page)
            decision = DECISION.search(page).group(1)
            web.post(invite, data={"decision": decision, "text": "Hm.", "trust": "1",
                                   "doubt": "1", "target": "1", "action": "ask",
                                   "question1": "Why?"})
        assert 'maxlength="4000"' in seen["speak"] and 'data-counter="c-text"' in seen["speak"]
        rating = seen["rate_round"]  # a round's statements, each on a line of its own
        assert "0 · none" in rating and "2 · strong" in rating
        assert 'name="trust0"' in rating and 'name="doubt0"' in rating
        assert "Each starts at 1 · some" in rating
        assert 'class="when when-investigate"' in seen["turn"]
        assert 'class="when when-ask"' in seen["turn"]
        for kind in ("accuse", "vote"):
            assert '<option value="" disabled selected>— choose —</option>' in seen[kind]
            assert "The clue cards you have seen" in seen[kind]


def test_a_vote_without_a_choice_is_refused_with_the_reason(tmp_path):
    with client(tmp_path) as web:
        _, invites, _ = open_table(web, seat_form("lighthouse-keeper", "demo", {0: "human"}, 4))
        invite = next(iter(invites.values()))
        while True:
            page = wait_for_decision(web, invite)
            decision = DECISION.search(page).group(1)
            if 'data-kind="vote"' in page:
                break
            web.post(invite, data={"decision": decision, "text": "x", "target": "1",
                                   "question1": "q", "question2": "q", "question3": "q"})
        empty = web.post(invite, data={"decision": decision, "target": ""})
        assert empty.status_code == 422 and "choose one of the options" in empty.text


def test_the_host_page_is_live_and_links_the_review_after_the_end(mirage):
    web, host = mirage["web"], mirage["host"]
    live = web.get(host + "/live").json()
    assert live["status"] == "ended" and "invite" in live["seats"]
    page = web.get(host).text
    review = re.search(r'id="host-review" href="([^"]+)"', page).group(1)
    assert web.get(review).status_code == 200
    assert 'class="small copy"' in page and "Play again" in page


def test_removing_a_person_is_confirmed_and_their_page_is_told(tmp_path):
    with client(tmp_path) as web:
        host, invites, _ = open_table(web, seat_form("lighthouse-keeper", "demo", {0: "human"}, 4))
        (person, invite), = invites.items()
        wait_for_decision(web, invite)
        asked = web.post(host + "/remove", data={"seat": person})
        assert "Remove a person" in title(asked.text) and 'value="yes"' in asked.text
        assert "removed you" not in web.get(invite + "/live").json()["progress"]
        web.post(host + "/remove", data={"seat": person, "confirm": "yes"})
        assert "removed you" in web.get(invite + "/live").json()["progress"]


def test_the_spectator_never_sees_a_persons_ratings_as_agent_suspicion(mirage):
    web, person = mirage["web"], mirage["person"]
    table = next(iter(web.app.state.tables.tables.values()))
    owners = re.findall(r'data-owner="([^"]+)"', web.get(mirage["watch"]).text)
    assert owners and person not in owners and table.ended
    review = web.get(mirage["watch"] + "/review").text
    assert person in re.findall(r'data-owner="([^"]+)"', review)


def test_the_review_shows_metrics_ballots_people_and_the_murderer(mirage):
    web, runs = mirage["web"], mirage["runs"]
    folder, = [path for path in runs.iterdir() if path.is_dir()]
    before = visible(web.get(f"/review/{folder.name}").text)
    assert "No metrics yet" in before
    from jubensha.cli import app

    scored = CliRunner().invoke(app, ["eval", "identification", str(folder)])
    assert scored.exit_code == 0, scored.output
    page = web.get(f"/review/{folder.name}").text
    text = visible(page)
    assert "identification" in text and "accuracy =" in text
    assert "@ none" not in text and f"{mirage['person']} a person" in text
    assert "★ murderer" in text and "Everyone's ballots" in text
    assert re.fullmatch(r"Review · The Last Light on Gull Rock · \d{4}-\d\d-\d\d \d\d:\d\d",
                        title(page)), title(page)


def test_past_runs_are_listed_with_what_was_played(mirage):
    text = visible(mirage["web"].get("/").text)
    assert "The Last Light on Gull Rock" in text and "mirage" in text
    assert "1 person, 3 agents" in text


def test_every_page_has_a_title_of_its_own(mirage, tmp_path):
    web = mirage["web"]
    folder, = [path for path in mirage["runs"].iterdir() if path.is_dir()]
    pages = {"lobby": "/", "new": "/new?script=lighthouse-keeper&procedure=demo",
             "host": mirage["host"], "seat": mirage["invite"], "watch": mirage["watch"],
             "review": f"/review/{folder.name}", "runs": "/runs", "missing": "/seat/nothing"}
    titles = {name: title(web.get(path).text) for name, path in pages.items()}
    with client(tmp_path, password="pw") as locked:
        titles["login"] = title(locked.get("/").text)
    assert all(titles.values()) and len(set(titles.values())) == len(titles), titles
    assert titles["seat"].startswith(mirage["person"])


def test_errors_are_pages_in_the_tables_language_with_a_way_back(tmp_path):
    with client(tmp_path) as web:
        missing = web.get("/seat/no-such-link")
        assert missing.status_code == 404 and "text/html" in missing.headers["content-type"]
        assert "This link opens nothing here" in missing.text and 'href="/"' in missing.text
        chinese = web.get("/seat/no-such-link", headers={"Accept-Language": "zh-CN,zh;q=0.9"})
        assert "这个链接在这里打不开" in chinese.text and 'lang="zh-Hans"' in chinese.text
        assert web.get("/seat/no-such-link/live").json() == {"detail": "Not Found"}
        _, invites, _ = open_table(web, seat_form("tingsong-tea-estate", "demo", {0: "human"}, 5))
        invite = next(iter(invites.values()))
        wrong = web.post(invite, data={"decision": "not-a-number"})
        assert wrong.status_code == 422 and "无法使用所提交的内容" in wrong.text
        assert f'href="{invite}"' in wrong.text and "返回" in wrong.text


def test_a_chinese_table_uses_chinese_punctuation(tmp_path):
    with client(tmp_path) as web:
        host, invites, _ = open_table(web, seat_form("tingsong-tea-estate", "demo",
                                                     {0: "human"}, 5))
        seat_page = wait_for_decision(web, next(iter(invites.values())))
        chrome = re.sub(r'<ol id="events".*?</ol>|<pre id="sheet".*?</pre>', " ", seat_page,
                        flags=re.DOTALL)
        assert "流程：demo" in visible(web.get(host).text)
        for page in (web.get(host).text, chrome):
            text = re.sub(r"https?://\S+", " ", visible(page))
            assert not re.findall(r"[\u4e00-\u9fff]\s?[:;,!?()]|[()]\s?[\u4e00-\u9fff]",
                                  text), text


def test_chinese_and_english_wording_is_neutral():
    from jubensha.web.strings import words

    for lang, pattern in (("en", r"\b(he|she|his|her|him|hers)\b"), ("zh", r"(?<!其)[他她]")):
        found = {key: value for key, value in words(lang).items()
                 if re.search(pattern, value, re.IGNORECASE)}
        assert not found, found


def test_every_page_string_exists_in_both_languages_without_ascii_colons_in_chinese():
    import yaml

    import jubensha.web

    source = Path(jubensha.web.__file__).parent / "templates" / "strings.yaml"
    table = yaml.safe_load(source.read_text("utf-8"))
    assert set(table["en"]) == set(table["zh"])
    for key, value in table["zh"].items():
        assert not re.search(r"[\u4e00-\u9fff]\s?[:;,]|[:;,]\s?[\u4e00-\u9fff]", value), key


def test_a_speech_being_written_shows_on_the_seat_spectator_and_host_pages(tmp_path):
    """Speech streams to every live page while it is written; a private exchange only to
    the pages of those who hear it; the final line replaces it."""
    from jubensha.engine.drafts import Draft

    with client(tmp_path) as web:
        form = seat_form("lighthouse-keeper", "demo", {0: "human"}, 4, spectators="on")
        host, invites, page = open_table(web, form)
        invite = next(iter(invites.values()))
        watch = re.search(r'id="spectator" href="([^"]+)"', page).group(1)
        wait_for_decision(web, invite)
        table = next(iter(web.app.state.tables.tables.values()))
        agent, other = [name for name in table.plans if name not in invites][:2]
        table.on_draft(Draft(agent, Speak(kind="statement"), "I was in the <b>kitchen</b>"))
        for path in (invite, watch, host):
            shown = web.get(path + "/live").json()["draft"]
            assert agent in shown and "I was in the &lt;b&gt;kitchen&lt;/b&gt;" in shown
        table.on_draft(Draft(other, Speak(kind="answer"), "Only for two", [other, agent]))
        assert "Only for two" not in web.get(invite + "/live").json()["draft"]
        assert "Only for two" not in web.get(watch + "/live").json()["draft"]
        table.record(Spoke(index=len(table.events), speaker=agent, kind="statement",
                           text="I was in the kitchen."))
        assert agent not in web.get(watch + "/live").json()["draft"]
