"""Playing at a table in the browser: a person answers every kind of decision from the seat
page, with the terminal's rules, and the game writes an ordinary run folder."""

from __future__ import annotations

from jubensha.engine.events import Failure, Rated, Spoke
from jubensha.runlog.folder import read_run
from tests.web.web_helpers import DECISION, client, open_table, play_seat, seat_form


def test_a_person_plays_the_demo_to_the_reveal_and_the_run_folder_is_ordinary(tmp_path):
    with client(tmp_path) as web:
        assert "lighthouse-keeper" in web.get("/").text
        assert "Choose the seats" in web.get("/").text
        seats = web.get("/new", params={"script": "lighthouse-keeper", "procedure": "demo"})
        assert seats.status_code == 200 and "a person" in seats.text
        _, invites, _host_page = open_table(web, seat_form("lighthouse-keeper", "demo", {0: "human"}, 4))
        (person, invite), = invites.items()
        kinds = play_seat(web, invite, text="I heard the foghorn at ten.")
        assert {"speak", "ask", "vote"} <= set(kinds)
        assert "The reveal" in web.get(invite).text
    run_dir, = [p for p in tmp_path.iterdir() if p.is_dir()]
    run = read_run(run_dir)
    assert run.finished and run.meta.seats[person].architecture == "human"
    said = [e.text for e in run.events if isinstance(e, Spoke) and e.speaker == person]
    assert "I heard the foghorn at ten." in said
    assert (run_dir / "transcript.md").is_file()


def test_every_mirage_decision_kind_is_answered_from_the_page(tmp_path):
    with client(tmp_path) as web:
        _, invites, _ = open_table(web, seat_form("lighthouse-keeper", "mirage", {1: "human"}, 4))
        (person, invite), = invites.items()
        kinds = play_seat(web, invite, limit_s=120)
    assert {"speak", "turn", "rate_round", "accuse", "vote"} <= set(kinds)
    assert "rate" not in kinds  # a person rates a round's statements on one form
    run = read_run(next(p for p in tmp_path.iterdir() if p.is_dir()))
    assert run.finished
    assert not [e for e in run.events if isinstance(e, Failure) and e.seat == person]
    rated = [e for e in run.events if isinstance(e, Rated) and e.rater == person]
    said = {e.index for e in run.events if isinstance(e, Spoke) and e.speaker != person
            and e.audience == "public" and e.kind != "accusation"}
    assert rated and {e.statement for e in rated} <= said
    assert kinds.count("rate_round") < len(rated)  # fewer forms than statements rated


def test_a_round_s_form_keeps_each_rating_it_is_not_given_at_one(tmp_path):
    from jubensha.engine.decisions import RateRound, Ratings
    from jubensha.web.seatio import parse_answer

    statements = [Spoke(index=i, speaker=name, kind="statement", text="...")
                  for i, name in enumerate(["Ann", "Bob", "Cy"])]
    answer = parse_answer(RateRound(statements=statements), {"trust1": "2", "doubt1": "0"},
                          "en")
    assert isinstance(answer, Ratings)
    assert [(r.trust, r.doubt) for r in answer.ratings] == [(1, 1), (2, 0), (1, 1)]


def test_invalid_answers_are_refused_with_the_reason_and_the_decision_stays(tmp_path):
    with client(tmp_path) as web:
        _, invites, _ = open_table(web, seat_form("lighthouse-keeper", "demo", {0: "human"}, 4))
        invite = next(iter(invites.values()))
        page = _wait_for_decision(web, invite)
        decision = DECISION.search(page).group(1)
        empty = web.post(invite, data={"decision": decision, "text": "   "})
        assert empty.status_code == 422 and "please write something" in empty.text
        stale = web.post(invite, data={"decision": "999", "text": "hello"})
        assert stale.status_code == 422 and "already answered" in stale.text
        assert DECISION.search(web.get(invite).text).group(1) == decision
        ok = web.post(invite, data={"decision": decision, "text": "hello"},
                      follow_redirects=False)
        assert ok.status_code == 303


def test_a_vote_for_someone_not_offered_is_refused(tmp_path):
    with client(tmp_path) as web:
        _, invites, _ = open_table(web, seat_form("lighthouse-keeper", "demo", {0: "human"}, 4))
        invite = next(iter(invites.values()))
        while True:
            page = _wait_for_decision(web, invite)
            decision = DECISION.search(page).group(1)
            if 'data-kind="vote"' in page:
                break
            web.post(invite, data={"decision": decision, "text": "x", "target": "1",
                                   "question1": "q"})
        wrong = web.post(invite, data={"decision": decision, "target": "Nobody Here"})
        assert wrong.status_code == 422 and "choose one of the options" in wrong.text
        beyond = web.post(invite, data={"decision": decision, "target": "99"})
        assert beyond.status_code == 422
        abstain = web.post(invite, data={"decision": decision, "target": "0"},
                           follow_redirects=False)
        assert abstain.status_code == 303


def test_a_removed_person_is_played_by_the_table_defaults(tmp_path):
    with client(tmp_path) as web:
        host, invites, _ = open_table(web, seat_form("lighthouse-keeper", "demo", {0: "human"}, 4))
        (person, invite), = invites.items()
        _wait_for_decision(web, invite)
        asked = web.post(host + "/remove", data={"seat": person})
        assert asked.status_code == 200 and "Remove" in asked.text
        assert "removed you" not in web.get(invite).text  # not before the host confirms
        web.post(host + "/remove", data={"seat": person, "confirm": "yes"})
        assert "removed you" in web.get(invite).text
        _wait_until_ended(web, invite)
    run = read_run(next(p for p in tmp_path.iterdir() if p.is_dir()))
    assert run.finished
    assert any(isinstance(e, Failure) and e.seat == person and "HumanLeft" in e.error
               for e in run.events)


def test_two_people_play_one_table(tmp_path):
    with client(tmp_path) as web:
        _, invites, _ = open_table(web, seat_form("lighthouse-keeper", "demo",
                                                  {0: "human", 2: "human"}, 4))
        assert len(invites) == 2
        (first, one), (second, two) = invites.items()
        done: set[str] = set()
        while len(done) < 2:
            for name, invite in ((first, one), (second, two)):
                page = web.get(invite).text
                found = DECISION.search(page)
                if found:
                    web.post(invite, data={"decision": found.group(1), "text": f"{name} here",
                                           "target": "1", "question1": "q", "reason": ""})
                elif web.get(invite + "/live").json()["ended"]:
                    done.add(name)
    run = read_run(next(p for p in tmp_path.iterdir() if p.is_dir()))
    # the scripted seats may repeat what they heard ("Tom Hale here"); each person said their own
    speakers = {e.speaker for e in run.events
                if isinstance(e, Spoke) and e.text == f"{e.speaker} here"}
    assert speakers == {first, second}


def test_a_chinese_table_speaks_chinese(tmp_path):
    with client(tmp_path) as web:
        _, invites, _ = open_table(web, seat_form("tingsong-tea-estate", "demo", {0: "human"}, 5))
        invite = next(iter(invites.values()))
        page = _wait_for_decision(web, invite)
        assert 'lang="zh-Hans"' in page and "你的角色剧本" in page and "发送" in page
        bad = web.post(invite, data={"decision": DECISION.search(page).group(1), "text": ""})
        assert "请填写内容" in bad.text


def _wait_for_decision(web, invite: str) -> str:
    for _ in range(2000):
        page = web.get(invite).text
        if DECISION.search(page):
            return page
    raise AssertionError("no decision came")


def _wait_until_ended(web, invite: str) -> None:
    for _ in range(5000):
        if web.get(invite + "/live").json()["ended"]:
            return
    raise AssertionError("the game did not end")


def test_a_browser_game_appears_in_runs_report_like_any_other(tmp_path):
    from typer.testing import CliRunner

    from jubensha.cli import app

    with client(tmp_path) as web:
        _, invites, _ = open_table(web, seat_form("lighthouse-keeper", "demo", {0: "human"}, 4))
        play_seat(web, next(iter(invites.values())))
    report = CliRunner().invoke(app, ["runs", "report", str(tmp_path), "--format", "json"])
    assert report.exit_code == 0, report.output
    assert '"human+naive"' in report.output and '"finished": 1' in report.output
