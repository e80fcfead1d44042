"""Internal.

The naive agent (architecture ``naive``): one prompt per decision, no memory tricks.

It answers from its character sheet and the most recent events it saw, picks whom to
question and what to ask with a schema whose ``target`` is an enum of the candidates, and
votes the same way. Prompts are short on purpose: the default local model has a small
context window, so the story and the history each have a character budget.

A prompt is ordered from stable to changing, so a server that caches prompt prefixes
(a KV-cache slot per seat, vLLM, OpenAI) reads only what is new since the seat's last call:
the sheet (system), the clues known, the events in order of occurrence, and last the
decision asked for. The history window drops old events in blocks (``window``), so its
start moves rarely instead of on every call.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from jubensha.agents.options import parse_options
from jubensha.agents.person import first_person
from jubensha.agents.toolkit import (
    Caller,
    RatingReply,
    chat,
    clip,
    event_line,
    goals,
    nonempty,
    questions_schema,
    recent,
    speak,
    target_schema,
    timeline_lines,
    turn_schema,
    window,
)
from jubensha.engine import (
    Accusation,
    Accuse,
    ActStarted,
    Agent,
    AskQuestions,
    CastVote,
    ClueRevealed,
    Event,
    HostSpoke,
    Investigate,
    Questions,
    RateStatement,
    Rating,
    SeatContext,
    Speak,
    Speech,
    TakeTurn,
    Vote,
)
from jubensha.llm import Message
from jubensha.prompts import render
from jubensha.scripts.model import ActSheet


class NaiveConfig(BaseModel):
    """Budgets and sampling; set per seat with ``naive:key=value+key=value``."""

    model_config = ConfigDict(extra="forbid")

    story_chars: int = Field(1400, ge=100, description="Budget for the private story.")
    history_chars: int = Field(1200, ge=0, description="Budget for recent events.")
    clue_chars: int = Field(500, ge=0, description="Budget for the clues known.")
    sentences: int = Field(3, ge=1, description="Asked length of a speech.")
    max_tokens: int = Field(128, ge=16, description="Token limit of a speech (a longer one "
                            "ends at its last whole sentence).")
    object_tokens: int = Field(200, ge=32, description="Token limit of a structured reply "
                                                      "(questions, votes).")
    speech_chars: int = Field(800, ge=50, description="A longer speech is cut.")
    temperature: float = Field(0.7, ge=0)
    attempts: int = Field(2, ge=1, description="Tries for a structured reply.")

    @classmethod
    def parse(cls, option: str) -> NaiveConfig:
        """``"history_chars=800+temperature=0.2"`` → a config; errors name the option."""
        return parse_options(cls, option, "naive")


class NaiveAgent(Agent):
    architecture = "naive"

    def __init__(self, config: NaiveConfig | None = None):
        self.config = config or NaiveConfig()
        self.history: list[str] = []
        self.clues: list[str] = []
        self.act_sheet: ActSheet | None = None

    @classmethod
    def from_option(cls, option: str) -> NaiveAgent:
        return cls(NaiveConfig.parse(option))

    async def start(self, seat: SeatContext) -> None:
        await super().start(seat)
        self.act_sheet = seat.sheet.me.act_sheet(1)

    async def observe(self, event: Event) -> None:
        if isinstance(event, ActStarted) and event.sheet is not None:
            self.act_sheet = event.sheet
            return
        if isinstance(event, ClueRevealed):
            self.clues.append(event_line(event, self.lang))
            return
        if isinstance(event, HostSpoke):
            return
        line = event_line(event, self.lang)
        if line:
            self.history.append(line)

    # -- prompts -------------------------------------------------------------------------
    def system(self) -> str:
        """The sheet. A civilian's story, day and act text are in the first person (small
        models copy a sheet written to "you" as it is, and speak of themselves as "you");
        secrets, goals and a murderer's whole sheet stay addressed to the player: told "I
        killed Elias with the rolling pin" among its secrets, a small model says it
        (docs/agents/guard.md)."""
        sheet = self.seat.sheet
        me = sheet.me
        timeline = " ".join(timeline_lines(me))
        act = self.act_sheet
        act_text = clip(act.text, self.config.story_chars // 2) if act and act.act > 1 else ""

        def mine(text: str) -> str:
            return text if sheet.is_murderer else first_person(text, self.lang)

        return render("naive", "system", self.lang, me=me.name, title=sheet.title,
                      background=clip(sheet.background, 600), rules=clip(sheet.rules, 300),
                      others=[o.name for o in sheet.others], description=me.description,
                      story=mine(clip(me.story, self.config.story_chars)),
                      timeline=mine(clip(timeline, self.config.story_chars // 2)),
                      act_text=mine(act_text), goals=goals(me, act),
                      murderer=sheet.is_murderer, secrets=me.secrets)

    def messages(self, template: str, **values: Any) -> list[Message]:
        """System: the sheet; user: clues, history, then the decision (stable to new)."""
        context = render("naive", "context", self.lang,
                         clues=recent(self.clues, self.config.clue_chars),
                         history=window(self.history, self.config.history_chars))
        asked = render("naive", template, self.lang, me=self.name, **values)
        user = f"{context}\n\n{asked}" if context else asked
        return chat(user, self.system())

    @property
    def caller(self) -> Caller:
        config = self.config
        return Caller.for_seat(self.seat, temperature=config.temperature,
                               attempts=config.attempts, text_tokens=config.max_tokens,
                               object_tokens=config.object_tokens)

    async def structured(self, purpose: str, messages: list[Message],
                         schema: type[BaseModel]) -> Any:
        return await self.caller.structured(purpose, messages, schema)

    # -- decisions -----------------------------------------------------------------------
    async def on_speak(self, decision: Speak) -> Speech:
        question = decision.question
        sheet = self.seat.sheet
        messages = self.messages("speak", prompt=decision.prompt, sentences=self.config.sentences,
                                 question=question.model_dump() if question else None,
                                 murderer=sheet.is_murderer)
        text = await speak(self, self.caller, decision.kind, messages, names=sheet.seat_names,
                           limit=self.config.speech_chars)
        return Speech(text=nonempty(text, decision.kind))

    async def on_ask(self, decision: AskQuestions) -> Questions:
        schema = questions_schema(decision.count, decision.candidates)
        reply = await self.structured("ask", self.messages(
            "ask", candidates=decision.candidates, count=decision.count), schema)
        return Questions(target=reply.target, questions=reply.questions)

    async def on_vote(self, decision: CastVote) -> Vote:
        reply = await self.choose("vote", decision.candidates, victim=decision.victim,
                                  accused=decision.accused)
        return Vote(target=reply.target, reason=reply.reason)

    async def on_accuse(self, decision: Accuse) -> Accusation:
        reply = await self.choose("accuse", decision.candidates)
        return Accusation(target=reply.target, reason=reply.reason)

    async def choose(self, purpose: Literal["vote", "accuse"], candidates: list[str],
                     **values: Any) -> Any:
        return await self.structured(purpose, self.messages(
            purpose, candidates=candidates, **values), target_schema(candidates, purpose))

    async def on_rate(self, decision: RateStatement) -> Rating:
        statement = decision.statement
        reply = await self.structured("rate", self.messages(
            "rate", speaker=statement.speaker, statement=statement.text), RatingReply)
        return Rating(trust=reply.trust, doubt=reply.doubt)

    async def on_turn(self, decision: TakeTurn) -> Questions | Investigate:
        schema = turn_schema(decision.candidates, decision.locations)
        reply = await self.structured("turn", self.messages(
            "turn", candidates=decision.candidates, locations=decision.locations), schema)
        if reply.action == "investigate":
            return Investigate(location=reply.location)
        return Questions(target=reply.target, questions=[reply.question])

