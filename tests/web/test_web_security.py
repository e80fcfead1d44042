"""Safe to host: a token opens only what its holder may see, every script and model text is
escaped, the host area can be locked, and no URL reaches a file outside the runs folder."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
import yaml

from jubensha.engine.events import Event
from jubensha.llm.registry import ModelOptions
from jubensha.scripts import PUBLIC, Script, load_script
from jubensha.web.tables import TableHost
from tests.web.web_helpers import DECISION, client, open_table, play_seat, seat_form

TINY = Path(__file__).parents[1] / "engine" / "tiny_script.yaml"
HOSTILE = "<script>alert('x')</script>"


def scripts_dir(tmp_path: Path, mutate=None) -> Path:
    folder = tmp_path / "scripts"
    folder.mkdir()
    data = yaml.safe_load(TINY.read_text(encoding="utf-8"))
    if mutate:
        mutate(data)
    (folder / "tiny.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), "utf-8")
    return folder


def tiny_table(web, seats: dict[int, str], **extra: str):
    return open_table(web, seat_form("0:tiny.yaml", "demo", seats, 4, **extra))


def visible_text(page: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def sentences(texts) -> set[str]:
    parts = (part for text in texts for part in re.split(r"(?<=[.!?])\s+", text or ""))
    return {" ".join(part.split()) for part in parts if len(part.strip()) >= 12}


def private_texts(character, script: Script) -> list[str]:
    held = [clue.text for clue in script.clues if clue.holder in character.all_names]
    return [character.story, *character.secrets, *(t.text for t in character.timeline),
            *(act.text for act in character.acts), *held]


def public_texts(script: Script) -> list[str]:
    return [script.background, script.rules, *(c.description for c in script.characters),
            *(clue.text for clue in script.clues if clue.holder == PUBLIC)]


def leaked(page: str, seat: str | None, events: list[Event]) -> set[str]:
    """Sentences exclusive to other characters' private texts, or to the truth, that the
    page shows although no event it may show carried them."""
    script = load_script(TINY)
    own = set() if seat is None else sentences(private_texts(script.character(seat), script))
    others = set().union(*(sentences(private_texts(c, script)) for c in script.characters
                           if c.name != seat))
    secret = (others | sentences([script.truth.narrative])) - own - sentences(public_texts(script))
    heard = " ".join(" ".join(str(v) for v in e.model_dump().values()) for e in events)
    text = visible_text(page)
    return {s for s in secret if s in text and s not in heard}


def test_a_seat_page_shows_its_own_sheet_and_only_what_the_seat_observed(tmp_path):
    with client(tmp_path / "runs", script_dirs=[scripts_dir(tmp_path)]) as web:
        _, invites, _ = tiny_table(web, {1: "human"})
        (seat, invite), = invites.items()
        checked = 0
        for _ in range(400):
            page = web.get(invite).text
            live = web.get(invite + "/live").json()
            table = next(iter(web.app.state.tables.tables.values()))
            seen = [e for e in table.events if e.visible_to(seat)]
            assert not leaked(page + live["events"] + live["panel"], seat, seen)
            checked += 1
            found = DECISION.search(page)
            if live["ended"]:
                break
            if found:
                web.post(invite, data={"decision": found.group(1), "text": "hm", "target": "1",
                                       "question1": "q"})
        assert "Bob spent the evening repotting orchids" in visible_text(web.get(invite).text)
    assert checked > 3


def test_spectators_see_public_events_before_the_reveal_and_everything_after(tmp_path):
    with client(tmp_path / "runs", script_dirs=[scripts_dir(tmp_path)]) as web:
        _, invites, host_page = tiny_table(web, {0: "human"}, spectators="on")
        watch = re.search(r'id="spectator" href="([^"]+)"', host_page).group(1)
        invite = next(iter(invites.values()))
        page = web.get(invite).text
        while not DECISION.search(page):
            page = web.get(invite).text
        table = next(iter(web.app.state.tables.tables.values()))
        public = [e for e in table.events if e.audience == "public"]
        assert not leaked(web.get(watch).text + web.get(watch + "/live").json()["events"],
                          None, public)
        assert web.get(watch + "/review").status_code == 403
        assert web.get(invite + "/review").status_code == 403
        assert "The reveal" not in web.get(watch).text + web.get(invite).text
        play_seat(web, invite)
        review = web.get(watch + "/review")
        assert review.status_code == 200
        assert "Ann hid the bloody gloves under the coal scuttle." in visible_text(review.text)


def test_tables_with_people_have_no_spectator_link_unless_the_host_allows_it(tmp_path):
    with client(tmp_path / "runs") as web:
        _, _, host_page = open_table(web, seat_form("lighthouse-keeper", "demo", {0: "human"}, 4))
        assert 'id="spectator"' not in host_page


def test_every_endpoint_refuses_wrong_missing_and_other_kinds_of_tokens(tmp_path):
    with client(tmp_path / "runs") as web:
        host, invites, host_page = open_table(
            web, seat_form("lighthouse-keeper", "demo", {0: "human"}, 4, spectators="on"))
        seat_token = next(iter(invites.values())).rsplit("/", 1)[1]
        watch_token = re.search(r'href="/watch/([^"]+)"', host_page).group(1)
        host_token = host.rsplit("/", 1)[1]
        wrong = {"guess": "AAAAAAAAAAAAAAAAAAAAAA", "empty": "", "spectator": watch_token,
                 "host": host_token}
        for name, token in wrong.items():
            for path in ("/seat/{}", "/seat/{}/live", "/seat/{}/stream", "/seat/{}/review"):
                assert web.get(path.format(token)).status_code == 404, (name, path)
            assert web.post(f"/seat/{token}", data={"decision": "1", "text": "x"}
                            ).status_code in (404, 405), name
        for name, token in {**wrong, "seat": seat_token, "spectator": "nope"}.items():
            for path in ("/watch/{}", "/watch/{}/live", "/watch/{}/stream", "/watch/{}/review"):
                assert web.get(path.format(token)).status_code == 404, (name, path)
        for token in (seat_token, watch_token, "nope"):
            for path in ("/host/{}", "/host/{}/live", "/host/{}/stream"):
                assert web.get(path.format(token)).status_code == 404, path
            assert web.post(f"/host/{token}/remove", data={"seat": "x"}).status_code == 404


def test_a_host_password_locks_the_lobby_tables_runs_and_reviews(tmp_path):
    runs = tmp_path / "runs"
    with client(runs, password="s3cret") as web:
        assert web.get("/").status_code == 401 and "Password" in web.get("/").text
        for path in ("/new?script=lighthouse-keeper&procedure=demo", "/runs", "/review/x"):
            assert web.get(path).status_code == 401, path
        assert web.post("/tables", data={"script": "lighthouse-keeper"}).status_code == 401
        assert web.post("/login", data={"password": "wrong"}).status_code == 401
        web.post("/login", data={"password": "s3cret"})
        assert web.get("/").status_code == 200
        _, invites, _ = open_table(web, seat_form("lighthouse-keeper", "demo", {0: "human"}, 4))
        web.cookies.clear()
        assert web.get(next(iter(invites.values()))).status_code == 200


def test_script_and_model_text_is_escaped_everywhere(tmp_path):
    def plant(data):
        data["title"] = f"Manor {HOSTILE}"
        data["clues"][0]["text"] = f"A candlestick {HOSTILE}"
        data["characters"][3]["description"] = f"The butler {HOSTILE}"
    with client(tmp_path / "runs", script_dirs=[scripts_dir(tmp_path, plant)]) as web:
        _, invites, host_page = tiny_table(web, {0: "human"}, spectators="on")
        invite = next(iter(invites.values()))
        play_seat(web, invite, text=f"My answer {HOSTILE}")
        watch = re.search(r'id="spectator" href="([^"]+)"', host_page).group(1)
        run = next(p for p in (tmp_path / "runs").iterdir())
        pages = [web.get("/").text, host_page, web.get(invite).text, web.get(watch).text,
                 web.get(watch + "/review").text, web.get(f"/review/{run.name}").text,
                 web.get(invite + "/live").json()["events"]]
        for page in pages:
            assert "<script>alert" not in page
        assert "&lt;script&gt;alert" in web.get(f"/review/{run.name}").text


def test_a_review_url_never_leaves_the_runs_folder(tmp_path):
    runs = tmp_path / "runs"
    outside = tmp_path / "outside"
    (runs / "game").mkdir(parents=True)
    outside.mkdir()
    for folder in (runs / "game", outside):
        (folder / "meta.json").write_text("{}")
    (runs / "link").symlink_to(outside, target_is_directory=True)
    with client(runs) as web:
        for path in ("../outside", "..%2Foutside", "link", "/etc", "%2Fetc", "game/../../outside"):
            assert web.get(f"/review/{path}").status_code == 404, path
        listed = web.get("/runs").text
        assert 'href="/review/game"' in listed and 'href="/review/link"' not in listed


def test_the_lobby_seats_only_models_the_server_offers_and_never_shows_endpoints(tmp_path):
    runs = tmp_path / "runs"
    host = TableHost(runs, ModelOptions(base_url="http://user:hunter2@10.0.0.1/v1",
                                        api_key="sk-verysecret"))
    with client(runs, host) as web:
        form = seat_form("lighthouse-keeper", "demo", {0: "human"}, 4)
        bad = dict(form, model1="replay:/etc/passwd")
        assert web.post("/tables", data=bad).status_code == 422
        bad = dict(form, procedure="/etc/passwd")
        assert web.post("/tables", data=bad).status_code == 404
        bad = dict(form, script="/etc/passwd")
        assert web.post("/tables", data=bad).status_code == 404
        _host_path, invites, host_page = open_table(web, form)
        play_seat(web, next(iter(invites.values())))
        run = next(p for p in runs.iterdir())
        for page in (host_page, web.get("/").text, web.get(f"/review/{run.name}").text):
            assert "hunter2" not in page and "verysecret" not in page


@pytest.mark.parametrize("missing", ["", "seat/", "watch/", "review/"])
def test_unknown_paths_answer_404(tmp_path, missing):
    with client(tmp_path) as web:
        assert web.get(f"/{missing}nothing-here").status_code == 404
