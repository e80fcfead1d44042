"""The built-in stage kinds: act, acts, introduction, questioning, clues, statement,
accusation, vote and reveal. Each is an options model and a runner registered in
``engine.registry``; see ``docs/procedures.md`` for what each does and which paper it
follows. ``run_stage`` runs any registered kind: the game runs its procedure with it, and
the ``acts`` kind its stages once per act."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar, Literal

from pydantic import Field, SerializeAsAny, field_validator

from jubensha.engine.acts import playable_acts
from jubensha.engine.decisions import (
    Accusation,
    Accuse,
    AskQuestions,
    CastVote,
    Questions,
    Speak,
    Speech,
    Vote,
)
from jubensha.engine.drafts import hearing
from jubensha.engine.events import (
    Accused,
    ActStarted,
    Audience,
    ClueRevealed,
    GameEnded,
    Spoke,
    StageStarted,
    VoteCast,
)
from jubensha.engine.registry import StageSpec, register_stage, specs_by_kind, stage_kind
from jubensha.engine.table import Check, Table, VoteRecord
from jubensha.engine.voting import (
    NOBODY,
    Ballots,
    ballot_candidates,
    count_votes,
    offers_nobody,
    outcome,
    records_solution,
    victims_to_vote,
    winner,
)
from jubensha.scripts.model import PUBLIC, Clue


def match_name(name: str | None, candidates: Sequence[str]) -> str | None:
    """``name`` as one of ``candidates``, ignoring case and surrounding space; else None."""
    if name is None:
        return None
    wanted = name.strip().casefold()
    return next((c for c in candidates if c.casefold() == wanted), None)


def check_speech(fallback: str) -> Check:
    def check(action: Speech) -> tuple[Speech, str | None]:
        text = action.text.strip()
        if not text:
            return Speech(text=fallback), "empty speech"
        return Speech(text=text), None

    return check


def check_questions(table: Table, candidates: Sequence[str], count: int) -> Check:
    """Target among the candidates (else a seeded random one), exactly ``count`` questions."""

    def check(action: Questions) -> tuple[Questions, str | None]:
        problems = []
        target = match_name(action.target, candidates)
        if target is None:
            target = table.rng.choice(list(candidates))
            problems.append(f"target {action.target!r} is not one of {list(candidates)}")
        questions = [q.strip() for q in action.questions if q.strip()]
        if len(questions) != count:
            problems.append(f"{len(questions)} questions instead of {count}")
            filler = table.host_text("fallback_question", to=target)
            questions = (questions + [filler] * count)[:count]
        return Questions(target=target, questions=questions), "; ".join(problems) or None

    return check


def check_choice(candidates: Sequence[str], make: type[Vote | Accusation]) -> Check:
    """A vote or accusation for a candidate or for no one; anything else abstains."""

    def check(action: Vote | Accusation) -> tuple[Vote | Accusation, str | None]:
        target = match_name(action.target, candidates)
        if action.target is not None and target is None:
            return make(target=None, reason=action.reason), (
                f"target {action.target!r} is not one of {list(candidates)}; counted as none")
        return make(target=target, reason=action.reason), None

    return check


async def ask_and_answer(table: Table, asker: str, candidates: Sequence[str], count: int,
                         audience: Literal["public", "pair"] = "public") -> str:
    """One questioning turn: ``asker`` picks a target and asks; the target answers each
    question. Returns the target."""
    fallback_target = table.rng.choice(list(candidates))
    with hearing("public" if audience == "public" else [asker]):
        action = await table.ask(
            asker, AskQuestions(candidates=list(candidates), count=count),
            fallback=lambda: Questions(target=fallback_target, questions=[
                table.host_text("fallback_question", to=fallback_target)] * count),
            check=check_questions(table, candidates, count))
    assert isinstance(action, Questions)
    target = action.target
    heard: Audience = "public" if audience == "public" else [asker, target]
    fallback_answer = table.host_text("fallback_answer")
    for text in action.questions:
        question = await table.emit(Spoke(speaker=asker, kind="question", text=text, to=target,
                                          audience=heard))
        assert isinstance(question, Spoke)
        with hearing(heard):
            answer = await table.ask(
                target, Speak(kind="answer", prompt=table.host_text("answer", to=target,
                                                                       asker=asker),
                              question=question),
                fallback=lambda: Speech(text=fallback_answer),
                check=check_speech(fallback_answer))
        assert isinstance(answer, Speech)
        await table.emit(Spoke(speaker=target, kind="answer", text=answer.text, to=asker,
                               reply_to=question.index, audience=heard))
    return target


async def speak_in_turn(table: Table, seat: str, kind: Literal["introduction", "statement",
                                                               "clue_share", "reasoning"],
                        prompt: str) -> None:
    """The host gives ``seat`` the floor with ``prompt``; the seat speaks to everyone."""
    await table.announce(prompt, to=seat)
    fallback = table.host_text("fallback_speech")
    action = await table.ask(seat, Speak(kind=kind, prompt=prompt),
                             fallback=lambda: Speech(text=fallback),
                             check=check_speech(fallback))
    assert isinstance(action, Speech)
    await table.emit(Spoke(speaker=seat, kind=kind, text=action.text))


_NUMBERED = re.compile(r"(-\d+)?(-act\d+)?$")
"""What ``Procedure.with_ids`` and the ``acts`` kind add to a stage's own id."""


# -- running a stage -------------------------------------------------------------------------
async def run_stage(spec: StageSpec, table: Table, key: int | str) -> None:
    """Run one stage of any registered kind: seed it by ``key``, skip it when its kind says
    there is nothing to do, announce it, run it."""
    kind = stage_kind(spec.kind)
    table.begin_stage(key, spec.id or spec.kind)
    if kind.skip is not None and kind.skip(spec, table):
        return
    if spec.announced:
        named = _NUMBERED.sub("", spec.id)  # the host's title of "open_questioning-2"
        title = spec.title or table.host_text("title", kind=spec.kind, id=named)
        await table.emit(StageStarted(kind=spec.kind, title=title))
    await kind.run(spec, table)


# -- act -----------------------------------------------------------------------------------
class ActSpec(StageSpec):
    """Start an act: its public text to everyone, each seat's act sheet privately. Act 1 is
    the distribution of the character scripts."""

    kind: Literal["act"] = "act"
    act: int | Literal["next"] = Field("next", description="An act number, or the next act.")

    def act_after(self, act: int, last: int) -> int:
        number = act + 1 if self.act == "next" else self.act
        return number if number <= last else act


def _act_number(spec: ActSpec, table: Table) -> int:
    return table.state.act + 1 if spec.act == "next" else spec.act


def _no_such_act(spec: ActSpec, table: Table) -> bool:
    number = _act_number(spec, table)
    return number > 1 and number not in playable_acts(table.script)


@register_stage(ActSpec, skip=_no_such_act)
async def run_act(spec: ActSpec, table: Table) -> None:
    number = _act_number(spec, table)
    table.state.act = number
    table.state.started.add(number)
    act = next((a for a in table.script.acts if a.number == number), None)
    await table.say("distribution" if number == 1 else "act_started", act=number,
                    title=act.title if act else "")
    if act is not None and act.public_text:
        await table.emit(ActStarted(act=number, public_text=act.public_text))
    for seat in table.seats:
        sheet = table.script.character(seat).act_sheet(number)
        if sheet is not None:
            await table.emit(ActStarted(act=number, sheet=sheet, audience=[seat]))


# -- acts ----------------------------------------------------------------------------------
class ActsSpec(StageSpec):
    """Play every act of the script in turn: for the current act and then each later one
    (started as by ``act``: its public text, each seat's sheet), run ``stages``. On a
    one-act script the stages run once. Stages repeated in a later act carry the act in
    their id (``open_questioning-act2``)."""

    kind: Literal["acts"] = "acts"
    stages: list[SerializeAsAny[StageSpec]] = Field(
        min_length=1, description="The stages each act runs, in order.")
    announced: ClassVar[bool] = False

    @field_validator("stages", mode="before")
    @classmethod
    def _by_kind(cls, value: Any) -> Any:
        if isinstance(value, list) and any(isinstance(item, dict) and item.get("kind") ==
                                           "acts" for item in value):
            raise ValueError("an `acts` stage cannot hold another `acts` stage")
        return specs_by_kind(value)

    def act_after(self, act: int, last: int) -> int:
        return last

    def substages(self) -> list[StageSpec]:
        return list(self.stages)

    def scaled(self, *, rounds: int | None = None, questions: int | None = None) -> ActsSpec:
        stages = [spec.scaled(rounds=rounds, questions=questions) for spec in self.stages]
        return self.model_copy(update={"stages": stages})


def acts_from(table: Table) -> list[int]:
    """The current act (when not over yet) and every later act with content."""
    return [n for n in playable_acts(table.script) if n >= table.state.act]


@register_stage(ActsSpec)
async def run_acts(spec: ActsSpec, table: Table) -> None:
    block = table.stage
    acts = acts_from(table)
    for act in acts:
        if act not in table.state.started:
            table.begin_stage(f"{block}:act{act}", block)
            await run_act(ActSpec(act=act), table)
        for index, inner in enumerate(spec.stages):
            stage_id = inner.id or inner.kind
            if act != acts[0]:
                stage_id = f"{stage_id}-act{act}"
            await run_stage(inner.model_copy(update={"id": stage_id}), table,
                            f"{block}.{index}:act{act}")


# -- introduction --------------------------------------------------------------------------
class IntroductionSpec(StageSpec):
    """The host asks each seat in turn to introduce itself; with ``follow_ups`` every other
    seat then asks it one question (ThinkThrice's initial questioning, interleaved)."""

    kind: Literal["introduction"] = "introduction"
    follow_ups: bool = False
    prompt: str = Field("", description="Replaces the host's default request.")


@register_stage(IntroductionSpec)
async def run_introduction(spec: IntroductionSpec, table: Table) -> None:
    for seat in table.seats:
        prompt = spec.prompt or table.host_text("introduce", to=seat)
        await speak_in_turn(table, seat, "introduction", prompt)
        if spec.follow_ups:
            for asker in table.others(seat):
                await ask_and_answer(table, asker, [seat], 1)


# -- questioning ---------------------------------------------------------------------------
class QuestioningSpec(StageSpec):
    """Rounds of questions. ``choose``: each seat picks a target and asks it ``questions``
    questions. ``each``: each seat in turn is asked ``questions`` by every other seat."""

    kind: Literal["questioning"] = "questioning"
    rounds: int = Field(1, ge=1)
    questions: int = Field(1, ge=1, le=10, description="Questions per turn (PLAYER*'s m).")
    targets: Literal["choose", "each"] = "choose"
    may_ask: Literal["anyone", "not_last"] = Field(
        "anyone", description="not_last: a seat may not pick its previous round's target.")
    audience: Literal["public", "pair"] = Field(
        "public", description="pair: only the asker and the target hear the exchange.")

    def scaled(self, *, rounds: int | None = None,
               questions: int | None = None) -> QuestioningSpec:
        """Open rounds (``choose``) take ``--rounds``; every questioning takes ``--questions``."""
        update: dict[str, int] = {"questions": questions} if questions else {}
        if rounds and self.targets == "choose":
            update["rounds"] = rounds
        return self.model_copy(update=update)


@register_stage(QuestioningSpec)
async def run_questioning(spec: QuestioningSpec, table: Table) -> None:
    last_target: dict[str, str] = {}
    for number in range(1, spec.rounds + 1):
        table.round = number
        if spec.targets == "each":
            await table.say("round_each", round=number, rounds=spec.rounds,
                            questions=spec.questions)
            for target in table.seats:
                await table.say("hot_seat", to=target)
                for asker in table.others(target):
                    await ask_and_answer(table, asker, [target], spec.questions, spec.audience)
            continue
        await table.say("round", round=number, rounds=spec.rounds, questions=spec.questions)
        for asker in table.seats:
            candidates = table.others(asker)
            if spec.may_ask == "not_last" and len(candidates) > 1:
                candidates = [c for c in candidates if c != last_target.get(asker)]
            last_target[asker] = await ask_and_answer(table, asker, candidates,
                                                      spec.questions, spec.audience)
    table.round = None


# -- clues ---------------------------------------------------------------------------------
class CluesSpec(StageSpec):
    """Hand out clue cards: public cards to everyone, held cards to their holder only."""

    kind: Literal["clues"] = "clues"
    act: int | None = Field(None, description="Only this act's clues; default: every clue "
                                              "of the acts so far not yet released.")
    located: Literal["release", "skip"] = Field(
        "release", description="skip: leave clues that have a location to be investigated.")


    def plays(self, script: Any, act: int, released: set[str]) -> bool:
        dealt = _dealt(self, script.clues, act, released)
        released.update(clue.id for clue in dealt)
        return bool(dealt)


def _dealt(spec: CluesSpec, clues: list[Clue], act: int, released: set[str]) -> list[Clue]:
    return [clue for clue in clues if clue.id not in released
            and (clue.act == spec.act if spec.act is not None else clue.act <= act)
            and (spec.located == "release" or not clue.location)]


def _pending(spec: CluesSpec, table: Table) -> list[Clue]:
    return _dealt(spec, table.script.clues, table.state.act, table.state.released)


@register_stage(CluesSpec, skip=lambda spec, table: not _pending(spec, table))
async def run_clues(spec: CluesSpec, table: Table) -> None:
    clues = _pending(spec, table)
    await table.say("clues", count=len(clues))
    for clue in clues:
        audience: Audience = "public"
        if clue.holder != PUBLIC:
            audience = [table.script.character(clue.holder).name]
        await table.emit(ClueRevealed(clue_id=clue.id, title=clue.title, text=clue.text,
                                      image=clue.image, caption=clue.caption,
                                      location=clue.location, audience=audience))
        table.state.released.add(clue.id)


# -- statement -----------------------------------------------------------------------------
class StatementSpec(StageSpec):
    """Each seat in turn speaks freely: a statement, its clues, or its reasoning."""

    kind: Literal["statement"] = "statement"
    speech: Literal["statement", "clue_share", "reasoning"] = "statement"
    prompt: str = Field("", description="Replaces the host's default request.")


@register_stage(StatementSpec)
async def run_statement(spec: StatementSpec, table: Table) -> None:
    for seat in table.seats:
        prompt = spec.prompt or table.host_text("statement", to=seat, speech=spec.speech)
        await speak_in_turn(table, seat, spec.speech, prompt)


# -- accusation ----------------------------------------------------------------------------
class AccusationSpec(StageSpec):
    """Each seat in turn publicly accuses one seat (or no one), with a reason."""

    kind: Literal["accusation"] = "accusation"
    self_allowed: bool = False
    decides: ClassVar[bool] = True


async def collect_accusations(table: Table, *, self_allowed: bool = False,
                              decisive: bool = False) -> None:
    """Each seat in turn accuses one seat or no one, publicly; kept in the table's state.
    ``decisive``: the accusations decide the vote (its candidates), so a round of them
    mostly defaulted makes the game no result."""
    for seat in table.seats:
        await table.say("accuse", to=seat)
        candidates = list(table.seats) if self_allowed else table.others(seat)
        action = await table.ask(seat, Accuse(candidates=candidates),
                                 fallback=lambda: Accusation(target=None),
                                 check=check_choice(candidates, Accusation),
                                 decisive=decisive)
        assert isinstance(action, Accusation)
        event = await table.emit(Accused(accuser=seat, accused=action.target,
                                         reason=action.reason))
        assert isinstance(event, Accused)
        table.state.accusations.append(event)


@register_stage(AccusationSpec)
async def run_accusation(spec: AccusationSpec, table: Table) -> None:
    await collect_accusations(table, self_allowed=spec.self_allowed)


# -- vote ----------------------------------------------------------------------------------
class VoteSpec(StageSpec):
    """Everyone votes at once (concurrently), one vote per victim when the rules say so.
    Ballots are log-only; the reveal publishes the tallies. Rules: the procedure's
    ``voting``."""

    kind: Literal["vote"] = "vote"
    decides: ClassVar[bool] = True


async def collect_ballots(table: Table, victim: str | None, among: list[str] | None, *,
                          accused: list[str] | None = None, public: bool = False) -> Ballots:
    """Every seat's vote on ``victim``, asked concurrently, among ``among`` (all seats when
    None); each ballot is a VoteCast event, log-only unless ``public``."""
    rules = table.voting
    if accused is None:
        accused = [a.accused for a in table.state.accusations if a.accused]
    asks = []
    for voter in table.seats:
        candidates = ballot_candidates(voter, table.seats, table.script, rules, victim, among)
        if candidates:
            asks.append((voter, CastVote(candidates=candidates, victim=victim, accused=accused),
                         lambda: Vote(target=None), check_choice(candidates, Vote)))
    actions = await table.ask_all(asks)
    ballots: dict[str, str | None] = {}
    for (voter, *_), action in zip(asks, actions, strict=True):
        assert isinstance(action, Vote)
        ballots[voter] = action.target
        await table.emit(VoteCast(voter=voter, target=action.target, victim=victim,
                                  reason=action.reason, audience="public" if public else []))
    table.state.votes.append(VoteRecord(victim=victim, round=table.round or 1,
                                        ballots=ballots))
    return ballots


def nobody_label(table: Table) -> str:
    """What the host tells seats to answer for "nobody here" ('' when not offered)."""
    return NOBODY if offers_nobody(table.voting) else ""


BallotBox = Callable[[Table, str | None, list[str] | None], Awaitable[Ballots]]


async def vote_per_victim(table: Table, call_vote: Callable[[str | None], Awaitable[Any]],
                          ballot_box: BallotBox = collect_ballots) -> None:
    """For each victim (or once, for "the murderer"): call the vote, collect the ballots,
    re-vote among the tied when the rules say so, and record the outcome."""
    rules = table.voting
    for victim in victims_to_vote(table.script, rules):
        table.round = None
        await call_vote(victim)
        ballots = await ballot_box(table, victim, None)
        count = count_votes(ballots, rules, table.rng)
        if count.revote_among:
            table.round = 2
            await table.say("revote", victim=victim, candidates=count.revote_among)
            ballots = await ballot_box(table, victim, count.revote_among)
            count = count_votes(ballots, rules, table.rng, revote_allowed=False)
        table.state.outcomes.append(outcome(table.script, victim, ballots, count.eliminated))
    table.round = None


@register_stage(VoteSpec)
async def run_vote(spec: VoteSpec, table: Table) -> None:
    nobody = nobody_label(table)
    await vote_per_victim(table, lambda victim: table.say("vote", victim=victim,
                                                          nobody=nobody))


# -- reveal --------------------------------------------------------------------------------
class RevealSpec(StageSpec):
    """Announce each vote's tally and elimination, who the murderers were and who won."""

    kind: Literal["reveal"] = "reveal"
    truth: bool = Field(True, description="Also read out the truth's narrative.")


async def end_game(table: Table, *, audience: Audience = "public", truth: bool = True) -> None:
    """Emit the GameEnded event with the outcomes so far (the reveal, or a log-only record)."""
    rules = table.voting
    story = ""
    if truth and table.script.truth is not None:
        story = table.script.truth.narrative or table.script.truth.solution
    await table.emit(GameEnded(outcomes=table.state.outcomes,
                               winner=winner(table.state.outcomes, table.murderers, rules),
                               truth=story, solution=records_solution(table.script),
                               audience=audience))
    table.state.ended = True


@register_stage(RevealSpec)
async def run_reveal(spec: RevealSpec, table: Table) -> None:
    await table.say("reveal")
    await end_game(table, truth=spec.truth)
