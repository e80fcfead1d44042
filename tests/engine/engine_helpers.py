"""Engine test helpers: a small four-seat script and agents whose answers tests dictate."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from jubensha.engine.agent import Agent, SeatContext
from jubensha.engine.decisions import (
    Accusation,
    Action,
    Decision,
    Investigate,
    Questions,
    Rating,
    Speech,
    Vote,
)
from jubensha.engine.events import Event
from jubensha.engine.game import Game, Seat
from jubensha.engine.procedure import Procedure, find_procedure
from jubensha.scripts import Script, load_script

TINY = Path(__file__).with_name("tiny_script.yaml")


def tiny() -> Script:
    """Four seats, one victim, a murderer with secrets, public and held clues, two acts."""
    return load_script(TINY)


def one_act(script: Script | None = None) -> Script:
    """``script`` (the tiny script) cut to its first act, for a procedure that tests a few
    stage kinds: a procedure that leaves an act unplayed refuses a script with several."""
    script = script or tiny()
    characters = [c.model_copy(update={"acts": [a for a in c.acts if a.act == 1]})
                  for c in script.characters]
    return script.model_copy(update={
        "characters": characters, "clues": [c for c in script.clues if c.act == 1],
        "acts": [a for a in script.acts if a.number == 1]})


class TableAgent(Agent):
    """Answers every decision plainly (first candidate, one-line speeches) unless a test
    gives ``reply``; remembers every event and decision it received."""

    architecture = "table"

    def __init__(self, reply: Callable[[Agent, Decision], Action | None] | None = None):
        self.reply = reply
        self.observed: list[Event] = []
        self.decisions: list[Decision] = []

    async def start(self, seat: SeatContext) -> None:
        await super().start(seat)
        self.name = seat.sheet.me.name

    async def observe(self, event: Event) -> None:
        self.observed.append(event)

    async def decide(self, decision: Decision) -> Action:
        self.decisions.append(decision)
        if self.reply is not None:
            chosen = self.reply(self, decision)
            if chosen is not None:
                return chosen
        if decision.type == "speak":
            return Speech(text=f"{self.name}: my {decision.kind}.")
        if decision.type == "ask":
            return Questions(target=decision.candidates[0],
                             questions=[f"Question {i + 1}?" for i in range(decision.count)])
        if decision.type == "turn":
            if decision.locations:
                return Investigate(location=decision.locations[0])
            return Questions(target=decision.candidates[0], questions=["Why?"])
        if decision.type == "rate":
            return Rating(trust=1, doubt=1)
        if decision.type == "accuse":
            return Accusation(target=decision.candidates[0])
        return Vote(target=decision.candidates[0])


def table_game(script: Script, procedure: Procedure | str = "demo", *, seed: int = 0,
               reply: Callable[[Agent, Decision], Action | None] | None = None,
               **options: object) -> tuple[Game, dict[str, TableAgent]]:
    """A game whose seats are ``TableAgent``s (no model)."""
    chosen = find_procedure(procedure) if isinstance(procedure, str) else procedure
    agents = {name: TableAgent(reply) for name in script.names}
    game = Game(script, chosen, {name: Seat(agent) for name, agent in agents.items()},
                seed=seed, **options)  # type: ignore[arg-type]
    return game, agents
