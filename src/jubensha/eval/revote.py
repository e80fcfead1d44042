"""Internal.

Civilian win rate and murderer identification accuracy from N memoryless re-votes
(ThinkThrice section 6.4, figure 3; the voting prompt of its table 15).

A game ends with one vote, a noisy single sample. After the game each seat votes again
``revotes`` times (default 10), each time from its final memory alone: its own sheet, its
retrieved observed events and the host's voting instruction, in one fresh call sampled at
temperature > 0 with its own sample index, so nothing passes from one re-vote to the next.
Re-vote ``i`` of every seat forms ballot set ``i``:

- identification accuracy = ballots naming a culprit of the victim voted on / ballots
  counted (ThinkThrice: "votes received by the murderer over the total number of votes cast
  by all players"; the murderers' ballots count, abstentions do not);
- civilian win rate = ballot sets whose count, under the run's voting rules, eliminates a
  culprit (per the rules' ``civilians_win``) / N; also under PLAYER*'s rule (at least 50%
  of the ballots, murderers never vote for themselves).

Seats that played without memory (``memoryless``, by default ThinkThrice's ``No MR`` row)
re-vote from their sheet alone, as they voted in the game.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from jubensha.agents.answerers import AnswerContext, AnswererConfig
from jubensha.engine.procedure import find_procedure
from jubensha.engine.voting import (
    Ballots,
    VotingRules,
    Winner,
    ballot_candidates,
    count_votes,
    killers_of,
    outcome,
    victims_to_vote,
    winner,
)
from jubensha.eval.judge import ask
from jubensha.eval.postgame import (
    MEMORYLESS,
    answer_context,
    gather_limited,
    seat_access,
    seat_answerer,
)
from jubensha.eval.registry import MetricContext, metric
from jubensha.eval.report import MetricResult, ResultTable, number
from jubensha.eval.vote_metrics import final_ballots, has_solution
from jubensha.eval.votes import Vote, identification
from jubensha.llm.base import GenerateConfig, Message, Model, Request
from jubensha.llm.calls import declare
from jubensha.llm.structured import choice_schema
from jubensha.prompts import render
from jubensha.runlog.folder import RunLog
from jubensha.scripts.model import Script

REVOTE = declare("revote.vote", "seat")


class RevoteOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    revotes: int = Field(10, ge=1, description="Re-votes per seat (ThinkThrice: 10).")
    temperature: float = Field(0.8, gt=0, description="ThinkThrice sampled every GPT call "
                                                      "at 0.8.")
    memory_tokens: int = Field(1500, ge=0, description="Observed events per re-vote.")
    script_tokens: int = Field(1500, ge=0, description="Own script per re-vote.")
    memoryless: list[str] = Field(default_factory=lambda: list(MEMORYLESS))
    murderers_vote: bool = Field(True, description="Count the murderers' ballots.")
    seed: int = Field(0, description="Tie breaks of the win-rate counts.")
    concurrency: int = Field(4, ge=1)
    attempts: int = Field(3, ge=1)


class ReBallot(BaseModel):
    """One re-vote of one seat on one victim (``target`` None: no valid reply)."""

    voter: str
    victim: str | None
    sample: int
    target: str | None
    error: str | None = None


class SeatRevotes(BaseModel):
    on_culprit: int = 0
    counted: int = 0

    @property
    def accuracy(self) -> float:
        return self.on_culprit / self.counted if self.counted else 0.0


class Revotes(MetricResult):
    metric: str = "revote"
    revotes: int
    identification: float
    """Share of re-vote ballots on a culprit of the victim voted on."""
    on_culprit: int
    counted: int
    win_rate: float
    """Share of re-vote ballot sets the civilians win under the run's voting rules."""
    win_rate_player: float
    """The same under PLAYER*'s rule."""
    seats: dict[str, SeatRevotes]
    failures: int
    game_winner: Winner | None = None
    game_identification: float | None = None
    ballots: list[ReBallot] = Field(default_factory=list)

    def tables(self) -> list[ResultTable]:
        summary = ResultTable(
            title=f"Civilian win rate and murderer identification over {self.revotes} "
                  "memoryless re-votes",
            columns=["identification", "on culprit", "ballots", "civilian win rate",
                     "win rate (PLAYER* rule)", "failures", "game winner",
                     "game identification"],
            rows=[[number(self.identification), str(self.on_culprit), str(self.counted),
                   number(self.win_rate), number(self.win_rate_player), str(self.failures),
                   self.game_winner or "–", number(self.game_identification)]],
            notes=["game: the vote actually cast in the game, under the run's rules"])
        seats = ResultTable(title="Re-votes on a culprit, per seat",
                            columns=["seat", "on culprit", "ballots", "accuracy"],
                            rows=[[name, str(s.on_culprit), str(s.counted), number(s.accuracy)]
                                  for name, s in self.seats.items()])
        return [summary, seats]


@cache
def player_rules() -> VotingRules:
    """PLAYER*'s voting rule, as its preset states it."""
    return find_procedure("player").voting


def run_rules(run: RunLog) -> VotingRules:
    """The voting rules the run was played with (defaults when the run does not say)."""
    voting: Any = run.meta.procedure.get("voting", {}) if run.meta else {}
    return VotingRules.model_validate(voting or {})


def vote_winner(script: Script, ballots: Mapping[str | None, Ballots], rules: VotingRules,
                  rng: random.Random) -> Winner:
    """Which side one set of ballots (per victim voted on) makes win under ``rules``; a tie
    the rules would settle by a re-vote eliminates no one here."""
    outcomes = []
    for victim, cast in ballots.items():
        count = count_votes(cast, rules, rng, revote_allowed=False)
        outcomes.append(outcome(script, victim, cast, count.eliminated))
    return winner(outcomes, script.murderers, rules)


def game_ballots(run: RunLog) -> dict[str | None, Ballots]:
    """Each victim's last round of ballots cast in the game."""
    return {victim: {b.voter: b.target for b in cast}
            for victim, cast in final_ballots(run).items()}


async def revote_once(context: AnswerContext, model: Model, victim: str | None,
                      candidates: list[str], sample: int, options: RevoteOptions) -> ReBallot:
    """One fresh vote of the seat: nothing of an earlier re-vote enters its prompt."""
    assert context.memory is not None and context.seat is not None
    lang = context.language
    query = render("eval", "revote_query", lang, victim=victim)
    prompt = render("eval", "revote", lang, me=context.seat, victim=victim,
                    script=await context.memory.script(query, options.script_tokens),
                    memory=await context.memory.dialogue(query, options.memory_tokens),
                    candidates=candidates)
    messages = [Message(role="user", content=prompt)]
    if context.system:
        messages.insert(0, Message(role="system", content=context.system))
    request = Request(messages=messages, purpose=REVOTE, seat=context.seat,
                      sample=sample, config=GenerateConfig(temperature=options.temperature,
                                                           max_tokens=200))
    schema = choice_schema(candidates, field_name="vote", name="Revote")
    judged = await ask(model, request, schema, item=f"{victim or '-'}#{sample}",
                       attempts=options.attempts, lang=lang, kind="seat")
    return ReBallot(voter=context.seat, victim=victim, sample=sample,
                    target=getattr(judged.value, "vote", None),
                    error=judged.failure.error if judged.failure else None)


def score(script: Script, ballots: list[ReBallot], rules: VotingRules, options: RevoteOptions,
          seats: Sequence[str]) -> dict[str, Any]:
    """Identification and win rates of re-vote ballots (see the module docstring)."""
    per_seat = {name: SeatRevotes() for name in seats}
    on_culprit = counted = 0
    for victim in dict.fromkeys(b.victim for b in ballots):
        culprits = killers_of(script, victim)
        for seat in seats:
            mine = [Vote(voter=b.voter, target=b.target) for b in ballots
                    if b.voter == seat and b.victim == victim]
            found = identification(mine, culprits, murderers_vote=options.murderers_vote)
            per_seat[seat].on_culprit += found.on_murderer
            per_seat[seat].counted += found.counted
            on_culprit += found.on_murderer
            counted += found.counted
    rng = random.Random(options.seed)
    wins = wins_player = 0
    for sample in range(options.revotes):
        cast: dict[str | None, dict[str, str | None]] = {}
        for b in ballots:
            if b.sample == sample:
                cast.setdefault(b.victim, {})[b.voter] = b.target
        wins += vote_winner(script, cast, rules, rng) == "civilians"
        wins_player += vote_winner(script, cast, player_rules(), rng) == "civilians"
    return {"identification": on_culprit / counted if counted else 0.0,
            "on_culprit": on_culprit, "counted": counted,
            "win_rate": wins / options.revotes, "win_rate_player": wins_player / options.revotes,
            "seats": per_seat}


async def revote(context: MetricContext, options: RevoteOptions) -> Revotes:
    script, run = context.script, context.run
    rules = run_rules(run).declared(script)
    seats = script.names
    victims = victims_to_vote(script, rules)
    config = AnswererConfig(role_play=True)
    tasks = []
    for seat in seats:
        reads = answer_context(context, seat, seat_access(context, seat, options.memoryless),
                               config)
        model = seat_answerer(context, seat)
        tasks += [revote_once(reads, model, victim,
                              ballot_candidates(seat, seats, script, rules, victim),
                              sample, options)
                  for victim in victims for sample in range(options.revotes)]
    ballots = await gather_limited(tasks, options.concurrency)
    scored = score(script, ballots, rules, options, seats)
    game_winner, game_accuracy = played_game(script, run, rules, options)
    return Revotes(run=str(run.path), revotes=options.revotes, **scored,
                   failures=sum(b.error is not None for b in ballots), game_winner=game_winner,
                   game_identification=game_accuracy, ballots=ballots)


def played_game(script: Script, run: RunLog, rules: VotingRules, options: RevoteOptions
                ) -> tuple[Winner | None, float | None]:
    """The winner and identification accuracy of the vote actually cast in the game."""
    played = game_ballots(run)
    if not played:
        return None, None
    on_culprit = counted = 0
    for victim, cast in played.items():
        found = identification([Vote(voter=v, target=t) for v, t in cast.items()],
                               killers_of(script, victim), murderers_vote=options.murderers_vote)
        on_culprit += found.on_murderer
        counted += found.counted
    return (vote_winner(script, played, rules, random.Random(options.seed)),
            on_culprit / counted if counted else 0.0)


@metric("revote", "Civilian win rate and murderer identification accuracy from N "
        "memoryless re-votes of every seat from its final memory",
        "ThinkThrice, section 6.4 (figure 3) and table 15", applies=has_solution,
        options=RevoteOptions)
async def revote_metric(context: MetricContext) -> Revotes:
    return await revote(context, RevoteOptions.model_validate(context.options.get("revote", {})))
