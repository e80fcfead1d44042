"""Tables survive a restart of the server: the same links open the same seats, a game left
unfinished goes on from where it stopped (the server's resumer answers the model calls from
the log and the person's moves from theirs, then plays on live), an
ended table still shows its ending, and a server that cannot continue a game shows it as
interrupted instead of answering 'not found'. A resumed table keeps the time it started.
No link is written into a run folder."""

from __future__ import annotations

import json
import re

from jubensha.engine.events import Spoke
from jubensha.runlog.folder import read_run
from jubensha.web.restore import resume_table
from jubensha.web.tables import TableHost
from tests.web.web_helpers import (
    DECISION,
    answer_for,
    client,
    open_table,
    play_seat,
    seat_form,
)

KIND = re.compile(r'data-kind="(\w+)"')


def answer_some(web, invite: str, count: int) -> list[str]:
    """Answer ``count`` decisions of the seat, each with a text of its own."""
    said = []
    for number in range(count):
        page = wait_for_decision(web, invite)
        decision = DECISION.search(page).group(1)
        kind = KIND.search(page).group(1)
        text = f"Answer number {number} from the person."
        said.append(text)
        reply = web.post(invite, data={"decision": decision, **answer_for(kind, text)},
                         follow_redirects=False)
        assert reply.status_code == 303, reply.text
    return said


def wait_for_decision(web, invite: str) -> str:
    for _ in range(3000):
        page = web.get(invite).text
        if DECISION.search(page):
            return page
    raise AssertionError("no decision came")


def host(runs, state, resumer=None) -> TableHost:
    return TableHost(runs, state=state, resumer=resumer)


def test_an_unfinished_table_goes_on_after_a_restart_with_the_same_links(tmp_path):
    runs, state = tmp_path / "runs", tmp_path / "state"
    with client(runs, host(runs, state)) as web:
        host_page, invites, _ = open_table(web, seat_form("lighthouse-keeper", "demo",
                                                          {0: "human"}, 4, spectators="on"))
        (person, invite), = invites.items()
        said = answer_some(web, invite, 2)
        waiting = DECISION.search(wait_for_decision(web, invite)).group(1)
        watch = re.search(r'id="spectator" href="([^"]+)"', web.get(host_page).text).group(1)
    folder, = runs.iterdir()
    assert not (folder / "result.json").exists()
    before = [what(event) for event in read_run(folder).events]
    meta = json.loads((folder / "meta.json").read_text())
    (folder / "meta.json").write_text(json.dumps({**meta, "started": "2026-01-02T09:30:00+00:00"}))

    with client(runs, host(runs, state, resume_table)) as web:
        page = wait_for_decision(web, invite)
        assert person in page and DECISION.search(page).group(1) == waiting
        assert "started 2026-01-02 09:30 UTC" in web.get("/").text  # not the restart's time
        assert web.get(host_page).status_code == 200 and web.get(watch).status_code == 200
        play_seat(web, invite, text="After the restart.")
        assert "The reveal" in web.get(invite).text
    run = read_run(folder)
    assert run.finished and run.meta is not None
    assert run.meta.started == "2026-01-02T09:30:00+00:00"
    assert [what(event) for event in run.events[:len(before)]] == before
    spoken = [e.text for e in run.events if isinstance(e, Spoke) and e.speaker == person]
    assert spoken.count(said[0]) == 1 and "After the restart." in spoken


def what(event) -> dict:
    """An event without its time: what a replayed game must repeat."""
    return event.model_dump(exclude={"time"})


def test_without_a_resumer_an_unfinished_table_opens_as_interrupted(tmp_path):
    runs, state = tmp_path / "runs", tmp_path / "state"
    with client(runs, host(runs, state)) as web:
        host_page, invites, _ = open_table(web, seat_form("lighthouse-keeper", "demo",
                                                          {0: "human"}, 4))
        invite = next(iter(invites.values()))
        said = answer_some(web, invite, 1)
        wait_for_decision(web, invite)
    with client(runs, host(runs, state)) as web:
        page = web.get(invite)
        assert page.status_code == 200 and "cannot continue it" in page.text
        assert said[0] in page.text and DECISION.search(page.text) is None
        assert "interrupted" in web.get(host_page).text
        assert web.get(invite + "/live").json()["status"] == "interrupted"
        late = web.post(invite, data={"decision": "2", "text": "Sent before the restart."},
                        headers={"Accept": "application/json"})
        assert late.status_code == 409 and "no longer being played" in late.json()["detail"]


def test_an_ended_table_still_shows_its_ending_after_a_restart(tmp_path):
    runs, state = tmp_path / "runs", tmp_path / "state"
    with client(runs, host(runs, state)) as web:
        _, invites, _ = open_table(web, seat_form("lighthouse-keeper", "demo",
                                                  {0: "human"}, 4))
        invite = next(iter(invites.values()))
        play_seat(web, invite)
    with client(runs, host(runs, state)) as web:
        page = web.get(invite).text
        assert "The reveal" in page and ("You voted for" in page or "You abstained" in page)
        assert web.get(invite + "/review").status_code == 200


def test_another_state_folder_opens_no_old_link(tmp_path):
    runs = tmp_path / "runs"
    with client(runs, host(runs, tmp_path / "state")) as web:
        host_page, invites, _ = open_table(web, seat_form("lighthouse-keeper", "demo",
                                                          {0: "human"}, 4))
        invite = next(iter(invites.values()))
        wait_for_decision(web, invite)
    with client(runs, host(runs, tmp_path / "another")) as web:
        assert web.get(invite).status_code == 404
        assert web.get(host_page).status_code == 404


def test_no_link_is_written_into_the_run_folder(tmp_path):
    runs, state = tmp_path / "runs", tmp_path / "state"
    with client(runs, host(runs, state)) as web:
        host_page, invites, page = open_table(web, seat_form(
            "lighthouse-keeper", "demo", {0: "human", 1: "human"}, 4, spectators="on"))
        tokens = re.findall(r"/(?:seat|watch|host)/([A-Za-z0-9_-]{20,})", page + host_page)
        answer_some(web, next(iter(invites.values())), 1)
    assert len(set(tokens)) == 4
    folder, = runs.iterdir()
    written = "".join(path.read_text("utf-8", errors="replace")
                      for path in folder.rglob("*") if path.is_file())
    assert "Answer number 0" in written  # the person's move is kept, their link is not
    assert not [token for token in tokens if token in written]
    record = json.loads((folder / "web" / "table.json").read_text("utf-8"))
    assert set(record) == {"id", "script", "spectators", "people", "game", "signature"}
    key = state / "serve.key"
    assert key.stat().st_mode & 0o777 == 0o600


def test_an_answer_sent_again_is_taken_once_and_another_is_stale(tmp_path):
    with client(tmp_path) as web:
        _, invites, _ = open_table(web, seat_form("lighthouse-keeper", "demo", {0: "human"}, 4))
        invite = next(iter(invites.values()))
        page = wait_for_decision(web, invite)
        decision = DECISION.search(page).group(1)
        answer = {"decision": decision, "text": "Once only."}
        json_reply = {"Accept": "application/json"}
        assert web.post(invite, data=answer, headers=json_reply).json() == {"taken": True}
        assert web.post(invite, data=answer, headers=json_reply).json() == {"taken": False}
        other = web.post(invite, data={**answer, "text": "Something else."},
                         headers=json_reply)
        assert other.status_code == 422 and other.json()["stale"] is True
        assert "already answered" in other.json()["error"]


def test_a_resumed_table_holds_off_an_answer_to_a_decision_not_asked_again_yet(tmp_path):
    runs, state = tmp_path / "runs", tmp_path / "state"
    json_reply = {"Accept": "application/json"}
    with client(runs, host(runs, state)) as web:
        _, invites, _ = open_table(web, seat_form("lighthouse-keeper", "demo", {0: "human"}, 4))
        invite = next(iter(invites.values()))
        waiting = int(DECISION.search(wait_for_decision(web, invite)).group(1))
        ahead = web.post(invite, data={"decision": str(waiting + 1), "text": "No."},
                         headers=json_reply)
        assert ahead.status_code == 422 and ahead.json()["stale"]  # not resumed: refused
    with client(runs, host(runs, state, resume_table)) as web:
        early = web.post(invite, data={"decision": str(waiting + 1), "text": "Too early."},
                         headers=json_reply)
        assert early.status_code == 503 and early.headers["Retry-After"] == "1"
        assert "catching up" in early.json()["detail"]


def test_tables_beyond_max_tables_open_as_interrupted(tmp_path):
    runs, state = tmp_path / "runs", tmp_path / "state"
    with client(runs, host(runs, state)) as web:
        links = []
        for _ in range(2):
            _, invites, _ = open_table(web, seat_form("lighthouse-keeper", "demo",
                                                      {0: "human"}, 4))
            links.append(next(iter(invites.values())))
            wait_for_decision(web, links[-1])
    again = TableHost(runs, state=state, resumer=resume_table, max_tables=1)
    with client(runs, again) as web:
        statuses = sorted(web.get(link + "/live").json()["status"] for link in links)
        assert statuses == ["interrupted", "playing"]
