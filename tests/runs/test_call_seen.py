"""Each model call records the index of the last event its seat had observed when the call
started, so "was this heard before that call?" is decided from the run log, never from
clocks (which tie under a fast model)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from jubensha.engine.decisions import Action, Decision
from jubensha.engine.events import Event, Spoke
from jubensha.engine.game import Game, Seat
from jubensha.engine.procedure import find_procedure
from jubensha.llm.base import Message, Request
from jubensha.llm.calls import CallLog, MemorySink
from jubensha.llm.fake import ScriptedModel
from jubensha.runlog.folder import read_run
from jubensha.runs.play import PlayConfig, plan_seats, play_game, track_seen
from jubensha.scripts import load_script

sys.path.insert(0, str(Path(__file__).parents[1] / "engine"))
from engine_helpers import TINY, TableAgent


class Witness(TableAgent):
    """Calls its model on every decision and on every speech it hears, writing into the
    prompt the indices of the events it had observed by then."""

    async def observe(self, event: Event) -> None:
        await super().observe(event)
        if isinstance(event, Spoke):
            await self.call("observe")

    async def decide(self, decision: Decision) -> Action:
        await self.call(decision.type)
        return await super().decide(decision)

    async def call(self, purpose: str) -> None:
        seen = ",".join(str(e.index) for e in self.observed)
        await self.model.generate(Request(messages=[Message(role="user", content=seen)],
                                          purpose=purpose))


def test_every_call_records_the_last_event_its_seat_had_observed() -> None:
    script = load_script(TINY)
    sink = MemorySink()
    log = CallLog(sink)
    model = ScriptedModel()
    agents = {name: Witness() for name in script.names}
    seats = {name: Seat(agent, model=log.seat(model, name, access="seat"))
             for name, agent in agents.items()}
    game = Game(script, find_procedure("player"), seats, seed=3,
                sinks=[track_seen(log, script.names)])
    asyncio.run(game.run())
    assert len(sink.records) > 50
    for record in sink.records:
        observed = [int(i) for i in record.messages[0].text.split(",") if i]
        assert record.seen == (observed[-1] if observed else -1), record.purpose
        assert record.access == "seat"


def test_a_played_run_folder_records_seen_for_every_call(tmp_path: Path) -> None:
    script = load_script(TINY)
    plans = plan_seats(script, "player", "scripted", ())
    asyncio.run(play_game(PlayConfig(script=script, procedure=find_procedure("player"), plans=plans,
                                     seed=5), tmp_path / "run",
                          models={"scripted": ScriptedModel()}))
    run = read_run(tmp_path / "run")
    assert [e.index for e in run.events] == list(range(len(run.events)))
    last: dict[str, int] = {}
    for call in run.calls:
        assert call.seat is not None and call.seen is not None and call.access == "seat"
        assert call.seen == -1 or run.events[call.seen].visible_to(call.seat)
        assert call.seen >= last.get(call.seat, -1)
        last[call.seat] = call.seen
