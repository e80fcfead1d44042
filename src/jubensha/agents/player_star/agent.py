"""Internal.

The PLAYER* agent (architecture ``player``): Zhu et al.'s sensor-guided questioning with
a pruner, over several victims and murderers (algorithm 1).

Each questioning turn reads the sensors about the suspects and asks the most suspicious
one m questions; the first turn of every later round first runs the pruner, so the lists
are refined after every round but the last, as in the algorithm.
"""

from __future__ import annotations

from jubensha.agents.player_star.answering import answer, introduce, speak
from jubensha.agents.player_star.config import PlayerConfig
from jubensha.agents.player_star.core import PlayerCore
from jubensha.agents.player_star.pruner import refine
from jubensha.agents.player_star.questioning import ask
from jubensha.agents.player_star.voting import choose, rate
from jubensha.engine import (
    Accusation,
    Accuse,
    Agent,
    AskQuestions,
    CastVote,
    Event,
    Questions,
    RateStatement,
    Rating,
    SeatContext,
    Speak,
    Speech,
    TakeTurn,
    Vote,
)


class PlayerStarAgent(Agent):
    architecture = "player"

    def __init__(self, config: PlayerConfig | None = None) -> None:
        self.config = config or PlayerConfig()
        self._turns: set[tuple[str, int | None]] = set()

    @classmethod
    def from_option(cls, option: str) -> PlayerStarAgent:
        return cls(PlayerConfig.parse(option))

    async def start(self, seat: SeatContext) -> None:
        await super().start(seat)
        self.core = PlayerCore(seat, self.config)
        self._turns = set()

    async def observe(self, event: Event) -> None:
        self.core.observe(event)

    async def on_speak(self, decision: Speak) -> Speech:
        if decision.kind == "introduction":
            return await introduce(self.core, decision)
        if decision.kind == "answer":
            return await answer(self.core, decision)
        return await speak(self.core, decision)

    async def on_ask(self, decision: AskQuestions) -> Questions:
        await self.before_turn(decision.stage, decision.round)
        return await ask(self.core, decision.candidates, decision.count, decision.victim)

    async def on_turn(self, decision: TakeTurn) -> Questions:
        await self.before_turn(decision.stage, decision.round)
        return await ask(self.core, decision.candidates, 1, None)

    async def on_vote(self, decision: CastVote) -> Vote:
        target, reason = await choose(self.core, "vote", decision.candidates, decision.victim,
                                      decision.accused)
        return Vote(target=target, reason=reason)

    async def on_accuse(self, decision: Accuse) -> Accusation:
        target, reason = await choose(self.core, "accuse", decision.candidates)
        return Accusation(target=target, reason=reason)

    async def on_rate(self, decision: RateStatement) -> Rating:
        return await rate(self.core, decision)

    async def before_turn(self, stage: str, round_: int | None) -> None:
        """Run the pruner at the first turn of each round after the first one."""
        key = (stage, round_)
        if self._turns and key not in self._turns and self.config.prune:
            await refine(self.core)
        self._turns.add(key)

    @property
    def suspects(self) -> dict[str | None, list[str]]:
        """Each victim's current suspect list (None: the case has no named victim)."""
        return {victim: self.core.state.suspects(victim) for victim in self.core.victims}
