"""A server that holds against a hostile page: forms from other sites and ports are refused,
requests naming a host the server was not started for are refused (DNS rebinding), the
tables playing at once are capped, non-ASCII secrets and malformed cookies are no crash,
every response forbids framing and foreign scripts, the password cannot be guessed fast,
and a run folder with a link inside is not shown. None of it answers with a 5xx."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from pathlib import Path

import pytest

from jubensha.web import library as library_module
from jubensha.web import tables as tables_module
from jubensha.web.gate import CONTENT_SECURITY_POLICY, host_allowed, same_origin
from jubensha.web.tables import TableHost
from jubensha.web.throttle import LOGIN_ATTEMPTS, Throttle
from tests.web.web_helpers import (
    BASE,
    DECISION,
    KIND,
    answer_for,
    client,
    open_table,
    seat_form,
)

FORM = seat_form("lighthouse-keeper", "demo", {0: "human"}, 4, spectators="on")
AGENTS_ONLY = seat_form("lighthouse-keeper", "demo", {}, 4)
CROSS_SITE = {
    "another site": {"Origin": "http://evil.example"},
    "another port": {"Origin": "http://localhost:9999"},
    "an opaque origin": {"Origin": "null"},
    "another scheme's port": {"Origin": "https://localhost"},
    "no origin and a foreign referer": {"Origin": "", "Referer": "http://evil.example/x"},
    "neither origin nor referer": {"Origin": ""},
}


def tokens(web, form=FORM) -> dict[str, str]:
    host, invites, page = open_table(web, form)
    watch = re.search(r'href="/watch/([^"]+)"', page)
    return {"host": host.rsplit("/", 1)[1], "seat": next(iter(invites.values())).rsplit("/")[-1]
            if invites else "", "watch": watch.group(1) if watch else ""}


def without_empty(headers: dict[str, str]) -> dict[str, str]:
    return {name: value for name, value in headers.items() if value}


# -- forms from elsewhere (CSRF) --------------------------------------------------------------
@pytest.mark.parametrize("attack", CROSS_SITE)
def test_a_form_from_another_site_or_port_changes_nothing(tmp_path, attack):
    with client(tmp_path) as web:
        known = tokens(web)
        web.headers.pop("Origin")
        headers = without_empty(CROSS_SITE[attack])
        posts = {"/tables": FORM, f"/host/{known['host']}/remove": {"seat": "x"},
                 f"/seat/{known['seat']}": {"decision": "1", "text": "hijacked"},
                 "/login": {"password": ""}}
        for path, data in posts.items():
            refused = web.post(path, data=data, headers=headers, follow_redirects=False)
            assert refused.status_code == 403, (attack, path, refused.status_code)
            assert "must come from this server's own pages" in refused.text
        assert len(web.app.state.tables.tables) == 1
        table = next(iter(web.app.state.tables.tables.values()))
        assert not any(io.gone for io in table.ios.values())


def test_forms_from_the_servers_own_pages_pass_by_origin_or_referer(tmp_path):
    with client(tmp_path) as web:
        tokens(web)  # Origin: http://localhost, as the browser sends it
        web.headers.pop("Origin")
        by_referer = web.post("/tables", data=FORM, headers={"Referer": BASE + "/new?x=1"},
                              follow_redirects=False)
        assert by_referer.status_code == 303
        same_port = web.post("http://localhost:8000/tables", data=FORM,
                             headers={"Origin": "http://localhost:8000"},
                             follow_redirects=False)
        assert same_port.status_code == 303
        assert len(web.app.state.tables.tables) == 3


# -- the Host header (DNS rebinding) ----------------------------------------------------------
def test_a_host_name_the_server_was_not_started_for_is_refused(tmp_path):
    with client(tmp_path) as web:
        known = tokens(web)
        paths = ["/", "/runs", f"/host/{known['host']}", f"/seat/{known['seat']}",
                 f"/watch/{known['watch']}", f"/watch/{known['watch']}/live", "/static/app.js"]
        for host in ("evil.example", "evil.example:8000", "localhost.evil.example",
                     "127.0.0.1.nip.io", "user@localhost", ""):
            for path in paths:
                refused = web.get(path, headers={"Host": host})
                assert refused.status_code == 400, (host, path, refused.status_code)
                assert known["seat"] not in refused.text
            assert web.post("/tables", data=FORM, headers={
                "Host": host, "Origin": f"http://{host}"}).status_code == 400
        assert len(web.app.state.tables.tables) == 1


def test_invite_links_name_only_a_host_the_server_answers_to(tmp_path):
    with client(tmp_path, allowed_hosts=["my-laptop.local"]) as web:
        known = tokens(web)
        for host in ("my-laptop.local:8000", "192.168.1.20:8000", "[::1]:8000", "localhost"):
            page = web.get(f"/host/{known['host']}", headers={"Host": host}).text
            assert f"http://{host}/seat/{known['seat']}" in page, host
        assert web.get(f"/host/{known['host']}",
                       headers={"Host": "evil.example"}).status_code == 400


def test_hosts_and_origins_are_compared_by_name_and_port():
    assert host_allowed("LOCALHOST:8000", []) and host_allowed("10.1.2.3", [])
    assert host_allowed("[fe80::1]:8000", []) and host_allowed("Box.Local.", ["box.local"])
    assert not host_allowed("box.local.evil.example", ["box.local"])
    assert not host_allowed("localhost:port", []) and not host_allowed("a b", [])
    assert same_origin("http://localhost:8000", "localhost:8000")
    assert same_origin("https://box.local", "box.local", "https")  # behind a TLS proxy
    assert not same_origin("http://box.local:443", "box.local", "https")
    assert not same_origin("https://box.local", "box.local", "http")
    assert not same_origin("http://localhost:8000", "localhost")
    assert not same_origin("file:///tmp/x.html", "localhost")
    assert not same_origin("http://[::1", "localhost")


# -- how many tables ----------------------------------------------------------------------------
def test_the_tables_playing_at_once_are_capped(tmp_path):
    with client(tmp_path, TableHost(tmp_path, max_tables=2)) as web:
        tokens(web)
        tokens(web)
        full = web.post("/tables", data=FORM, follow_redirects=False)
        assert full.status_code == 429
        assert "--max-tables 2" in full.text and "Too many at once" in full.text
        assert len(web.app.state.tables.tables) == 2


def test_ended_tables_are_forgotten_oldest_first_and_their_runs_stay(tmp_path, monkeypatch):
    monkeypatch.setattr(tables_module, "KEEP_ENDED", 2)
    with client(tmp_path) as web:
        host = web.app.state.tables
        for _ in range(4):
            tokens(web, AGENTS_ONLY)
            deadline = time.monotonic() + 60
            while host.playing:
                assert time.monotonic() < deadline, "an agents-only table did not end"
                time.sleep(0.02)
        assert len(host.tables) == 2  # never more than KEEP_ENDED ended ones
    assert len([p for p in tmp_path.iterdir() if p.is_dir()]) == 4


# -- secrets that are not ASCII ------------------------------------------------------------
def test_a_non_ascii_host_password_signs_in(tmp_path):
    with client(tmp_path, password="密码-剧本杀") as web:
        assert web.post("/login", data={"password": "密码-剧本"}).status_code == 401
        assert web.post("/login", data={"password": "密码-剧本杀"}, follow_redirects=False
                        ).status_code == 303
        assert web.get("/").status_code == 200


@pytest.mark.parametrize("cookie", ["jubensha_host=密码".encode(), b"jubensha_host=\xff\xfe;;=",
                                    b"jubensha_host=\"unterminated", b"=\x00"])
def test_a_malformed_or_non_ascii_cookie_is_simply_not_signed_in(tmp_path, cookie):
    with client(tmp_path, password="密码") as web:
        assert web.get("/", headers={"Cookie": cookie}).status_code == 401
        assert web.get("/runs", headers={"Cookie": cookie}).status_code == 401


@pytest.mark.parametrize("token", ["密码", "%ED%A0%80", "%FF%FE", "%00", "a" * 5000])
def test_non_ascii_and_broken_tokens_are_not_found(tmp_path, token):
    with client(tmp_path) as web:
        tokens(web)
        for path in ("/seat/{}", "/seat/{}/live", "/seat/{}/stream", "/watch/{}",
                     "/watch/{}/live", "/watch/{}/review", "/host/{}"):
            assert web.get(path.format(token)).status_code == 404, path
        assert web.post(f"/seat/{token}", data={"decision": "1"}).status_code == 404
        assert web.post(f"/host/{token}/remove", data={"seat": "x"}).status_code == 404


def test_a_password_form_in_broken_encoding_is_refused_like_a_wrong_one(tmp_path):
    with client(tmp_path, password="密码") as web:
        broken = web.post("/login", content=b"password=%FF%FE%ED%A0%80",
                          headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert broken.status_code == 401


# -- a rating out of range ------------------------------------------------------------------
def test_a_rating_outside_0_to_2_is_refused_with_the_reason(tmp_path):
    with client(tmp_path) as web:
        _, invites, _ = open_table(web, seat_form("lighthouse-keeper", "mirage", {1: "human"}, 4))
        invite = next(iter(invites.values()))
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            page = web.get(invite).text
            found = DECISION.search(page)
            if found is None:
                time.sleep(0.01)
                continue
            kind = KIND.search(page).group(1)
            answer = {"decision": found.group(1), **answer_for(kind, "I was at home.")}
            if kind == "rate_round":  # a round's statements, rated on one form
                break
            web.post(invite, data=answer)
        else:
            raise AssertionError("no rating was asked")
        for trust in ("5", "-1", "1.5", "二", "", "9" * 5000):
            refused = web.post(invite, data={**answer, "trust0": trust})
            assert refused.status_code == 422, trust
            assert "Trust and doubt are each 0, 1 or 2." in refused.text
        assert web.post(invite, data=answer, follow_redirects=False).status_code == 303


# -- headers on every response ----------------------------------------------------------------
def test_every_response_forbids_framing_and_foreign_scripts(tmp_path):
    with client(tmp_path) as web:
        known = tokens(web)
        responses = [web.get("/"), web.get(f"/seat/{known['seat']}"),
                     web.get(f"/watch/{known['watch']}/live"), web.get("/static/app.js"),
                     web.get("/nothing"), web.get("/", headers={"Host": "evil.example"}),
                     web.post("/tables", data=FORM, headers={"Origin": "null"})]
        for response in responses:
            assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
            assert response.headers["x-frame-options"] == "DENY"
            assert response.headers["x-content-type-options"] == "nosniff"
            assert response.headers["referrer-policy"] == "same-origin"
    assert "frame-ancestors 'none'" in CONTENT_SECURITY_POLICY
    assert "script-src 'self';" in CONTENT_SECURITY_POLICY


def test_no_page_holds_inline_script_or_style_the_policy_would_block(tmp_path):
    templates = Path(library_module.__file__).parent / "templates"
    for template in templates.glob("*.html"):
        text = template.read_text(encoding="utf-8")
        assert not re.search(r"<script(?![^>]*\bsrc=)", text), template.name
        assert not re.search(r"\sstyle=|<style|\son[a-z]+=", text), template.name


# -- guessing the password --------------------------------------------------------------------
def test_password_guessing_is_throttled(tmp_path):
    with client(tmp_path, password="s3cret") as web:
        for _ in range(LOGIN_ATTEMPTS):
            assert web.post("/login", data={"password": "guess"}).status_code == 401
        throttled = web.post("/login", data={"password": "s3cret"})
        assert throttled.status_code == 429
        assert 0 < int(throttled.headers["retry-after"]) <= 60
        assert "Too many sign-in attempts" in throttled.text
        assert web.get("/").status_code == 401


def test_the_throttle_counts_per_address_and_overall_in_a_sliding_window():
    now = [0.0]
    throttle = Throttle(per_key=3, overall=5, window_s=60, clock=lambda: now[0])
    assert [throttle.wait("a") for _ in range(3)] == [0, 0, 0]
    assert throttle.wait("a") == 60
    assert throttle.wait("b") == 0 and throttle.wait("b") == 0
    assert throttle.wait("c") == 60  # five attempts in the window from all addresses
    now[0] = 30.0
    assert throttle.wait("c") == 30
    now[0] = 60.5
    assert throttle.wait("a") == 0 and throttle.wait("c") == 0


# -- the review of a run folder ---------------------------------------------------------------
def finished_game(web, runs):
    """The run folder of an agents-only table, played to its end."""
    tokens(web, AGENTS_ONLY)
    deadline = time.monotonic() + 60
    while web.app.state.tables.playing:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return next(p for p in runs.iterdir() if p.is_dir())


def test_a_run_folder_with_a_link_inside_is_not_shown(tmp_path):
    runs = tmp_path / "runs"
    with client(runs) as web:
        game = finished_game(web, runs)
        assert web.get(f"/review/{game.name}").status_code == 200
        secret = tmp_path / "secret-events.jsonl"
        secret.write_text((game / "events.jsonl").read_text(encoding="utf-8").replace(
            "Lighthouse", "SECRET-FROM-OUTSIDE"), encoding="utf-8")
        (game / "events.jsonl").unlink()
        (game / "events.jsonl").symlink_to(secret)
        refused = web.get(f"/review/{game.name}")
        assert refused.status_code == 422 and "SECRET-FROM-OUTSIDE" not in refused.text
        assert "events.jsonl is a symbolic link" in refused.text
        (game / "events.jsonl").unlink()
        (game / "eval").mkdir()
        (game / "eval" / "x.json").symlink_to("/etc/passwd")
        assert web.get(f"/review/{game.name}").status_code == 422


# -- the lobby's scripts are parsed off the event loop ---------------------------------------
def test_scripts_are_parsed_in_a_worker_thread_once_while_pages_are_served(tmp_path,
                                                                           monkeypatch):
    folder = tmp_path / "scripts"
    folder.mkdir()
    source = Path(tables_module.__file__).parents[1] / "scripts" / "bundled"
    script = next(source.rglob("script.yaml"))
    for number in range(3):
        (folder / f"s{number}.yaml").write_text(script.read_text(encoding="utf-8"), "utf-8")
    release, parsing = threading.Event(), threading.Event()
    on_a_loop: list[bool] = []
    real = library_module.find_script

    def slow_find(path: str):
        try:
            asyncio.get_running_loop()
            on_a_loop.append(True)
        except RuntimeError:
            on_a_loop.append(False)
        parsing.set()
        assert release.wait(30)
        return real(path)

    monkeypatch.setattr(library_module, "find_script", slow_find)
    with client(tmp_path / "runs", script_dirs=[folder]) as web:
        assert parsing.wait(10), "the server did not start parsing scripts when it started"
        lobby: list[str] = []
        waiting = threading.Thread(target=lambda: lobby.append(web.get("/").text))
        waiting.start()
        for path in ("/static/app.js", "/runs", "/nothing"):  # answered while parsing
            assert web.get(path).status_code in (200, 404)
        assert waiting.is_alive()
        release.set()
        waiting.join(30)
        assert "0:s2.yaml" in lobby[0] and "0:s2.yaml" in web.get("/").text
    assert not any(on_a_loop)
    assert len(on_a_loop) == len(library_module.ScriptLibrary([folder]).paths)  # each once


def test_a_review_path_holding_a_nul_or_other_unusable_character_is_not_found(tmp_path,
                                                                               caplog):
    runs = tmp_path / "runs"
    with client(runs) as web:
        game = finished_game(web, runs)
        answers = [web.get(f"/review/{game.name}{tail}")
                   for tail in ("%00", "%00/x", "/%00", "%C0%80", "/" + "x" * 5000)]
    assert [a.status_code for a in answers] == [404] * 5
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
