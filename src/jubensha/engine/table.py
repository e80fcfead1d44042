"""The table: what a stage runner works with while it runs.

A runner reads the script (the engine may; agents never do), the seats in turn order and
the shared state; it makes events happen with ``emit`` (the runner states the audience, the
table numbers the event, logs it and hands it to exactly the seats that may see it); it asks
seats for decisions with ``ask``, which never raises: a failed or invalid answer becomes a
``Failure`` event (log only) and the runner's fallback action. ``rng`` is seeded per stage so
tie breaks and fallbacks do not depend on what ran before. The table also holds the rule that
nobody is asked who the culprit is before every act has been played (``engine.acts``), and
counts each decisive decision's fallbacks per seat so a game of defaults is no result.
"""

from __future__ import annotations

import asyncio
import inspect
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, cast

from pydantic import BaseModel

from jubensha.engine.acts import ActNotPlayed, last_act
from jubensha.engine.agent import Agent, PersonAgent, UnsupportedDecision
from jubensha.engine.decisions import (
    BaseAction,
    BaseDecision,
    CastVote,
    Decision,
    Speak,
    decision_kind,
)
from jubensha.engine.drafts import DraftHook, drafting, table_sink
from jubensha.engine.events import Accused, Event, Failure, HostSpoke, VictimOutcome
from jubensha.engine.voting import VotingRules
from jubensha.prompts import render
from jubensha.scripts.model import Language, Script

EventSink = Callable[[Event], Awaitable[None] | None]
"""Receives every event, whatever its audience (the run log, a live transcript)."""

AskHook = Callable[[str, BaseDecision], Callable[[], None] | None]
"""Told which seat is being asked what, before it answers (progress displays); what it
returns, when callable, is called once the seat has answered (or failed to)."""

Check = Callable[[Any], tuple[Any, str | None]]
"""Validates an action: returns the action to use and, when it had to change it, why."""


class VoteRecord(BaseModel):
    """One round of ballots for one victim (``None``: the murderer); round 2 is a re-vote."""

    victim: str | None
    round: int = 1
    ballots: dict[str, str | None]


@dataclass
class TableState:
    """What stages share: the current act, released clues, accusations, votes, outcomes.
    ``extra`` is free space for stage kinds defined outside the engine; it is copied into
    the game's result, so it holds JSON data only."""

    act: int = 1
    started: set[int] = field(default_factory=set)
    """Acts whose sheets and public text were handed out."""
    released: set[str] = field(default_factory=set)
    accusations: list[Accused] = field(default_factory=list)
    votes: list[VoteRecord] = field(default_factory=list)
    outcomes: list[VictimOutcome] = field(default_factory=list)
    ended: bool = False
    decisions: int = 0
    """Decisions asked of seats; ``fallbacks`` of them were answered by the table's default."""
    fallbacks: int = 0
    decisive: dict[str, dict[str, bool]] = field(default_factory=dict)
    """Each decisive round (one vote, the accusations that pick the suspects) → seat →
    whether its answer fell back to the table's default."""
    extra: dict[str, Any] = field(default_factory=dict)


def purpose_of(decision: BaseModel) -> str:
    """The label a decision's calls and failures carry (the speech kind for speeches)."""
    if isinstance(decision, Speak):
        return decision.kind
    return str(getattr(decision, "type", type(decision).__name__))


def decisive_round(decision: BaseDecision, decisive: bool | None) -> str | None:
    """The label of the decisive round ``decision`` belongs to, or None when it decides
    nothing: a vote always decides, an accusation when its stage says so."""
    if isinstance(decision, CastVote):
        victim = f" on {decision.victim}" if decision.victim else ""
        again = "re-vote" if (decision.round or 1) > 1 else "vote"
        return f"the {again}{victim} (stage {decision.stage})"
    if decisive:
        return f"the {purpose_of(decision)}s (stage {decision.stage})"
    return None


class Table:
    def __init__(self, script: Script, voting: VotingRules, agents: Mapping[str, Agent],
                 order: Sequence[str], *, seed: int, language: Language,
                 sinks: Sequence[EventSink] = (), on_ask: AskHook | None = None,
                 on_draft: DraftHook | None = None,
                 decision_timeout_s: float | None = None):
        self.script = script
        self.voting = voting
        self.agents = dict(agents)
        self.seats = list(order)
        self.seed = seed
        self.language = language
        self.state = TableState()
        self.events: list[Event] = []
        self.rng = random.Random(f"{seed}:table")
        self.stage = ""
        self.round: int | None = None
        self._sinks = list(sinks)
        self._on_ask = on_ask
        self._on_draft = on_draft
        self._timeout = decision_timeout_s

    # -- who is at the table -------------------------------------------------------------
    def others(self, seat: str) -> list[str]:
        return [other for other in self.seats if other != seat]

    @property
    def murderers(self) -> list[str]:
        return [name for name in self.script.murderers if name in self.seats]

    @property
    def failures(self) -> int:
        return sum(isinstance(event, Failure) for event in self.events)

    def begin_stage(self, key: int | str, stage_id: str) -> None:
        """Enter a stage: ``key`` seeds its generator (its place in the procedure)."""
        self.stage = stage_id
        self.round = None
        self.rng = random.Random(f"{self.seed}:stage:{key}")

    def require_every_act(self, decision: BaseDecision) -> None:
        """Nobody is asked who the culprit is before the last act has started."""
        last = last_act(self.script)
        if self.state.act < last:
            about = f" about {decision.victim}" if isinstance(decision, CastVote) and \
                decision.victim else ""
            raise ActNotPlayed(
                f"stage {self.stage!r} asks a {purpose_of(decision)}{about} in act "
                f"{self.state.act}, but {self.script.id!r} has {last} acts: every act must "
                "be played first")

    # -- events ----------------------------------------------------------------------------
    async def emit(self, event: Event) -> Event:
        """Number the event, log it, and deliver it to every seat in its audience."""
        event = event.model_copy(update={
            "index": len(self.events),
            "stage": event.stage or self.stage,
            "round": self.round if event.round is None else event.round,
        })
        self.events.append(event)
        for sink in self._sinks:
            result = sink(event)
            if inspect.isawaitable(result):
                await result
        for seat in self.seats:
            if event.visible_to(seat):
                try:
                    await self.agents[seat].observe(event)
                except Exception as exc:  # noqa: BLE001  (a seat's bug must not stop the game)
                    await self._record_failure(seat, "observe", exc, None)
        return event

    def host_text(self, name: str, **values: Any) -> str:
        """A host line from ``prompts/host/<lang>/<name>.j2``."""
        return render("host", name, self.language, **values)

    async def say(self, name: str, *, to: str | None = None, private: bool = False,
                  **values: Any) -> HostSpoke:
        """The host speaks a templated line, to everyone or (``private``) to seat ``to``."""
        return await self.announce(self.host_text(name, to=to, **values), to=to,
                                   private=private)

    async def announce(self, text: str, *, to: str | None = None,
                       private: bool = False) -> HostSpoke:
        """The host says ``text`` (already in the game's language)."""
        audience: Any = [to] if private and to else "public"
        event = await self.emit(HostSpoke(text=text, to=to, audience=audience))
        assert isinstance(event, HostSpoke)
        return event

    # -- decisions -------------------------------------------------------------------------
    async def ask(self, seat: str, decision: BaseDecision, *,
                  fallback: Callable[[], BaseAction] | None = None, check: Check | None = None,
                  decisive: bool | None = None) -> BaseAction:
        """The seat's action for ``decision``; never raises for the seat (failures fall
        back, recorded, to ``fallback`` or else the kind's own). A vote, or an accusation
        asked as ``decisive``, counts toward the rule that a game whose decisive rounds were
        mostly defaulted is no result; a kind that asks who the culprit is, asked before
        the last act, raises ``ActNotPlayed``."""
        decision = decision.model_copy(update={"stage": self.stage, "round": self.round})
        kind = decision_kind(decision.type)
        if kind.asks_culprit:
            self.require_every_act(decision)
        if fallback is None:
            if kind.fallback is None:
                raise TypeError(f"a {kind.name!r} decision has no fallback of its own: "
                                "the stage must give one")
            fallback = partial(kind.fallback, decision)
        self.state.decisions += 1
        answered = self._on_ask(seat, decision) if self._on_ask is not None else None
        try:
            action, fell_back = await self._answer(seat, decision, fallback, check)
        finally:
            if answered is not None:
                answered()
        self.state.fallbacks += fell_back
        label = decisive_round(decision, decisive)
        if label is not None:
            self.state.decisive.setdefault(label, {})[seat] = fell_back
        return action

    async def _answer(self, seat: str, decision: BaseDecision,
                      fallback: Callable[[], BaseAction], check: Check | None
                      ) -> tuple[BaseAction, bool]:
        """The action to use and whether it is the table's (a fallback or a correction)."""
        purpose = purpose_of(decision)
        try:
            person = isinstance(self.agents[seat], PersonAgent)
            timeout = None if person else self._timeout
            action = await asyncio.wait_for(self._decide(seat, decision), timeout)
        except Exception as exc:  # noqa: BLE001  (any failure of a seat becomes a fallback)
            return await self._record_failure(seat, purpose, exc, fallback()), True
        expected = decision_kind(decision.type).actions
        if not isinstance(action, expected):
            names = " or ".join(kind.__name__ for kind in expected)
            return await self.fail(seat, purpose, f"returned {type(action).__name__}, "
                                   f"expected {names}", fallback()), True
        if check is not None:
            fixed, problem = check(action)
            if problem:
                return await self.fail(seat, purpose, f"invalid action: {problem}", fixed,
                                       {"action": action.model_dump(mode="json")}), True
        return action, False

    async def _decide(self, seat: str, decision: BaseDecision) -> BaseAction:
        """The agent's answer, or the kind's default answer when its architecture has none
        (an agent routes a plug-in's kind like its own: to its method ``on_<type>``)."""
        agent = self.agents[seat]
        try:
            with drafting(table_sink(self._on_draft, seat, decision)):
                answer: BaseAction = await agent.decide(cast(Decision, decision))
            return answer
        except UnsupportedDecision:
            default = decision_kind(decision.type).default
            if default is None:
                raise UnsupportedDecision(f"no default answer to a {decision.type!r} "
                                          "decision") from None
            seen = [event for event in self.events if event.visible_to(seat)]
            answer = await default(agent, decision, seen)
            return answer

    async def ask_all(self, asks: Sequence[tuple[str, BaseDecision, Callable[[], BaseAction],
                                                 Check | None]]) -> list[BaseAction]:
        """Independent decisions (e.g. votes) asked concurrently; results in input order."""
        return list(await asyncio.gather(*(
            self.ask(seat, decision, fallback=fallback, check=check)
            for seat, decision, fallback, check in asks)))

    async def fail(self, seat: str, purpose: str, error: str, fallback: Any,
                   details: dict[str, Any] | None = None) -> Any:
        """Record a Failure (log only) and return the fallback that replaces the action."""
        text = fallback.model_dump_json() if isinstance(fallback, BaseModel) else ""
        await self.emit(Failure(seat=seat, purpose=purpose, error=error, fallback=text,
                                details=details or {}, audience=[]))
        return fallback

    async def _record_failure(self, seat: str, purpose: str, exc: BaseException,
                              fallback: Any) -> Any:
        error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return await self.fail(seat, purpose, error, fallback)
