"""The detective's readings and its case: the model reads one text at a time, the
framework adds the readings up by motive, means and opportunity, and a vote names the
reading that decided it."""

from __future__ import annotations

import asyncio
import re

import pytest

from jubensha.agents.detective.agent import NOTHING, DetectiveAgent
from jubensha.agents.detective.case import Case, Weights, overlap
from jubensha.agents.detective.inquiry import Inquiry
from jubensha.agents.detective.knowledge import name_forms
from jubensha.agents.detective.readings import (
    DeathFinding,
    Finding,
    Reader,
    borne_place,
    borne_time,
    minute,
)
from jubensha.agents.registry import make_agent
from jubensha.agents.toolkit import Caller
from jubensha.engine import CharacterSheet, VoteCast
from jubensha.engine.game import Game, Seat
from jubensha.engine.procedure import find_procedure
from jubensha.llm import Request, ScriptedModel
from jubensha.llm.base import GenerateConfig, Message, Model, Response
from jubensha.llm.wrappers import CachedModel, MemoryCache, deterministic
from jubensha.scripts.generate import Request as Mystery
from jubensha.scripts.generate import generate

# -- what a reading keeps -------------------------------------------------------------------


def test_a_time_the_text_does_not_write_is_dropped() -> None:
    text = "From 21:10 to 22:00 you were in the chart room with Hugh Brereton."
    assert borne_time("21:10", text) == minute("21:10") == 21 * 60 + 10
    assert borne_time("12:00", text) is None
    assert borne_time("", text) is None
    assert minute("01:30") == 25 * 60 + 30  # after midnight comes after the evening


def test_a_place_the_text_does_not_name_is_dropped() -> None:
    text = "A pair of spectacles lies on the floor of the stateroom."
    assert borne_place("Stateroom", text) == "Stateroom"
    assert borne_place("galley", text) == ""
    assert borne_place("empty", text) == ""


def reader(replies: dict[str, object]) -> Reader:
    return Reader.of(Caller(ScriptedModel(replies=replies), "Ann", "en"))  # type: ignore[arg-type]


def test_a_reading_of_whereabouts_keeps_only_what_the_text_bears_out() -> None:
    text = "The order book shows Harriet Sterling in the smoking room from 21:00 to 22:00."
    got = asyncio.run(reader({
        "detective.read": [{"fact": "whereabouts"}],
        "detective.place": [{"place": "ballroom", "start": "21:00", "end": "22:00"}]}
    ).about(text, "Harriet Sterling", "Frances Marlow", "clue"))
    assert got == Finding("Harriet Sterling", "whereabouts", text, "clue", "",
                          21 * 60, 22 * 60)


def test_the_schema_offers_only_the_times_the_text_writes() -> None:
    seat = reader({"detective.read": [{"fact": "whereabouts"}],
                   "detective.place": [{"place": "saloon", "start": "23:00", "end": ""}] * 2})
    assert asyncio.run(seat.about("In the saloon from 21:00 to 22:00.", "Ann", "Bob",
                                  "clue")) is None
    assert seat.failures == 1


def test_none_and_unusable_replies_read_as_nothing_and_failures_are_counted() -> None:
    seat = reader({"detective.read": [{"fact": "none"}, "garbage", "more garbage"]})
    assert asyncio.run(seat.about("A letter.", "Ann", "Bob", "clue")) is None
    assert seat.failures == 0
    assert asyncio.run(seat.about("A letter.", "Ann", "Bob", "clue")) is None
    assert seat.failures == 1


def test_a_death_reading_is_alive_at_a_time_or_dead_by_one_and_found_somewhere() -> None:
    text = "Ada Norcross was found dead in the conservatory at 22:20."
    seat = reader({"detective.death": [{"state": "dead", "time": "22:20",
                                        "place": "conservatory"},
                                       {"state": "alive", "time": "22:20",
                                        "place": "conservatory"},
                                       {"state": "none", "time": "", "place": ""}]})
    dead = asyncio.run(seat.death(text, "Ada Norcross"))
    assert dead == DeathFinding("Ada Norcross", text, None, 22 * 60 + 20, "conservatory")
    alive = asyncio.run(seat.death(text, "Ada Norcross"))
    assert alive == DeathFinding("Ada Norcross", text, 22 * 60 + 20, None, "")
    assert asyncio.run(seat.death(text, "Ada Norcross")) is None


def test_every_reading_request_is_deterministic_so_seats_can_share_it() -> None:
    seen: list[Request] = []

    def answer(request: Request) -> dict[str, str]:
        seen.append(request)
        return {"fact": "motive", "place": "", "start": "", "end": ""}

    asyncio.run(reader({"detective.read": answer}).about("A letter.", "Ann", "Bob", "clue"))
    assert seen and all(deterministic(r) for r in seen)


# -- the case ---------------------------------------------------------------------------------

WINDOW = [DeathFinding("Vic", "alive at 21:10", 21 * 60 + 10, None, ""),
          DeathFinding("Vic", "dead by 21:50", None, 21 * 60 + 50, "stateroom")]


def case(*findings: Finding) -> Case:
    return Case(Weights(), list(findings), list(WINDOW))


def at(person: str, place: str, start: str | None, end: str | None, source: str = "clue"
       ) -> Finding:
    return Finding(person, "whereabouts", f"{person} in the {place}", source, place,
                   minute(start) if start else None, minute(end) if end else None)


def test_the_window_runs_from_last_alive_to_dead_by_at_the_scene_found() -> None:
    window = case().window("Vic")
    assert (window.start, window.end, window.scene) == (21 * 60 + 10, 21 * 60 + 50, "stateroom")


def test_motive_means_and_the_scene_outweigh_a_belonging_found_there() -> None:
    ranked = case(Finding("Phyl", "motive", "stole her work", "clue"),
                  Finding("Phyl", "weapon", "had a key", "clue"),
                  at("Phyl", "stateroom", "21:30", None, source="Percy"),
                  at("Gwen", "stateroom", None, None)).weigh(["Gwen", "Phyl"], "Vic")
    assert [w.name for w in ranked] == ["Phyl", "Gwen"]
    assert [p.kind for p in ranked[0].reasons] == ["scene", "motive", "weapon"]
    assert [p.kind for p in ranked[1].reasons] == ["trace"]


def test_an_alibi_from_others_over_the_whole_window_clears_a_suspect() -> None:
    ranked = case(Finding("Harriet", "motive", "quarrel", "clue"),
                  Finding("Harriet", "weapon", "key", "clue"),
                  at("Harriet", "smoking room", "21:00", "22:00"),
                  at("Hugh", "saloon", "20:00", "20:30")).weigh(["Harriet", "Hugh"], "Vic")
    assert [(w.name, w.cleared) for w in ranked] == [("Hugh", False), ("Harriet", True)]
    assert ranked[1].score == pytest.approx(2.0 - 2.0)


def test_an_alibi_a_suspect_gives_itself_counts_for_less_and_never_clears() -> None:
    ranked = case(at("Harriet", "smoking room", "21:00", "22:00", source="Harriet")
                  ).weigh(["Harriet"], "Vic")
    assert not ranked[0].cleared
    assert ranked[0].score == pytest.approx(-2.0 * 0.5)


def test_an_alibi_counts_by_the_share_of_the_window_it_covers() -> None:
    half = at("Hugh", "saloon", "21:10", "21:30")
    assert overlap(half, case().window("Vic")) == 20
    ranked = case(half).weigh(["Hugh"], "Vic")
    assert ranked[0].score == pytest.approx(-1.0)
    assert not ranked[0].cleared


def test_what_a_suspect_says_against_itself_counts_for_nothing_by_default() -> None:
    """A murderer hides its own motive, so a motive, the weapon or the scene a suspect
    tells of itself only ever points at innocents; the same told by another counts."""
    own = [Finding("Gwen", "motive", "I owed Vic money.", "Gwen"),
           Finding("Gwen", "weapon", "I keep the study key.", "Gwen"),
           at("Gwen", "stateroom", "21:30", None, source="Gwen")]
    told = [Finding("Phyl", "motive", "Phyl owed Vic money.", "Gwen")]
    ranked = case(*own, *told).weigh(["Gwen", "Phyl"], "Vic")
    assert [(w.name, w.score) for w in ranked] == [("Phyl", 1.0), ("Gwen", 0.0)]
    counted = Case(Weights(own=0.5), own, WINDOW).weigh(["Gwen"], "Vic")[0]
    assert [(p.kind, p.points) for p in counted.points] == [
        ("motive", 0.5), ("weapon", 0.5), ("scene", 0.75)]


def test_a_reading_told_by_another_outranks_the_suspect_s_own() -> None:
    found = case(Finding("Gwen", "motive", "I owed Vic money.", "Gwen"),
                 Finding("Gwen", "motive", "Gwen owed Vic money.", "clue"))
    assert found.weigh(["Gwen"], "Vic")[0].reasons[0].source == "clue"


def test_being_at_the_scene_outside_the_window_counts_for_nothing() -> None:
    ranked = case(at("Gwen", "stateroom", "20:50", None)).weigh(["Gwen"], "Vic")
    assert ranked[0].points == []


def test_each_victim_is_weighed_by_its_own_window() -> None:
    other = DeathFinding("Wes", "Wes dead by 20:30", 20 * 60, 20 * 60 + 30, "cellar")
    found = Case(Weights(), [at("Hugh", "saloon", "20:00", "20:30")], [*WINDOW, other])
    assert found.weigh(["Hugh"], "Wes")[0].cleared
    assert not found.weigh(["Hugh"], "Vic")[0].cleared


# -- the inquiry: what a seat reads -------------------------------------------------------------

def inquiry(limit: int = 10) -> tuple[Inquiry, list[Request]]:
    asked: list[Request] = []

    def answer(request: Request) -> dict[str, str]:
        asked.append(request)
        return {"fact": "motive", "place": "", "start": "", "end": ""}

    script = generate(Mystery(900, 4, 1, "medium"))[0]
    sheet = CharacterSheet.for_seat(script, script.characters[0].name)
    model = ScriptedModel(replies={"detective.read": answer})
    found = Inquiry(Reader.of(Caller(model, sheet.me.name, "en")), name_forms(sheet),
                    sheet.me.name, [v.name for v in sheet.victims], limit)
    return found, asked


def test_a_seat_reads_each_text_once_about_each_other_seat_it_names() -> None:
    found, asked = inquiry()
    me = found.me
    found.text("A letter about Bob.", ["Bob", "Bob", me], "clue")
    found.text("A letter about Bob.", ["Bob"], "Carol")
    asyncio.run(found.settle())
    assert len(asked) == 1
    assert [f.person for f in found.case.findings] == ["Bob"]


def test_readings_past_the_limit_go_unread_and_are_counted() -> None:
    found, asked = inquiry(limit=2)
    found.text("One text.", ["A", "B", "C"], "clue")
    asyncio.run(found.settle())
    assert (len(asked), found.unread) == (2, 1)


# -- the game's shared cache --------------------------------------------------------------------

class Slow(Model):
    name = "slow"

    def __init__(self) -> None:
        self.calls = 0

    async def generate(self, request: Request) -> Response:
        self.calls += 1
        await asyncio.sleep(0.01)
        return Response(text=f"reply {self.calls}", model=self.name)

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return [[0.0] for _ in texts]


def ask(temperature: float | None, seed: int | None = None) -> Request:
    return Request(messages=[Message(role="user", content="read this")],
                   config=GenerateConfig(temperature=temperature, seed=seed))


def test_seats_asking_the_same_deterministic_request_at_once_cost_one_call() -> None:
    inner = Slow()
    shared = CachedModel(inner, MemoryCache(), only=deterministic)

    async def both() -> list[Response]:
        return list(await asyncio.gather(shared.generate(ask(0.0)), shared.generate(ask(0.0))))

    first, second = asyncio.run(both())
    assert inner.calls == 1 and first.text == second.text
    assert {first.origin, second.origin} == {"live", "cache"}


def test_sampled_or_seeded_requests_are_never_shared() -> None:
    inner = Slow()
    shared = CachedModel(inner, MemoryCache(), only=deterministic)
    for request in (ask(0.7), ask(0.7), ask(0.0, seed=3), ask(0.0, seed=3)):
        asyncio.run(shared.generate(request))
    assert inner.calls == 4


# -- a game -----------------------------------------------------------------------------------------

def test_a_vote_goes_where_the_readings_point_and_names_the_deciding_reading() -> None:
    """Scripted readings: every text shows a motive of whoever it is asked about, except
    that the murderer's alibi-free motive card is the only motive; the others are placed
    elsewhere over the window by a clue."""
    script = generate(Mystery(901, 4, 1, "medium"))[0]
    murderer = script.truth.murderers[0] if script.truth else ""

    def read(request: Request) -> dict[str, str]:
        evidence, _, question = request.messages[-1].text.partition("\n\n")
        if question.startswith(f"What does this evidence show about {murderer}?") \
                and murderer in evidence:
            return {"fact": "motive", "place": "", "start": "", "end": ""}
        return {"fact": "none", "place": "", "start": "", "end": ""}

    model = ScriptedModel(replies={"detective.read": read})
    agents = {n: make_agent("detective") for n in script.names}
    game = Game(script, find_procedure("demo"),
                {n: Seat(agents[n], model=model) for n in script.names}, seed=0)
    asyncio.run(game.run())
    ballots = [e for e in game.table.events if isinstance(e, VoteCast) and e.voter != murderer]
    assert ballots and all(b.target == murderer for b in ballots)
    victim = script.truth.kills[0].victim if script.truth else ""
    for ballot in ballots:  # the reading that decided it: its kind, who told it, its text
        kind, told, quoted = re.fullmatch(r'(.+?)\. (.+?): "(.+)"', ballot.reason).groups()
        assert kind == f"{murderer}: a reason to want {victim} dead"
        assert told in ("A clue", "My own notes", *script.names) and murderer in quoted


def test_a_ballot_no_reading_decided_says_it_is_a_guess_in_the_seat_s_language() -> None:
    english, chinese = DetectiveAgent(), DetectiveAgent()
    for agent, lang in ((english, "en"), (chinese, "zh")):
        agent.lang, agent.victims = lang, ["Vic"]
    assert english.deciding("Gwen", NOTHING) == "Gwen: no reading points at anyone yet; a guess."
    assert chinese.deciding("Gwen", NOTHING) == "Gwen：还没有任何证据指向谁，这是猜测。"


def test_a_speech_is_read_sentence_by_sentence_about_whom_each_names() -> None:
    found, _ = inquiry()
    others = [n for n in found.names.forms if n not in (found.me, *found.victims)]
    speaker, named = others[0], others[1]
    agent = DetectiveAgent()
    agent.names, agent.inquiry = found.names, found
    agent.read_testimony(f"I stayed in the saloon from 21:00 to 22:00. {named} had a key.",
                         speaker, others)
    asyncio.run(found.settle())
    read = sorted((f.person, f.text) for f in found.case.findings)
    assert read == sorted([(speaker, "I stayed in the saloon from 21:00 to 22:00."),
                           (named, f"{named} had a key.")])
