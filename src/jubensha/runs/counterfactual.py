"""The counterfactual audit: a seat that sees only its seat plays the same game whatever the
truth and the other seats' sheets are.

The prompt audit (``eval.audit``) searches what reached a seat's prompts for other seats'
text; it cannot see a choice made in code (an agent that reads a clue's ``key`` flag, or
finds the truth somewhere in memory, and votes by it), nor a paraphrase. This audit plays
the game once, recording every seat's moves, then, for each seat, plays it again with the
truth, every clue's ``key`` and ``misleading`` flags and every *other* seat's private
sheet replaced by counterfactual ones (another murderer, other stories) while the other
seats replay their recorded moves. A seat that decides from what it may see makes the same
calls and the same moves, so every event it saw or made before the reveal is the same; the
first that differs is reported. The seats play the deterministic scripted model, so the
two games differ only by what was replaced.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from jubensha.agents.registry import make_agent
from jubensha.engine.agent import Agent
from jubensha.engine.decisions import Action, BaseAction, BaseDecision, Decision
from jubensha.engine.events import Event, GameEnded
from jubensha.engine.game import Game, Seat
from jubensha.engine.procedure import Procedure
from jubensha.llm.base import Embedder, Model
from jubensha.llm.calls import CallLog, CallRecord, MemorySink
from jubensha.llm.fake import ScriptedModel
from jubensha.scripts.model import Character, Kill, Script, Truth

MARK = "counterfactual"
"""Written into every replaced text, so that a leak of it is plain to see."""


class Divergence(BaseModel):
    """The first thing a seat saw, made or asked its model that differs between the games."""

    what: str
    position: int
    played: str
    counterfactual: str


class SeatAudit(BaseModel):
    seat: str
    architecture: str
    events: int
    calls: int
    divergence: Divergence | None = None


@dataclass
class Played:
    """One game's record: every event and every seat's call records and moves."""

    events: list[Event]
    calls: list[CallRecord]
    moves: dict[str, list[BaseAction]]


class Replay(Agent):
    """A seat that answers with the moves it made in the game played first."""

    architecture = "replay"
    uses_model = False

    def __init__(self, moves: Sequence[BaseAction]) -> None:
        self.moves = list(moves)

    async def decide(self, decision: Decision) -> Action:
        if not self.moves:
            raise RuntimeError("the replayed seat has no recorded move left")
        move: Action = self.moves.pop(0).model_copy(deep=True)  # type: ignore[assignment]
        return move


def counterfactual_script(script: Script, seat: str) -> Script:
    """``script`` with its truth, its clues' flags and every other seat's private sheet
    replaced; ``seat``'s own sheet and everything public stay as they are. ``seat`` stays
    a murderer exactly when its sheet says so; the murderer among the others moves."""
    me = script.character(seat)
    others = [c.name for c in script.characters if c.name != me.name]
    guilty = {c.name for c in script.characters if c.side == "murderer"} | set(script.murderers)
    innocent = [name for name in others if name not in guilty] or others
    murderers = ([me.name] if me.side == "murderer" else []) + innocent[-1:]
    kills = [Kill(victim=v.name, killers=murderers, method=f"{MARK} method",
                  motive=f"{MARK} motive") for v in script.victims]
    truth = Truth(murderers=murderers, kills=kills, method=f"{MARK} method",
                  motive=f"{MARK} motive", narrative=f"The {MARK} story of the crime.",
                  solution=f"The {MARK} solution.", reasoning_chain=[f"{MARK} step"])
    characters = [c if c.name == me.name else _other(c, c.name in murderers)
                  for c in script.characters]
    clues = [clue.model_copy(update={"key": not clue.key, "misleading": not clue.misleading})
             for clue in script.clues]
    return script.model_copy(update={"truth": truth, "characters": characters,
                                     "clues": clues}, deep=True)


def _other(character: Character, murderer: bool) -> Character:
    """Another seat's character with every private part replaced (public parts kept)."""
    text = f"{MARK} text of {character.name}"
    acts = [sheet.model_copy(update={"text": f"{text}, act {sheet.act}", "goals": [text],
                                     "performance": "", "notes": {}})
            for sheet in character.acts]
    return Character(name=character.name, aliases=character.aliases, age=character.age,
                     gender=character.gender, description=character.description,
                     side="murderer" if murderer else "civilian", mission=text,
                     story=f"{text}: a story.", acts=acts, secrets=[f"{text}: a secret."],
                     performance=text, killed=[])


async def play_recorded(script: Script, procedure: Procedure, agents: Mapping[str, Agent],
                        model: Model, seed: int, embedder: Embedder | None = None
                        ) -> Played:
    """Play one game and record every event, every call and every seat's moves (the
    actions the table used: an agent's, or the fallback that replaced it)."""
    sink = MemorySink()
    log = CallLog(sink)
    seats = {name: Seat(agent=agent, embedder=embedder,
                        model=None if isinstance(agent, Replay) else log.seat(model, name,
                                                                              access="seat"))
             for name, agent in agents.items()}
    game = Game(script, procedure, seats, seed=seed)
    moves: dict[str, list[BaseAction]] = {name: [] for name in seats}
    asked = game.table.ask

    async def ask(seat: str, decision: BaseDecision, **options: Any) -> BaseAction:
        action = await asked(seat, decision, **options)
        moves[seat].append(action)
        return action

    game.table.ask = ask  # type: ignore[method-assign]
    await game.run()
    return Played(events=game.table.events, calls=sink.records, moves=moves)


AUTHORS = ("voter", "rater", "accuser", "seat", "speaker")
"""The fields that name who made an event."""


def seen(events: Sequence[Event], seat: str) -> list[dict[str, Any]]:
    """What ``seat`` saw or made before the reveal: the events it observed, and the
    log-only ones it made (its ballots, its failures). Another seat's log-only event is no
    part of it: its ballot, replayed, may be refused where the counterfactual sheet made it
    a murderer who may not vote for itself. Numbering and clock times left out."""
    found = []
    for event in events:
        if isinstance(event, GameEnded):
            break
        made = any(getattr(event, field, None) == seat for field in AUTHORS)
        if event.visible_to(seat) or made:
            found.append(event.model_dump(mode="json", exclude={"index", "time"}))
    return found


def asked(calls: Sequence[CallRecord], seat: str) -> list[dict[str, Any]]:
    """What ``seat`` asked its model and what it noted, in order."""
    return [{"purpose": c.purpose, "messages": [m.model_dump(mode="json") for m in c.messages],
             "said": c.raw} for c in calls if c.seat == seat]


def first_difference(what: str, played: Sequence[Any], other: Sequence[Any]
                     ) -> Divergence | None:
    for position, (a, b) in enumerate(zip(played, other, strict=False)):
        if a != b:
            return Divergence(what=what, position=position, played=str(a)[:600],
                              counterfactual=str(b)[:600])
    if len(played) != len(other):
        return Divergence(what=what, position=min(len(played), len(other)),
                          played=f"{len(played)} in all", counterfactual=f"{len(other)} in all")
    return None


async def audit_game(script: Script, procedure: Procedure, plans: Mapping[str, str], *,
                     seed: int = 0, seats: Sequence[str] | None = None,
                     embedder: Embedder | None = None,
                     agents: Mapping[str, Agent] | None = None,
                     ) -> list[SeatAudit]:
    """Play ``script`` with ``plans`` (seat → architecture spec, the scripted model), then
    audit each of ``seats`` (all by default) against its counterfactual game. ``agents``
    seats agents made elsewhere (a test's planted one) in the game played first and a fresh
    one of the same class in each counterfactual game."""
    procedure = procedure.model_copy(update={"voting": procedure.voting.declared(script)})
    made = dict(agents or {})

    def fresh(name: str) -> Agent:
        return type(made[name])() if name in made else make_agent(plans[name])

    first = {name: made.get(name) or make_agent(plans[name]) for name in script.names}
    played = await play_recorded(script, procedure, first, ScriptedModel(seed=1), seed,
                                 embedder)
    found = []
    for seat in seats or script.names:
        agents_cf = {name: fresh(name) if name == seat else Replay(played.moves[name])
                     for name in script.names}
        other = await play_recorded(counterfactual_script(script, seat), procedure,
                                    agents_cf, ScriptedModel(seed=1), seed, embedder)
        mine, theirs = seen(played.events, seat), seen(other.events, seat)
        calls, calls_cf = asked(played.calls, seat), asked(other.calls, seat)
        divergence = (first_difference("event", mine, theirs)
                      or first_difference("call", calls, calls_cf))
        found.append(SeatAudit(seat=seat, architecture=plans.get(seat, "")
                               or type(first[seat]).__name__, events=len(mine),
                               calls=len(calls), divergence=divergence))
    return found

