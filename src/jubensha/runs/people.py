"""The people at a terminal game: each move they make is kept in the run folder
(``runlog.moves``, ``people.jsonl``) as it is made, so that ``play --resume`` can play an
interrupted game on with them: their logged moves are answered again, in order, while the
model calls are answered from the call log, and then the game goes on live at the
terminal. The browser keeps its people's moves the same way (``web.tablelog``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import cast

from jubensha.agents.human import HumanAgent, HumanIO, HumanLeft, SeatView
from jubensha.engine.agent import Agent
from jubensha.engine.decisions import Action, Decision
from jubensha.engine.events import Event
from jubensha.runlog.moves import PEOPLE, Answer, MovesLog, Replay


class RecordedIO(HumanIO):
    """A person's seat whose moves go to ``log`` as they are made; ``replay`` (the moves an
    earlier attempt logged) answers the same decisions first, without asking."""

    def __init__(self, inner: HumanIO, seat: str, log: MovesLog,
                 replay: list[Answer] | None = None):
        self.inner = inner
        self.seat = seat
        self.log = log
        self.replay = Replay(replay or [])
        self.asked = 0

    async def start(self, view: SeatView) -> None:
        await self.inner.start(view)

    async def show(self, event: Event) -> None:
        await self.inner.show(event)

    async def decide(self, decision: Decision) -> Action:
        self.asked += 1
        logged = self.replay.take(self.asked, decision)
        if logged is not None:
            self.log.append(logged)  # the new attempt's log holds every move too
            if logged.left or logged.action is None:
                raise HumanLeft(f"{self.seat} had left the table")
            return cast(Action, logged.action)  # of the decision's kind: take() checked it
        try:
            action = await self.inner.decide(decision)
        except HumanLeft:
            self.log.append(Answer(seat=self.seat, decision=self.asked, left=True))
            raise
        self.log.append(Answer(seat=self.seat, decision=self.asked, kind=decision.type,
                               action=action))
        return action


def record_people(agents: Mapping[str, Agent], folder: Path,
                  earlier: Path | None = None) -> int:
    """Keep the moves of every person among ``agents`` in ``folder``'s moves file; with
    ``earlier`` (the attempt a resumed game plays on from), answer the moves it logged
    first. The number of moves that will be answered from the log."""
    moves = MovesLog(earlier / PEOPLE).read() if earlier is not None else {}
    log = MovesLog(folder / PEOPLE)
    for name, agent in agents.items():
        if isinstance(agent, HumanAgent):
            agent.io = RecordedIO(agent.io, name, log, moves.get(name, []))
    return sum(len(moves.get(name, [])) for name, agent in agents.items()
               if isinstance(agent, HumanAgent))
