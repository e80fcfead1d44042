"""The MIRAGE way of playing: open conversation with Ask and Investigate, each clue found
once and then public, trust and doubt per statement, the accusation vote that weighs votes
against accumulated suspicion, phased scripts, and whole games with the mirage agent."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
from engine_helpers import one_act, table_game, tiny

from jubensha.agents.registry import make_agent
from jubensha.engine.agent import Agent, PersonAgent
from jubensha.engine.decisions import (
    Accusation,
    Accuse,
    CastVote,
    Decision,
    Investigate,
    Questions,
    RateRound,
    Rating,
    Ratings,
    Speak,
    Speech,
    TakeTurn,
    Vote,
)
from jubensha.engine.events import (
    ActStarted,
    ClueRevealed,
    Failure,
    GameEnded,
    Investigated,
    Rated,
    Spoke,
)
from jubensha.engine.game import Game, Seat
from jubensha.engine.narration import describe
from jubensha.engine.procedure import find_procedure, parse_procedure
from jubensha.llm.calls import CallLog
from jubensha.llm.fake import ScriptedModel
from jubensha.scripts import Script, bundled_scripts, load_script
from jubensha.scripts.importers import discover, import_script
from jubensha.scripts.model import Clue


def run(game: Game) -> Any:
    return asyncio.run(game.run())


def searchable() -> Script:
    """The tiny manor with places to search: two clues in the study, one at the cellar in
    act 2, and Cara's room (a place named after a seat, which she may not search)."""
    script = tiny()
    extra = [
        Clue(id="s1", title="The curtain", text="A bloodstained rag behind the study curtain.",
             location="study"),
        Clue(id="s2", title="The window", text="Muddy footprints under the study window.",
             location="study"),
        Clue(id="k1", text="A smashed wine bottle in the cellar.", location="cellar", act=2),
        Clue(id="r1", text="An unsent letter on Cara's desk.", location="Cara",
             extra={"owner": "Cara"}),
    ]
    return script.model_copy(update={"clues": [*script.clues, *extra]})


def procedure(**conversation: Any) -> Any:
    return parse_procedure({"name": "test", "stages": [
        {"kind": "act", "act": 1},
        {"kind": "clues", "located": "skip"},
        {"kind": "conversation", "rounds": 2, "acts": "all", **conversation},
        {"kind": "accusation_vote"},
        {"kind": "reveal"},
    ]}, "test")


def investigator(agent: Agent, decision: Decision) -> Investigate | None:
    """Always search the first place offered (ask when there is none)."""
    if decision.type == "turn" and decision.locations:
        return Investigate(location=decision.locations[0], statement="I will look there.")
    return None


def test_each_clue_is_found_at_most_once_and_then_everyone_sees_it() -> None:
    game, agents = table_game(searchable(), procedure(acts="all"), reply=investigator)
    run(game)
    events = game.table.events
    found = [e for e in events if isinstance(e, ClueRevealed) and e.found_by]
    counts = Counter(e.clue_id for e in found)
    assert counts and max(counts.values()) == 1
    assert {"s1", "s2", "c4", "r1", "k1"} == set(counts)
    assert all(e.audience == "public" for e in found)
    for agent in agents.values():
        assert {e.clue_id for e in agent.observed
                if isinstance(e, ClueRevealed) and e.found_by} == set(counts)
    searches = [e for e in events if isinstance(e, Investigated)]
    assert [len(e.clue_ids) for e in searches if e.clue_ids] == [1] * len(counts)


def test_a_search_reads_with_the_titles_of_what_was_found_not_their_ids() -> None:
    game, _ = table_game(searchable(), procedure(), reply=investigator)
    run(game)
    titles = {c.id: c.title for c in game.table.script.clues}
    search = next(e for e in game.table.events if isinstance(e, Investigated) and e.clue_ids)
    assert search.clue_titles == [titles[i] or i for i in search.clue_ids]
    [line] = describe(search)
    assert search.clue_titles[0] in line.text
    assert not any(i in line.text for i in search.clue_ids if i != titles[i])
    old = search.model_copy(update={"clue_titles": []})  # logged before titles were kept
    assert search.clue_ids[0] in describe(old)[0].text


def test_a_seat_never_searches_the_place_named_after_itself() -> None:
    game, agents = table_game(searchable(), procedure(), reply=investigator)
    run(game)
    offered = [d.locations for d in agents["Cara"].decisions if d.type == "turn"]
    assert offered and all("Cara" not in places for places in offered)
    found = [e for e in game.table.events if isinstance(e, ClueRevealed) and e.clue_id == "r1"]
    assert found and found[0].found_by != "Cara"


def test_later_acts_clues_can_be_found_only_once_their_act_has_begun() -> None:
    game, agents = table_game(searchable(), procedure(acts="all"), reply=investigator)
    run(game)
    events = game.table.events
    act2 = next(e.index for e in events if isinstance(e, ActStarted) and e.act == 2)
    cellar = next(e.index for e in events if isinstance(e, ClueRevealed) and e.clue_id == "k1")
    assert cellar > act2
    before = [d.locations for d in agents["Ann"].decisions if d.type == "turn"][:2]
    assert all("cellar" not in places for places in before)


def test_an_invalid_turn_is_replaced_and_recorded() -> None:
    def wrong(agent: Agent, decision: Decision) -> Investigate | None:
        return Investigate(location="the moon") if decision.type == "turn" else None

    game, _ = table_game(searchable(), procedure(rounds=1), reply=wrong)
    run(game)
    failures = [e for e in game.table.events if isinstance(e, Failure) and e.purpose == "turn"]
    assert failures and "the moon" in failures[0].error
    assert not any(isinstance(e, Investigated) and e.location == "the moon"
                   for e in game.table.events)


def test_every_other_seat_rates_every_statement_and_scores_run_per_statement() -> None:
    def asker(agent: Agent, decision: Decision) -> Questions | Rating | None:
        if decision.type == "turn":
            return Questions(target=decision.candidates[0], questions=["Where were you?"])
        if decision.type == "rate":
            return Rating(trust=2 if decision.statement.speaker == "Bob" else 0, doubt=1)
        return None

    game, _ = table_game(tiny(), procedure(rounds=1), reply=asker)
    result = run(game)
    events = game.table.events
    statements = [e for e in events if isinstance(e, Spoke) and e.stage == "conversation"]
    ratings = [e for e in events if isinstance(e, Rated)]
    for statement in statements:
        raters = [r.rater for r in ratings if r.statement == statement.index]
        assert sorted(raters) == sorted(n for n in game.table.seats if n != statement.speaker)
    assert all(r.audience == [] for r in ratings)
    record = result.extra["mirage"]
    assert [s["index"] for s in record["statements"]] == [s.index for s in statements]
    bob = [s for s in record["statements"] if s["speaker"] == "Bob"]
    assert [s["running_trust"] for s in bob] == [6 * (i + 1) for i in range(len(bob))]
    assert record["scores"]["Bob"]["trust"] == 6 * len(bob)
    assert record["scores"]["Ann"]["trust"] == 0


def flip_game(ratings: bool) -> tuple[Any, Game]:
    """Two votes for Ann, one for Bob. With ``ratings`` every statement of Bob is doubted and
    every one of Ann's trusted, which outweighs a vote (vote_weight 1)."""
    votes = {"Ann": "Bob", "Bob": "Ann", "Cara": "Ann", "Dan": "Ann"}

    def reply(agent: Agent, decision: Decision) -> Any:
        name = agent.seat.sheet.me.name
        if decision.type == "turn":
            return Questions(target=decision.candidates[0], questions=["Why?"])
        if decision.type == "rate":
            speaker = decision.statement.speaker
            if not ratings:
                return Rating(trust=1, doubt=1)
            return Rating(trust=0, doubt=2) if speaker == "Bob" else \
                Rating(trust=2, doubt=0) if speaker == "Ann" else Rating(trust=1, doubt=1)
        if decision.type == "accuse":
            return Accusation(target="Bob" if name == "Ann" else "Ann")
        if decision.type == "vote":
            return Vote(target=votes[name])
        return None

    chosen = parse_procedure({"name": "flip", "stages": [
        {"kind": "introduction"}, {"kind": "rate"},
        {"kind": "accusation_vote", "vote_weight": 1}, {"kind": "reveal"}]}, "flip")
    game, _ = table_game(one_act(), chosen, reply=reply)
    return run(game), game


def test_trust_and_doubt_change_who_the_vote_eliminates() -> None:
    plain, _ = flip_game(ratings=False)
    rated, game = flip_game(ratings=True)
    assert plain.votes == rated.votes
    assert plain.outcomes[0].eliminated == ["Ann"] and plain.winner == "civilians"
    assert rated.outcomes[0].eliminated == ["Bob"] and rated.winner == "murderers"
    verdict = rated.extra["mirage"]["verdicts"][0]
    assert verdict["votes"] == {"Ann": 3, "Bob": 1}
    assert verdict["suspicion"] == {"Ann": -6, "Bob": 6}
    assert verdict["scores"] == {"Ann": 3 - 6, "Bob": 1 + 6}
    assert game.table.events[-1].type == "game_ended"


def test_the_vote_is_among_the_accused_and_defaults_to_the_reference_weight() -> None:
    def reply(agent: Agent, decision: Decision) -> Any:
        if decision.type == "accuse":
            return Accusation(target="Dan" if "Dan" in decision.candidates else "Cara")
        return None

    game, agents = table_game(one_act(), parse_procedure({"name": "v", "stages": [
        {"kind": "accusation_vote"}]}, "v"), reply=reply)
    result = run(game)
    votes = [d for a in agents.values() for d in a.decisions if d.type == "vote"]
    assert votes and all(sorted(d.candidates) == ["Cara", "Dan"] for d in votes)
    assert all(sorted(d.accused) == ["Cara", "Dan"] for d in votes)
    verdict = result.extra["mirage"]["verdicts"][0]
    assert verdict["scores"] == {seat: 4.0 * n for seat, n in
                                 {"Dan": verdict["votes"].get("Dan", 0),
                                  "Cara": verdict["votes"].get("Cara", 0)}.items()}


def test_a_tie_in_the_combined_score_names_nobody_by_default() -> None:
    def reply(agent: Agent, decision: Decision) -> Any:
        name = agent.seat.sheet.me.name
        if decision.type == "accuse":
            return Accusation(target="Bob" if name != "Bob" else "Ann")
        if decision.type == "vote":
            return Vote(target={"Ann": "Bob", "Bob": "Ann", "Cara": "Ann", "Dan": "Bob"}[name])
        return None

    game, _ = table_game(one_act(), parse_procedure({"name": "v", "stages": [
        {"kind": "accusation_vote"}, {"kind": "reveal"}]}, "v"), reply=reply)
    result = run(game)
    assert result.outcomes[0].eliminated == [] and result.winner == "murderers"


@pytest.mark.parametrize("script_id", list(bundled_scripts()))
def test_mirage_games_finish_on_every_bundled_mystery(script_id: str) -> None:
    script = load_script(bundled_scripts()[script_id])
    model = ScriptedModel(seed=2)
    log = CallLog()
    seats = {n: Seat(make_agent("mirage"), model=log.seat(model, n)) for n in script.names}
    game = Game(script, find_procedure("mirage").with_options(rounds=2), seats, seed=3)
    result = run(game)
    events = game.table.events
    assert result.failures == 0, [e.error for e in events if isinstance(e, Failure)]
    assert sum(isinstance(e, GameEnded) for e in events) == 1
    assert len(result.outcomes) == (max(1, len(script.victims)))
    assert result.extra["mirage"]["statements"]
    purposes = Counter(r.purpose for r in log.sink.records)
    assert purposes["summarise.script"] >= len(script.names)
    assert purposes["rate.trust"] == purposes["rate.doubt"] > 0
    if len(script.acts) > 1:
        acts = {e.act for e in events if isinstance(e, ActStarted)}
        assert acts == {a.number for a in script.acts}


def mirage_scripts(datasets: Any) -> list[Script]:
    return [import_script("mirage", p) for p in discover("mirage", datasets / "mirage")]


@pytest.mark.datasets
def test_mirage_games_finish_on_imported_mirage_scripts(datasets: Any) -> None:
    """Every MIRAGE script (phased ones act by act), one round each to stay fast."""
    for script in mirage_scripts(datasets):
        game, _ = table_game(script, find_procedure("mirage").with_options(rounds=1),
                             reply=investigator)
        result = run(game)
        events = game.table.events
        found = Counter(e.clue_id for e in events if isinstance(e, ClueRevealed) and e.found_by)
        assert not found or max(found.values()) == 1, script.id
        assert sum(isinstance(e, GameEnded) for e in events) == 1, script.id
        started = {e.act for e in events if isinstance(e, ActStarted)}
        assert started >= {a.number for a in script.acts if a.number > 1}, script.id
        assert result.extra["mirage"]["verdicts"], script.id


class Person(PersonAgent):
    """A person who rates every statement of a round 2 trust, 0 doubt on one form."""

    architecture = "person"

    def __init__(self) -> None:
        self.forms: list[RateRound] = []

    async def on_speak(self, decision: Speak) -> Speech:
        return Speech(text="I was in the library.")

    async def on_turn(self, decision: TakeTurn) -> Questions:
        return Questions(target=decision.candidates[0], questions=["Where were you?"])

    async def on_rate_round(self, decision: RateRound) -> Ratings:
        self.forms.append(decision)
        return Ratings(ratings=[Rating(trust=2, doubt=0) for _ in decision.statements])

    async def on_accuse(self, decision: Accuse) -> Accusation:
        return Accusation(target=None)

    async def on_vote(self, decision: CastVote) -> Vote:
        return Vote(target=decision.candidates[0])


def test_a_person_rates_each_round_on_one_form_and_agents_rate_as_before() -> None:
    script = tiny()
    person = Person()
    seats = {name: Seat(make_agent("extractive")) for name in script.names}
    seats["Ann"] = Seat(person)
    game = Game(script, find_procedure("mirage").with_options(rounds=2), seats, seed=0)
    result = run(game)
    events = game.table.events
    rated_by_ann = [e for e in events if isinstance(e, Rated) and e.rater == "Ann"]
    others_said = [e for e in events if isinstance(e, Spoke) and e.speaker != "Ann"
                   and e.kind in ("introduction", "question", "answer", "statement")
                   and e.audience == "public"]
    assert len(person.forms) >= 3  # the introductions, then each round of each act
    assert sum(len(f.statements) for f in person.forms) == len(rated_by_ann)
    assert {r.statement for r in rated_by_ann} == {e.index for e in others_said}
    assert all((r.trust, r.doubt) == (2, 0) for r in rated_by_ann)
    agents_rated = [e for e in events if isinstance(e, Rated) and e.rater != "Ann"]
    assert agents_rated
    scores = result.extra["mirage"]["scores"]
    bob_by_ann = sum(r.trust for r in rated_by_ann if r.speaker == "Bob")
    assert scores["Bob"]["trust"] >= bob_by_ann
