"""Internal.

The built-in kinds of decision (``decisions.DECISION_KINDS``), with the shared answers to
those an architecture has no way of its own to make.

Mixed ("arena") tables seat architectures built for different papers: a ThinkThrice agent
was never asked to investigate a place or to rate a statement. When an agent raises
``UnsupportedDecision`` the table answers with these defaults instead, built from what the
agent does know how to do:

- an open turn (``TakeTurn``) becomes one question, asked through the agent's own
  ``AskQuestions`` logic;
- an accusation (``Accuse``) is the agent's own vote among the same candidates;
- a trust/doubt rating (``RateStatement``) is one structured call to the seat's model with
  the recent events that seat saw (the table passes only those) and the statement. Its
  prompt is the engine's own (``prompts/defaults``, each event as ``prompts/events`` writes
  it), never an architecture's.

A kind without a default (a speech, questions, a vote) stays unsupported: the table then
records a failure and uses the stage's fallback.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from jubensha.engine.agent import Agent, UnsupportedDecision
from jubensha.engine.decisions import (
    Accusation,
    Accuse,
    AskQuestions,
    CastVote,
    DecisionKind,
    Investigate,
    Questions,
    RateRound,
    RateStatement,
    Rating,
    Ratings,
    Speak,
    Speech,
    TakeTurn,
    Vote,
    register_decision,
)
from jubensha.engine.events import Event, HostSpoke
from jubensha.llm.base import GenerateConfig, Message, ModelError, Request
from jubensha.llm.structured import generate_object
from jubensha.prompts import render

HISTORY_LINES = 30
"""How many of the seat's most recent events the default rating prompt shows."""


class RatingReply(BaseModel):
    # Trust and doubt as a model writes them; the architectures ask for it too
    # (agents.toolkit). No docstring: it would go to the model as the schema's description.
    trust: int = Field(ge=0, le=2)
    doubt: int = Field(ge=0, le=2)


async def answer_turn(agent: Agent, decision: TakeTurn, seen: Sequence[Event] = ()
                      ) -> Questions:
    """An open turn: one question, asked through the agent's own ``AskQuestions`` logic."""
    asked = await agent.decide(AskQuestions(candidates=decision.candidates, count=1,
                                            stage=decision.stage, round=decision.round))
    if not isinstance(asked, Questions):
        raise ModelError(f"asked for questions, got {type(asked).__name__}")
    return Questions(target=asked.target, questions=asked.questions[:1])


async def answer_accuse(agent: Agent, decision: Accuse, seen: Sequence[Event] = ()
                        ) -> Accusation:
    """An accusation: the agent's own vote among the same candidates."""
    vote = await agent.decide(CastVote(candidates=decision.candidates, stage=decision.stage,
                                       round=decision.round))
    if not isinstance(vote, Vote):
        raise ModelError(f"asked for a vote, got {type(vote).__name__}")
    return Accusation(target=vote.target, reason=vote.reason)


async def rate_statement(agent: Agent, decision: RateStatement, seen: Sequence[Event]
                         ) -> Rating:
    """Trust and doubt from one structured call to the seat's model."""
    seat = getattr(agent, "seat", None)
    if seat is None or seat.model is None:
        raise ModelError("the seat has no model to rate a statement with")
    sheet = seat.sheet
    lang = sheet.language
    lines = [render("events", "line", lang, **event.model_dump()) for event in seen
             if not isinstance(event, HostSpoke)]
    statement = decision.statement
    prompt = render("defaults", "rate", lang, me=sheet.me.name, title=sheet.title,
                    history=[line for line in lines if line][-HISTORY_LINES:],
                    speaker=statement.speaker, statement=statement.text)
    request = Request(messages=[Message(role="user", content=prompt)],
                      config=GenerateConfig(max_tokens=120, seed=seat.seed),
                      purpose="default.rate", seat=sheet.me.name)
    reply = await generate_object(seat.model, request, RatingReply, attempts=2, lang=lang)
    return Rating(trust=reply.value.trust, doubt=reply.value.doubt)


async def rate_each(agent: Agent, decision: RateRound, seen: Sequence[Event]) -> Ratings:
    """A round's ratings as the agent rates each statement alone (one failed rating is
    left out, as the table leaves out any failed rating)."""
    ratings: list[Rating | None] = []
    for statement in decision.statements:
        try:
            rated = await agent.decide(RateStatement(statement=statement, stage=decision.stage,
                                                     round=decision.round))
        except UnsupportedDecision:
            rated = await rate_statement(agent, RateStatement(statement=statement), seen)
        except ModelError:
            rated = None
        ratings.append(rated if isinstance(rated, Rating) else None)
    return Ratings(ratings=ratings)


def unrated(decision: RateRound) -> Ratings:
    return Ratings(ratings=[None] * len(decision.statements))


for _kind in (DecisionKind("speak", Speak, (Speech,)),
              DecisionKind("ask", AskQuestions, (Questions,)),
              DecisionKind("turn", TakeTurn, (Questions, Investigate), default=answer_turn),
              DecisionKind("rate", RateStatement, (Rating,), default=rate_statement),
              DecisionKind("rate_round", RateRound, (Ratings,), fallback=unrated,
                           default=rate_each),
              DecisionKind("accuse", Accuse, (Accusation,), default=answer_accuse,
                           asks_culprit=True),
              DecisionKind("vote", CastVote, (Vote,), asks_culprit=True)):
    register_decision(_kind)
