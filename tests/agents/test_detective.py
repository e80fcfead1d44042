"""The detective agent: the framework chooses what a seat says and whom it suspects, the
model writes the words. Played dry (``phrase=false``: the chosen facts said as they are)
the choices can be checked word for word."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from jubensha.agents.detective.agent import DetectiveAgent
from jubensha.agents.detective.knowledge import Knowledge, name_forms
from jubensha.agents.detective.reading import (
    company,
    death_minute,
    near,
    owner,
    place_owners,
)
from jubensha.agents.registry import make_agent
from jubensha.engine import CharacterSheet, Failure, SeatContext, Spoke, VoteCast
from jubensha.engine.game import Game, Seat
from jubensha.engine.procedure import find_procedure
from jubensha.llm import HashingEmbedder, ScriptedModel
from jubensha.runs.play import PlayConfig, plan_seats, play_game
from jubensha.scripts.bundled import find_script

DRY = "ledger:phrase=false"


def dry_game(script_id: str, procedure: str = "demo", seed: int = 0) -> Game:
    script = find_script(script_id)
    game = Game(script, find_procedure(procedure),
                {n: Seat(make_agent(DRY), embedder=HashingEmbedder()) for n in script.names},
                seed=seed)
    asyncio.run(game.run())
    return game


@pytest.mark.parametrize("procedure", ["demo", "thinkthrice", "player", "mirage", "whodunit"])
def test_it_plays_every_procedure_on_the_scripted_model(procedure: str) -> None:
    script = find_script("lighthouse-keeper")
    game = Game(script, find_procedure(procedure),
                {n: Seat(make_agent("detective"), model=ScriptedModel()) for n in script.names},
                seed=1)
    result = asyncio.run(game.run())
    assert not [e for e in game.table.events if isinstance(e, Failure)]
    assert result.votes


def test_a_dry_detective_uses_no_model() -> None:
    assert not make_agent(DRY).uses_model
    assert make_agent("detective").uses_model


def test_the_murderer_never_says_a_sentence_about_its_kill() -> None:
    game = dry_game("lighthouse-keeper")
    script = game.script
    sheet = CharacterSheet.for_seat(script, "Agnes Pike")
    knowledge = Knowledge(sheet, name_forms(sheet))
    withheld = [knowledge.voice(i) for i in knowledge.withheld]
    said = " ".join(e.text for e in game.table.events
                    if isinstance(e, Spoke) and e.speaker == "Agnes Pike")
    assert said
    assert not [text for text in withheld if text in said]
    assert "rolling pin" not in said.lower()


def test_a_civilian_keeps_its_listed_secrets() -> None:
    game = dry_game("lighthouse-keeper")
    said = " ".join(e.text for e in game.table.events
                    if isinstance(e, Spoke) and e.speaker == "Tom Hale")
    assert "whisky" not in said and "crates" not in said


def test_the_civilians_of_the_lighthouse_find_its_murderer() -> None:
    game = dry_game("lighthouse-keeper")
    ballots = {e.voter: e.target for e in game.table.events if isinstance(e, VoteCast)}
    assert [voter for voter, target in ballots.items() if target == "Agnes Pike"] == [
        voter for voter in ballots if voter != "Agnes Pike"]


def test_a_question_asks_about_what_points_at_its_target() -> None:
    game = dry_game("lighthouse-keeper")
    questions = [e for e in game.table.events if isinstance(e, Spoke) and e.kind == "question"]
    clues = " ".join(c.text for c in game.script.clues)
    quoted = [q.text.split(": ", 1)[1].rstrip(" .") for q in questions if ": " in q.text]
    assert quoted and all(q.rstrip(".…") in clues for q in quoted)
    assert [q.to for q in questions].count("Agnes Pike") >= 2


def test_the_run_log_holds_the_murderer_s_plan_and_every_voter_s_ledger(
        tmp_path: Path) -> None:
    script = find_script("lighthouse-keeper")
    config = PlayConfig(script=script, procedure=find_procedure("demo"),
                        plans=plan_seats(script, "detective", "scripted"), seed=0,
                        embedder="scripted")
    asyncio.run(play_game(config, tmp_path / "run"))
    calls = [json.loads(line) for line in (tmp_path / "run" / "calls.jsonl").open()]
    plans = [c for c in calls if c["purpose"] == "detective.plan"]
    ledgers = {c["seat"] for c in calls if c["purpose"] == "detective.ledger"}
    assert [c["seat"] for c in plans] == ["Agnes Pike"]
    assert "cover" in plans[0]["raw"]
    assert ledgers == set(script.names)


def test_an_owner_is_named_with_a_possessive_in_either_language() -> None:
    sheet = CharacterSheet.for_seat(find_script("lighthouse-keeper"), "Tom Hale")
    names = name_forms(sheet)
    assert owner("Agnes Pike's grey wool shawl hangs on the rail.", "Agnes Pike", names)
    assert not owner("Dr. Reed reached him at 22:47.", "Samuel Reed", names)
    zh = CharacterSheet.for_seat(find_script("tingsong-tea-estate"), "周妈")
    assert owner("抽屉里有钱守仁的账本。", "钱守仁", name_forms(zh))


def test_company_is_read_in_either_language() -> None:
    sheet = CharacterSheet.for_seat(find_script("lighthouse-keeper"), "Tom Hale")
    names = name_forms(sheet)
    assert company("At 22:10: Plays cribbage with Dr. Reed.", ["Samuel Reed"], names) == [
        "Samuel Reed"]
    assert company("At 21:55 I saw Nora leave the study.", ["Nora Vance"], names) == []
    zh = CharacterSheet.for_seat(find_script("tingsong-tea-estate"), "沈青禾")
    assert company("20:30，在茶园石亭和许松说话。", ["许松"], name_forms(zh)) == ["许松"]


def test_a_place_belongs_to_the_seat_it_names_or_whose_description_holds_it() -> None:
    sheet = CharacterSheet.for_seat(find_script("tingsong-tea-estate"), "周妈")
    names = name_forms(sheet)
    profiles = {o.name: o.description for o in sheet.others}
    assert place_owners("账房", profiles, names) == ["钱守仁"]
    assert place_owners("许松住处", profiles, names) == ["许松"]
    assert place_owners("焙房", profiles, names) == []


def test_times_near_the_death_count_and_a_colon_after_a_time_does_not_hide_it() -> None:
    death = death_minute(["At 22:45 Tom Hale found Elias dead."])
    assert death == 22 * 60 + 45
    assert near("At 22:10: Plays cribbage.", death)
    assert not near("At 16:00: Comes down from the lamp room.", death)
    assert near("00:20 went back to bed.", 23 * 60 + 50)


def test_an_alibi_from_its_own_sheet_clears_a_seat() -> None:
    agent = DetectiveAgent()
    sheet = CharacterSheet.for_seat(find_script("lighthouse-keeper"), "Tom Hale")
    asyncio.run(agent.start(SeatContext(sheet=sheet)))
    asyncio.run(agent.ledger.refresh())
    alibis = {e.seat for e in agent.ledger.entries if e.kind == "alibi"}
    assert alibis == {"Samuel Reed"}
    assert dict(agent.ledger.suspicion(sheet.seat_names))["Samuel Reed"] < 0
