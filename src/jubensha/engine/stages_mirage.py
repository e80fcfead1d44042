"""Internal.

The MIRAGE (MPIRD-LLMA) stage kinds: open conversation, trust/doubt ratings, and the
accusation vote that weighs votes against accumulated suspicion.

Sources: the MPIRD-LLMA paper, section 2.1 (A) open conversation, (B) Ask / Investigate,
(C) murder voting, and its reference code (``lime728/MIRAGE``, ``ScriptEnvs``), which
fixes what the paper leaves open: five turns per seat, one clue per investigation (a place
keeps its other clues for later searches), a seat never searches the place named after
itself, every statement is scored for doubt (added) and belief (subtracted) and each vote
adds the number of seats to the suspect's score. ``docs/modes.md`` explains every choice.

State kept in ``table.state.extra["mirage"]`` (copied into the game's result):
``scores`` per seat (trust, doubt, ratings), ``statements`` (each rated statement with its
totals and the speaker's running totals) and ``verdicts`` (the combined score per suspect).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from pydantic import Field

from jubensha.engine.agent import PersonAgent
from jubensha.engine.decisions import (
    Investigate,
    Questions,
    RateRound,
    RateStatement,
    Rating,
    Ratings,
    Speak,
    Speech,
    TakeTurn,
)
from jubensha.engine.events import (
    ClueRevealed,
    Investigated,
    Rated,
    SpeechKind,
    Spoke,
)
from jubensha.engine.registry import StageSpec, register_stage
from jubensha.engine.stages import (
    ActSpec,
    CluesSpec,
    acts_from,
    check_speech,
    collect_accusations,
    collect_ballots,
    match_name,
    nobody_label,
    run_act,
    run_clues,
)
from jubensha.engine.table import Check, Table
from jubensha.engine.voting import Ballots, outcome, tally, victims_to_vote
from jubensha.prompts import render
from jubensha.scripts.model import Clue

RATED_KINDS: tuple[SpeechKind, ...] = ("introduction", "statement", "question", "answer")
"""Statements scored by default: the reference code scores introductions, each turn's
speech and each answer."""


def mirage_state(table: Table) -> dict[str, Any]:
    """The MIRAGE part of the shared state, created on first use."""
    return table.state.extra.setdefault("mirage", {"scores": {}, "statements": [],
                                                   "rated": [], "verdicts": [],
                                                   "pending": {}})


def host_line(table: Table, name: str, **values: Any) -> str:
    return render("mirage", name, table.language, **values)


# -- trust and doubt -------------------------------------------------------------------------
async def rate(table: Table, statement: Spoke, audience: Literal["log", "rater"] = "log"
               ) -> None:
    """Every other seat rates ``statement``: agents at once (concurrently), each rating a
    ``Rated`` event added to the speaker's running totals; a person's rating waits for
    ``rate_people`` (one form per round, not one question per statement). A rating that
    failed is left out rather than replaced by an invented score."""
    state = mirage_state(table)
    if statement.index in state["rated"]:
        return
    state["rated"].append(statement.index)
    entry = {"index": statement.index, "speaker": statement.speaker, "kind": statement.kind,
             "stage": table.stage, "round": table.round, "trust": 0, "doubt": 0,
             "ratings": 0, "running_trust": 0, "running_doubt": 0}
    state["statements"].append(entry)
    raters = table.others(statement.speaker)
    people = [r for r in raters if isinstance(table.agents[r], PersonAgent)]
    for person in people:
        state["pending"].setdefault(person, []).append(statement.index)
    agents = [r for r in raters if r not in people]
    neutral = Rating(trust=1, doubt=1)
    asks = [(rater, RateStatement(statement=statement), lambda: neutral, None)
            for rater in agents]
    actions = await table.ask_all(asks)
    for rater, action in zip(agents, actions, strict=True):
        if action is not neutral and isinstance(action, Rating):
            await add_rating(table, statement, rater, action, audience)
    _running(state, entry)


async def add_rating(table: Table, statement: Spoke, rater: str, rating: Rating,
                     audience: Literal["log", "rater"]) -> None:
    """One rating: its ``Rated`` event, and the statement's and the speaker's totals."""
    state = mirage_state(table)
    await table.emit(Rated(rater=rater, speaker=statement.speaker, statement=statement.index,
                           trust=rating.trust, doubt=rating.doubt,
                           audience=[] if audience == "log" else [rater]))
    score = state["scores"].setdefault(statement.speaker,
                                       {"trust": 0, "doubt": 0, "ratings": 0})
    score["trust"] += rating.trust
    score["doubt"] += rating.doubt
    score["ratings"] += 1
    entry = next(e for e in state["statements"] if e["index"] == statement.index)
    entry["trust"] += rating.trust
    entry["doubt"] += rating.doubt
    entry["ratings"] += 1


def _running(state: dict[str, Any], entry: dict[str, Any]) -> None:
    score = state["scores"].setdefault(entry["speaker"], {"trust": 0, "doubt": 0,
                                                          "ratings": 0})
    entry["running_trust"], entry["running_doubt"] = score["trust"], score["doubt"]


async def rate_people(table: Table, audience: Literal["log", "rater"] = "log") -> None:
    """Each person rates the statements waiting for them, on one form (``RateRound``);
    a statement left unrated is left out."""
    state = mirage_state(table)
    pending: dict[str, list[int]] = state["pending"]
    by_index = {e.index: e for e in table.events if isinstance(e, Spoke)}
    for person in [p for p in table.seats if pending.get(p)]:
        statements = [by_index[i] for i in pending.pop(person)]
        action = await table.ask(person, RateRound(statements=statements))
        ratings = action.ratings if isinstance(action, Ratings) else []
        for statement, rating in zip(statements, ratings, strict=False):
            if rating is not None:
                await add_rating(table, statement, person, rating, audience)
        for statement in statements:
            _running(state, next(e for e in state["statements"]
                                 if e["index"] == statement.index))


async def emit_rated(table: Table, spoke: Spoke, rated: bool,
                     audience: Literal["log", "rater"]) -> Spoke:
    """Emit ``spoke``; rate it when the stage rates that kind of statement."""
    event = await table.emit(spoke)
    assert isinstance(event, Spoke)
    if rated:
        await rate(table, event, audience)
    return event


class RateSpec(StageSpec):
    """Every seat rates each public statement made so far that nobody has rated yet (e.g.
    the introductions, which the reference code scores too)."""

    kind: Literal["rate"] = "rate"
    kinds: list[SpeechKind] = Field(default_factory=lambda: list(RATED_KINDS))
    audience: Literal["log", "rater"] = Field(
        "log", description="log: ratings are log-only; rater: the rater sees its own.")


def _unrated(spec: RateSpec, table: Table) -> list[Spoke]:
    rated = set(mirage_state(table)["rated"]) if "mirage" in table.state.extra else set()
    return [e for e in table.events if isinstance(e, Spoke) and e.audience == "public"
            and e.kind in spec.kinds and e.index not in rated]


@register_stage(RateSpec, skip=lambda spec, table: not _unrated(spec, table))
async def run_rate(spec: RateSpec, table: Table) -> None:
    await table.announce(host_line(table, "host_rate"))
    for statement in _unrated(spec, table):
        await rate(table, statement, spec.audience)
    await rate_people(table, spec.audience)


# -- open conversation -------------------------------------------------------------------------
class ConversationSpec(StageSpec):
    """Rounds of open conversation: each seat in turn asks one seat a question (which must
    be answered) or investigates one place (one clue found there becomes public). Every
    statement is rated by the other seats when ``rate`` is on."""

    kind: Literal["conversation"] = "conversation"
    rounds: int = Field(5, ge=1, description="Turns per seat (per act with acts: all).")
    acts: Literal["current", "all"] = Field(
        "current", description="all: play every remaining act in turn: start it, hand out "
        "its clues, then the rounds (MIRAGE's phased scripts).")
    investigate: bool = Field(True, description="Offer places to search (else only Ask).")
    own_place: bool = Field(False, description="May a seat search the place named after "
                                               "itself (the reference code: no).")
    rate: bool = True
    rate_kinds: list[SpeechKind] = Field(default_factory=lambda: list(RATED_KINDS))
    ratings: Literal["log", "rater"] = "log"

    def scaled(self, *, rounds: int | None = None,
               questions: int | None = None) -> ConversationSpec:
        return self.model_copy(update={"rounds": rounds}) if rounds else self

    def act_after(self, act: int, last: int) -> int:
        return last if self.acts == "all" else act


def hidden_clues(table: Table, location: str | None = None) -> list[Clue]:
    """Clues still hidden at a place (any place when None) in the acts released so far."""
    return [clue for clue in table.script.clues
            if clue.location and clue.id not in table.state.released
            and clue.act <= table.state.act
            and (location is None or clue.location == location)]


def places_for(table: Table, seat: str, own_place: bool = False) -> list[str]:
    """Places ``seat`` may search now: those with a hidden clue, not its own name."""
    places = list(dict.fromkeys(clue.location for clue in hidden_clues(table)
                                if own_place or clue.extra.get("owner") != seat))
    return [place for place in places if place is not None]


def check_turn(table: Table, candidates: Sequence[str], places: Sequence[str]) -> Check:
    """A question to a candidate or a search of an offered place; otherwise a seeded
    random valid choice (a search when places remain, else a question)."""

    def check(action: Questions | Investigate) -> tuple[Questions | Investigate, str | None]:
        if isinstance(action, Investigate):
            place = match_name(action.location, places)
            if place is not None:
                return Investigate(location=place, statement=action.statement.strip()), None
            problem = f"place {action.location!r} is not one of {list(places)}"
        else:
            target = match_name(action.target, candidates)
            questions = [q.strip() for q in action.questions if q.strip()]
            if target is not None and questions:
                return Questions(target=target, questions=questions[:1]), None
            problem = (f"target {action.target!r} is not one of {list(candidates)}"
                       if target is None else "no question")
        return turn_fallback(table, candidates, places), problem

    return check


def turn_fallback(table: Table, candidates: Sequence[str], places: Sequence[str]
                  ) -> Questions | Investigate:
    if places:
        return Investigate(location=table.rng.choice(list(places)))
    target = table.rng.choice(list(candidates))
    return Questions(target=target, questions=[table.host_text("fallback_question", to=target)])


async def take_turn(spec: ConversationSpec, table: Table, seat: str) -> None:
    candidates = table.others(seat)
    places = places_for(table, seat, spec.own_place) if spec.investigate else []
    action = await table.ask(seat, TakeTurn(candidates=candidates, locations=places),
                             fallback=lambda: turn_fallback(table, candidates, places),
                             check=check_turn(table, candidates, places))
    rated = {kind for kind in spec.rate_kinds} if spec.rate else set()
    if isinstance(action, Investigate):
        await investigate(spec, table, seat, action, "statement" in rated)
        return
    assert isinstance(action, Questions)
    target = action.target
    question = await emit_rated(table, Spoke(speaker=seat, kind="question",
                                             text=action.questions[0], to=target),
                                "question" in rated, spec.ratings)
    fallback = table.host_text("fallback_answer")
    answer = await table.ask(target, Speak(kind="answer", prompt=table.host_text(
        "answer", to=target, asker=seat), question=question),
        fallback=lambda: Speech(text=fallback), check=check_speech(fallback))
    assert isinstance(answer, Speech)
    await emit_rated(table, Spoke(speaker=target, kind="answer", text=answer.text, to=seat,
                                  reply_to=question.index), "answer" in rated, spec.ratings)


async def investigate(spec: ConversationSpec, table: Table, seat: str, action: Investigate,
                      rated: bool) -> None:
    """Search a place: the seat's remark (if any), then the first clue still hidden there,
    shown to everyone. Each clue is found once."""
    if action.statement:
        await emit_rated(table, Spoke(speaker=seat, kind="statement", text=action.statement),
                         rated, spec.ratings)
    found = hidden_clues(table, action.location)[:1]
    await table.emit(Investigated(seat=seat, location=action.location,
                                  clue_ids=[clue.id for clue in found],
                                  clue_titles=[clue.title or clue.id for clue in found]))
    for clue in found:
        table.state.released.add(clue.id)
        await table.emit(ClueRevealed(clue_id=clue.id, title=clue.title, text=clue.text,
                                      image=clue.image, caption=clue.caption,
                                      location=clue.location, found_by=seat))


def _acts_to_play(spec: ConversationSpec, table: Table) -> list[int]:
    if spec.acts == "current":
        return [table.state.act]
    return [table.state.act, *(n for n in acts_from(table) if n > table.state.act)]


@register_stage(ConversationSpec)
async def run_conversation(spec: ConversationSpec, table: Table) -> None:
    acts = _acts_to_play(spec, table)
    for act in acts:
        if act != table.state.act:
            await run_act(ActSpec(act=act), table)
            clues = CluesSpec(act=act, located="skip")
            if any(c.act == act and not c.location and c.id not in table.state.released
                   for c in table.script.clues):
                await run_clues(clues, table)
        for number in range(1, spec.rounds + 1):
            table.round = number
            await table.announce(host_line(table, "host_round", round=number,
                                           rounds=spec.rounds,
                                           act=act, phased=len(acts) > 1))
            for seat in table.seats:
                await take_turn(spec, table, seat)
            await rate_people(table, spec.ratings)  # a person rates the round on one form
    table.round = None


# -- accusations and the vote --------------------------------------------------------------
class AccusationVoteSpec(StageSpec):
    """Each seat may accuse one other seat; then everyone votes among the accused (among
    everyone when nobody accused). A suspect's final score is
    ``vote_weight * votes + suspicion_weight * (doubt - trust)``, the doubt and trust it
    accumulated from the ratings; the highest score is the accused culprit."""

    kind: Literal["accusation_vote"] = "accusation_vote"
    decides: ClassVar[bool] = True
    accuse: bool = Field(True, description="Ask for accusations first (paper, 2.1 C); "
                                           "off: the vote is over every seat.")
    among: Literal["accused", "all"] = "accused"
    vote_weight: float | None = Field(
        None, ge=0, description="Score per vote; default: the number of seats (reference "
        "code).")
    suspicion_weight: float = Field(1.0, ge=0, description="Weight of doubt minus trust.")
    votes: Literal["log", "public"] = Field(
        "log", description="log: ballots stay secret until the reveal.")


def suspicion(table: Table, seat: str) -> int:
    """Accumulated doubt minus trust of ``seat`` (0 without ratings)."""
    scores = table.state.extra.get("mirage", {}).get("scores", {}).get(seat)
    return int(scores["doubt"] - scores["trust"]) if scores else 0


def combined_scores(table: Table, spec: AccusationVoteSpec, ballots: Ballots,
                    suspects: Sequence[str]) -> dict[str, float]:
    weight = spec.vote_weight if spec.vote_weight is not None else float(len(table.seats))
    votes = tally(ballots)
    return {seat: weight * votes.get(seat, 0) + spec.suspicion_weight * suspicion(table, seat)
            for seat in suspects}


def leaders(scores: dict[str, float]) -> list[str]:
    if not scores:
        return []
    top = max(scores.values())
    return [seat for seat, score in scores.items() if score == top]


async def accusations(table: Table) -> list[str]:
    """Each seat in turn accuses one other seat or no one; the distinct accused, in order."""
    await collect_accusations(table, decisive=True)
    return list(dict.fromkeys(a.accused for a in table.state.accusations if a.accused))


@register_stage(AccusationVoteSpec)
async def run_accusation_vote(spec: AccusationVoteSpec, table: Table) -> None:
    await rate_people(table)  # nothing a person still owes is left out of the scores
    accused = await accusations(table) if spec.accuse else []
    suspects = accused if spec.among == "accused" and accused else list(table.seats)
    rules = table.voting
    for victim in victims_to_vote(table.script, rules):
        table.round = None
        nobody = nobody_label(table)
        await table.announce(host_line(table, "host_vote", victim=victim, suspects=suspects,
                                       nobody=nobody))
        among = [*suspects, nobody] if nobody else suspects
        ballots = await collect_ballots(table, victim, among, accused=accused,
                                        public=spec.votes != "log")
        scores = combined_scores(table, spec, ballots, among)
        top = leaders(scores)
        if len(top) > 1 and rules.ties == "revote":
            table.round = 2
            await table.say("revote", victim=victim, candidates=top)
            ballots = await collect_ballots(table, victim, top, accused=accused,
                                            public=spec.votes != "log")
            scores = combined_scores(table, spec, ballots, top)
            top = leaders(scores)
        eliminated = resolve_tie(table, top)
        mirage_state(table)["verdicts"].append({
            "victim": victim, "votes": tally(ballots), "scores": scores,
            "suspicion": {seat: suspicion(table, seat) for seat in suspects},
            "eliminated": eliminated})
        table.state.outcomes.append(outcome(table.script, victim, ballots, eliminated))
    table.round = None


def resolve_tie(table: Table, top: list[str]) -> list[str]:
    """One leader is eliminated; a tie follows the procedure's tie rule (a tie left after
    a re-vote eliminates no one)."""
    if len(top) <= 1:
        return top
    ties = table.voting.ties
    if ties == "all":
        return top
    if ties == "random":
        return [table.rng.choice(sorted(top))]
    return []
