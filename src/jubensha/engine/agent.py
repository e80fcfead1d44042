"""The agent interface: a player is a function from what its seat observes to an action.

An agent never receives the ``Script``. At the start it gets a ``CharacterSheet`` (its own
character, the public background, rules and victims, the other seats' public descriptions);
during the game it gets only the events whose audience includes its seat; when the engine
needs a decision it asks and the agent answers with an action. ``Agent.decide`` routes each
decision kind to one method named ``on_`` and its type (``on_speak``, ``on_ask``,
``on_turn``, ``on_rate``, ``on_accuse``, ``on_vote``, and any kind a plug-in registers);
an architecture writes the ones it knows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from jubensha.engine.decisions import (
    Accusation,
    Accuse,
    Action,
    AskQuestions,
    CastVote,
    Decision,
    Investigate,
    Questions,
    RateStatement,
    Rating,
    Speak,
    Speech,
    TakeTurn,
    Vote,
)
from jubensha.engine.drafts import draft_sink
from jubensha.engine.events import Event
from jubensha.llm.base import Embedder, Model, ModelError, streaming
from jubensha.scripts.model import (
    ActSheet,
    Character,
    Language,
    Relationship,
    Script,
    Side,
    TimelineEntry,
)


class PublicCharacter(BaseModel):
    """What every player knows about a seat."""

    name: str
    description: str = ""
    age: str | None = None
    gender: str | None = None


class PublicVictim(BaseModel):
    """What every player knows about a victim."""

    name: str
    description: str = ""


class OwnCharacter(BaseModel):
    """A seat's own character as the seat may read it: a whitelist of ``Character``'s
    fields, so that what a source keeps beside them (``extra``) never reaches an agent.
    MIRAGE's relationship prose, the one ``extra`` entry a sheet shows, has its own field."""

    name: str
    aliases: list[str] = Field(default_factory=list)
    age: str | None = None
    gender: str | None = None
    description: str = ""
    side: Side = "civilian"
    mission: str = ""
    final_goals: list[str] = Field(default_factory=list)
    story: str = ""
    acts: list[ActSheet] = Field(default_factory=list)
    timeline: list[TimelineEntry] = Field(default_factory=list)
    secrets: list[str] = Field(default_factory=list)
    needs_to_know: list[str] = Field(default_factory=list)
    relationships: list[Relationship] = Field(default_factory=list)
    relationship_text: str = ""
    performance: str = ""
    rules: list[str] = Field(default_factory=list)
    killed: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, character: Character, last_act: int | None = 1) -> OwnCharacter:
        """``character``'s readable part, with the act sheets up to ``last_act`` (None:
        every act)."""
        fields = character.model_dump(include=set(cls.model_fields) - {"relationship_text"})
        fields["acts"] = [sheet for sheet in fields["acts"]
                          if last_act is None or sheet["act"] <= last_act]
        return cls.model_validate({**fields, "relationship_text": str(
            character.extra.get("relationship_text", ""))})

    def act_sheet(self, act: int) -> ActSheet | None:
        """The character's sheet for ``act`` (1-based), if the script is phased."""
        return next((sheet for sheet in self.acts if sheet.act == act), None)

    @property
    def all_names(self) -> list[str]:
        return [self.name, *self.aliases]


class CharacterSheet(BaseModel):
    """Everything a seat may read at the start of the game, and nothing more: every field
    is public or the seat's own, and none names the script (``game`` is a token drawn for
    the game, which no library of scripts can look up)."""

    game: str = Field(description="An opaque id of this game, the same for every seat.")
    title: str
    language: Language
    background: str
    rules: str
    victims: list[PublicVictim]
    me: OwnCharacter = Field(description="Own character; acts after the first are released "
                                         "later through ActStarted events.")
    others: list[PublicCharacter]

    @property
    def is_murderer(self) -> bool:
        return self.me.side == "murderer"

    @property
    def seat_names(self) -> list[str]:
        return [self.me.name, *(o.name for o in self.others)]

    @classmethod
    def for_seat(cls, script: Script, name: str, *, game: str = "",
                 every_act: bool = False) -> CharacterSheet:
        """The sheet of seat ``name``: own character with only act 1's sheet (every act's
        with ``every_act``: a reference answerer's), others public."""
        me = OwnCharacter.of(script.character(name), None if every_act else 1)
        others = [PublicCharacter(name=c.name, description=c.description, age=c.age,
                                  gender=c.gender) for c in script.characters if c.name != me.name]
        victims = [PublicVictim(name=v.name, description=v.description)
                   for v in script.victims]
        return cls(game=game, title=script.title, language=script.language,
                   background=script.background, rules=script.rules,
                   victims=victims, me=me, others=others)


@runtime_checkable
class NoteSink(Protocol):
    """Where an agent records something it decided without a model call (a plan, a
    ledger, the speech guard's cuts): a record in its seat's call log."""

    def __call__(self, *, purpose: str, shown: str, said: str,
                 notes: Sequence[str] = ()) -> None: ...


class SeatContext(BaseModel):
    """What the engine hands an agent when the game starts. In a game, ``model``,
    ``embedder`` and ``notes`` are one ``llm.sealed.SeatLine``: nothing reachable from
    them leads to the model, the call log, the run folder or another seat."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    sheet: CharacterSheet
    model: Model | None = Field(None, description="Seat-bound client: tags and logs calls.")
    embedder: Embedder | None = None
    notes: NoteSink | None = Field(None, description="The seat's note sink (None: notes "
                                                     "are dropped).")
    seed: int = 0
    options: dict[str, Any] = Field(default_factory=dict)

    def note(self, *, purpose: str, shown: str, said: str, notes: Sequence[str] = ()) -> None:
        """Record a note in the seat's call log, where the seat has a note sink."""
        if self.notes is not None:
            self.notes(purpose=purpose, shown=shown, said=said, notes=notes)


class UnsupportedDecision(NotImplementedError):
    """Raised by an agent for a decision its architecture has no way to make; the table then
    answers with the shared default (``engine.defaults``) so mixed tables still play."""


class DecisionRoutes:
    """One method per decision kind, named ``on_`` and the decision's ``type``: ``route``
    sends each decision to its method, and a kind nobody wrote a method for raises
    ``UnsupportedDecision`` (the table then answers with the shared default)."""

    async def route(self, decision: Decision) -> Action:
        """The answer of the method for ``decision``'s kind (``on_`` and its type, the
        built-in kinds' and any a plug-in registered alike)."""
        kind = getattr(decision, "type", None)
        method = getattr(self, f"on_{kind}", None) if isinstance(kind, str) \
            and kind.isidentifier() else None
        if method is None:
            raise UnsupportedDecision(f"{type(self).__name__} has no {kind!r} decision")
        answer: Action = await method(decision)
        return answer

    def unsupported(self, decision: Decision) -> UnsupportedDecision:
        return UnsupportedDecision(f"{type(self).__name__} has no {decision.type!r} decision")

    async def on_speak(self, decision: Speak) -> Speech:
        """Say something: an introduction, an answer, a statement, shared clues, reasoning."""
        raise self.unsupported(decision)

    async def on_ask(self, decision: AskQuestions) -> Questions:
        """Choose one of ``decision.candidates`` and ask it ``decision.count`` questions."""
        raise self.unsupported(decision)

    async def on_turn(self, decision: TakeTurn) -> Questions | Investigate:
        """An open-conversation turn: question one seat, or investigate one place."""
        raise self.unsupported(decision)

    async def on_rate(self, decision: RateStatement) -> Rating:
        """Trust and doubt, 0 to 2 each, for another seat's statement."""
        raise self.unsupported(decision)

    async def on_accuse(self, decision: Accuse) -> Accusation:
        """Accuse one of ``decision.candidates`` (or no one)."""
        raise self.unsupported(decision)

    async def on_vote(self, decision: CastVote) -> Vote:
        """Vote for the seat that killed ``decision.victim`` (or abstain)."""
        raise self.unsupported(decision)


class Agent(DecisionRoutes):
    """A player. Subclasses keep their own memory of what they observed and answer the
    decision kinds their architecture knows with the ``on_*`` methods."""

    architecture: str = "agent"
    uses_model: bool = True
    """False for an architecture that plays without a language model: its games are the
    same whatever model a spec names for it."""

    seat: SeatContext
    """The seat this agent plays (sheet, model, embedder, seed), from ``start`` on."""
    name: str
    """The seat's character name, from ``start`` on."""
    lang: Language
    """The game's language, from ``start`` on."""

    async def start(self, seat: SeatContext) -> None:
        """Receive the character sheet and the seat's model before the first event."""
        self.seat = seat
        self.name = seat.sheet.me.name
        self.lang = seat.sheet.language

    @property
    def model(self) -> Model:
        """The seat's model; a seat without one fails its decision (recorded, with fallback)."""
        if self.seat.model is None:
            raise ModelError(f"seat {self.seat.sheet.me.name!r} has no model")
        return self.seat.model

    def speaking(self, clean: Callable[[str], str] = str.strip
                 ) -> AbstractContextManager[None]:
        """Around the model call that writes a public text: the table's live views get
        the text as it is written, through ``clean`` (the agent's own tidying of a raw
        reply), when the table offers a draft sink (``engine.drafts``)."""
        sink = draft_sink()
        if sink is None:
            return nullcontext()
        return streaming(lambda raw: sink(clean(raw)))

    async def observe(self, event: Event) -> None:
        """Receive one event the seat may see; the default forgets it."""

    async def decide(self, decision: Decision) -> Action:
        """Answer what the engine asks: the action type matching the decision, or
        ``UnsupportedDecision`` to let the shared default answer it. Routes by kind; a
        wrapper (the speech guard, a person's seat) overrides it whole."""
        return await self.route(decision)


class PersonAgent(Agent):
    """A seat played by a person (the terminal, a web page). The table's decision timeout,
    a guard against stuck model calls, does not apply to someone thinking about their move."""
