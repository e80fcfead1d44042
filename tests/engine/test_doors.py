"""A planted agent tries every door a seat is handed and finds nothing behind them: not the
script, its truth or its id, not another seat's sheet, not the run folder or the call log.

The doors: its sheet (as data, and the bundled library looked up with anything on it), the
objects it holds followed through every reference (``gc.get_referents``, which sees
attributes, closures, bound methods and containers alike: the sheet, the model, the
embedder, the note sink, the options and the agent itself), the context variables its
decisions run in, and the module globals of the whole package. What in-process Python
cannot close (the heap, the frames, the file system) is pinned by the last test and
described in docs/isolation.md."""

from __future__ import annotations

import asyncio
import contextvars
import gc
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from jubensha.engine.agent import Agent, SeatContext, UnsupportedDecision
from jubensha.engine.decisions import Action, Decision
from jubensha.engine.procedure import find_procedure
from jubensha.llm.calls import CallLog, SeatModel
from jubensha.llm.fake import ScriptedModel
from jubensha.runlog.folder import RunFolder
from jubensha.runs.play import PlayConfig, plan_seats, play_game
from jubensha.scripts import find_script
from jubensha.scripts.model import Script, Truth

SCRIPT = "lighthouse-keeper"
STOP = (type, types.ModuleType, types.FunctionType, asyncio.AbstractEventLoop)
"""Where a walk stops: classes, modules and functions lead to every module's globals
(walked apart, below), the event loop to every task."""


def walk(roots: list[Any], stop: tuple[type, ...] = STOP) -> list[Any]:
    seen: dict[int, Any] = {}
    stack = list(roots)
    while stack:
        item = stack.pop()
        if id(item) in seen or isinstance(item, stop):
            continue
        seen[id(item)] = item
        stack.extend(gc.get_referents(item))
    return list(seen.values())


class Burglar(Agent):
    """Tries every door at the start and at every decision; answers nothing itself."""

    architecture = "burglar"

    def __init__(self) -> None:
        self.tries = 0
        self.found: list[Any] = []

    async def start(self, seat: SeatContext) -> None:
        await super().start(seat)
        self.try_doors()

    async def decide(self, decision: Decision) -> Action:
        self.try_doors(globals_too=decision.type == "vote")
        raise UnsupportedDecision("a burglar answers nothing")

    def try_doors(self, globals_too: bool = True) -> None:
        """Every door; the package's globals (slow to walk) at the start and at the vote,
        when every cache has filled."""
        self.tries += 1
        held = [self.seat, self.seat.sheet, self.seat.model, self.seat.embedder,
                self.seat.notes, self.seat.options, self]
        context = contextvars.copy_context()
        held += [value for _, value in context.items()]
        package = [vars(module) for name, module in list(sys.modules.items())
                   if name.split(".")[0] == "jubensha" and module is not None]
        self.found += walk(held) + (walk(package) if globals_too else [])
        for name in {self.seat.sheet.game, self.seat.sheet.title, self.seat.sheet.me.name}:
            try:
                self.found.append(find_script(name))
            except (KeyError, ValueError, FileNotFoundError, OSError):
                continue


def forbidden(script: Script, seat: str, folder: Path) -> tuple[list[str], list[type]]:
    """Texts the seat must not find, and types of which it must find no instance. (The
    script's id is no secret of the game: the bundled library lists it among the others;
    what must not be found is which script this game plays, and its truth.)"""
    texts = [str(folder)]
    assert script.truth is not None
    texts += [script.truth.narrative[:60], script.truth.solution[:60]]
    texts += [text[:60] for character in script.characters if character.name != seat
              for text in (character.story, *character.secrets) if len(text) > 30]
    return [t for t in texts if t], [Script, Truth, RunFolder, CallLog, SeatModel]


@pytest.mark.parametrize(("architecture", "procedure", "name"), [
    ("detective:guard", "demo", SCRIPT), ("ledger", "demo", "tingsong-tea-estate"),
    ("naive", "demo", "tingsong-tea-estate"), ("player", "player", SCRIPT),
    ("thinkthrice:mr+sr+sv1", "thinkthrice", SCRIPT),
    ("thinkthrice:mr+retrieval=hybrid", "demo", SCRIPT), ("werewolf", "demo", SCRIPT),
    ("ocot", "demo", SCRIPT), ("extractive", "demo", SCRIPT), ("solver", "demo", SCRIPT),
    ("mirage", "mirage", "halvard-observatory"), ("whodunit", "whodunit", SCRIPT)])
def test_a_planted_agent_finds_nothing_behind_any_door_it_is_handed(
        architecture: str, procedure: str, name: str, tmp_path: Path) -> None:
    """Every other seat plays ``architecture`` (whatever it leaves in module globals is
    searched too), with a memory embedder."""
    script = find_script(name)
    seat = script.names[0]
    burglar = Burglar()
    folder = tmp_path / "run"
    config = PlayConfig(script=script, procedure=find_procedure(procedure),
                        plans=plan_seats(script, architecture, "scripted"), seed=3,
                        embedder="scripted")
    asyncio.run(play_game(config, folder, agents={seat: burglar},
                          models={"scripted": ScriptedModel(seed=1)}))
    assert burglar.tries > 3 and (folder / "result.json").is_file()
    texts, kinds = forbidden(script, seat, folder)
    for item in burglar.found:
        assert not isinstance(item, tuple(kinds)), f"found a {type(item).__name__}"
        if isinstance(item, str):
            leaked = [text for text in texts if text in item]
            assert not leaked, f"found {leaked[0]!r}"
    others = [a for a in burglar.found if isinstance(a, Agent) and a is not burglar]
    assert not others, f"found another seat's agent, {type(others[0]).__name__}"


def test_the_doors_are_real_a_burglar_finds_what_a_careless_engine_hands_it() -> None:
    """The search itself works: it finds a script's truth and a log it is handed."""
    script = find_script(SCRIPT)
    leaky = {"script": script, "log": CallLog()}
    found = walk([leaky])
    assert any(isinstance(item, Truth) for item in found)
    assert any(isinstance(item, CallLog) for item in found)
    assert script.truth is not None and script.truth.narrative in found


@pytest.mark.parametrize("door", ["heap"])
def test_what_in_process_python_cannot_close_the_heap(door: str, tmp_path: Path) -> None:
    """docs/isolation.md says the heap is open: an agent that scans every object of the
    interpreter (``gc.get_objects``) during the game finds the script, since the engine
    plays it. A process boundary would close this; this test pins the documented gap."""
    script = find_script(SCRIPT)
    heap: list[bool] = []

    class Scanner(Burglar):
        def try_doors(self, globals_too: bool = True) -> None:
            heap.append(any(isinstance(item, Truth) for item in gc.get_objects()))

    config = PlayConfig(script=script, procedure=find_procedure("demo"),
                        plans=plan_seats(script, "naive", "scripted"), seed=3)
    asyncio.run(play_game(config, tmp_path / "run", agents={script.names[0]: Scanner()},
                          models={"scripted": ScriptedModel(seed=1)}))
    assert heap and all(heap)
