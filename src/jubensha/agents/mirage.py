"""Internal.

The MIRAGE agent (architecture ``mirage``), after MPIRD-LLMA's players (appendix C).

It plays from a condensed description of its character (``agents.summarise``: made at the
start and again when an act brings new script text), its self-clues (the clues it holds),
the record of the game as ``name: [action]: content`` lines (condensed when over budget),
and what it did last turn with its result. Each decision is one structured call that asks
for the thinking first, as the paper's THOUGHT / RESPONSE prompts do:

- introduction (table 23), answers (table 16) and any other speech;
- a turn (table 19): reason about the history, then Ask one player or Investigate one place;
- trust (table 18) and doubt (table 24) of another's statement, as an impartial bystander
  reading only the record (``rate_view=bystander``, as in the paper) or as the character;
  two calls by default, one with ``rating=joint``;
- the vote (table 26) and the accusation (the same prompt, naming whom to accuse).

Options (``mirage:key=value+...``): the ``SummaryConfig`` fields and those of
``MirageConfig``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from jubensha.agents.options import parse_options
from jubensha.agents.summarise import History, Summariser, SummaryConfig
from jubensha.agents.toolkit import Caller, chat, nonempty, timeline_lines
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
    OwnCharacter,
    Questions,
    RateStatement,
    Rating,
    SeatContext,
    Speak,
    Speech,
    Spoke,
    TakeTurn,
    Vote,
)
from jubensha.llm import Message
from jubensha.prompts import render
from jubensha.scripts.model import PUBLIC


class MirageConfig(SummaryConfig):
    """Sampling and the agent's choices (the summary budgets are inherited)."""

    model_config = ConfigDict(extra="forbid")

    temperature: float = Field(0.8, ge=0, description="The paper's setting.")
    reply_tokens: int = Field(400, ge=32, description="Token limit of a reply.")
    rating: Literal["separate", "joint"] = Field(
        "separate", description="separate: one trust and one doubt call (the paper).")
    rate_view: Literal["bystander", "character"] = Field(
        "bystander", description="bystander: rate from the record only, as the paper's "
        "impartial observer; character: also with the own description.")


class Said(BaseModel):
    thought: str = ""
    response: str


class Trust(BaseModel):
    thought: str = ""
    trust: int = Field(ge=0, le=2)


class Doubt(BaseModel):
    thought: str = ""
    doubt: int = Field(ge=0, le=2)


class Both(BaseModel):
    thought: str = ""
    trust: int = Field(ge=0, le=2)
    doubt: int = Field(ge=0, le=2)


def converse_schema(candidates: list[str], places: list[str]) -> type[BaseModel]:
    """Thinking, then Ask a candidate or Investigate a place, and what is said."""
    actions = ("ask", "investigate") if places else ("ask",)
    fields: dict[str, Any] = {"thought": (str, ""), "action": (Literal[actions], ...),
                              "target": (Literal[tuple(candidates)] | None, None),
                              "content": (str, ...)}
    if places:
        fields["place"] = (Literal[tuple(places)] | None, None)
    return create_model("Turn", **fields)


def pick_schema(candidates: list[str], name: str) -> type[BaseModel]:
    fields: dict[str, Any] = {"thought": (str, ""), "name": (Literal[tuple(candidates)], ...)}
    return create_model(name, **fields)


def sheet_sections(me: OwnCharacter, lang: str) -> dict[str, str]:
    """The six parts of a MIRAGE character sheet (paper, section 2.2), from the sheet."""
    act = me.act_sheet(1)
    timeline = "\n".join(timeline_lines(me))
    relations = "\n".join(f"{r.other}: {', '.join(r.labels)} {r.description}".strip()
                          for r in me.relationships)
    values = {
        "story": "\n".join(x for x in (me.description, me.story) if x),
        "script": "\n".join(x for x in (act.text if act else "", timeline) if x),
        "relationships": "\n".join(x for x in (relations, me.relationship_text) if x),
        "performance": me.performance,
        "goals": "\n".join(x for x in (me.mission, *me.final_goals, *(act.goals if act else []))
                           if x),
        "abilities": "\n".join([*me.rules, *me.secrets]),
    }
    return {render("mirage", "section_name", lang, section=key): text
            for key, text in values.items() if text.strip()}


class MirageAgent(Agent):
    architecture = "mirage"

    def __init__(self, config: MirageConfig | None = None):
        self.config = config or MirageConfig()
        self.history = History(self.config)
        self.self_clues: list[str] = []
        self.description = ""
        self.last_action = ""
        self.act = 1

    @classmethod
    def from_option(cls, option: str) -> MirageAgent:
        return cls(parse_options(MirageConfig, option, "mirage"))

    async def start(self, seat: SeatContext) -> None:
        await super().start(seat)
        sheet = seat.sheet
        self.summariser = Summariser(self.model, self.lang, self.name, seat.seed, self.config)
        self.description = await self.summariser.character(
            self.name, sheet_sections(sheet.me, self.lang))

    async def observe(self, event: Event) -> None:
        if isinstance(event, ActStarted) and event.sheet is not None:
            await self.new_act(event)
            return
        if isinstance(event, ClueRevealed) and event.audience != PUBLIC \
                and event.found_by is None:
            self.self_clues.append(self.line(event))
            return
        if isinstance(event, HostSpoke):
            return
        self.history.add(self.line(event))
        if (isinstance(event, Spoke) and event.to == self.name and event.kind == "answer") \
                or (isinstance(event, ClueRevealed) and event.found_by == self.name):
            self.last_action += "\n" + self.line(event)
        await self.history.fit(self.summariser)

    def line(self, event: Event) -> str:
        return render("mirage", "line", self.lang, **event.model_dump())

    async def new_act(self, event: ActStarted) -> None:
        """Fold the act's new text and goals into the description (the reference code
        re-summarises each character at every stage)."""
        sheet = event.sheet
        assert sheet is not None
        if sheet.act <= self.act:
            return
        self.act = sheet.act
        sections = {
            render("mirage", "section_name", self.lang, section="summary"): self.description,
            render("mirage", "section_name", self.lang, section="script"): sheet.text,
            render("mirage", "section_name", self.lang, section="goals"): "\n".join(sheet.goals),
            render("mirage", "section_name", self.lang, section="performance"):
                sheet.performance,
            **sheet.notes,
        }
        self.description = await self.summariser.character(self.name, sections)

    # -- calls -------------------------------------------------------------------------------
    def prompt(self, template: str, **values: Any) -> list[Message]:
        context: dict[str, Any] = {
            "me": self.name, "description": self.description, "self_clues": self.self_clues,
            "history": self.history.text(), "last_action": self.last_action}
        return chat(render("mirage", template, self.lang, **{**context, **values}))

    async def ask_model(self, purpose: str, messages: list[Message], schema: type[BaseModel]
                        ) -> Any:
        caller = Caller.for_seat(self.seat, temperature=self.config.temperature,
                                 attempts=self.config.attempts,
                                 object_tokens=self.config.reply_tokens)
        return await caller.structured(purpose, messages, schema)

    async def on_turn(self, decision: TakeTurn) -> Questions | Investigate:
        return await self.turn(decision.candidates, decision.locations)

    async def on_vote(self, decision: CastVote) -> Vote:
        reply = await self.ask_model("vote", self.prompt(
            "vote", candidates=decision.candidates, victim=decision.victim,
            accused=decision.accused), pick_schema(decision.candidates, "Vote"))
        return Vote(target=reply.name, reason=reply.thought)

    async def on_accuse(self, decision: Accuse) -> Accusation:
        reply = await self.ask_model("accuse", self.prompt(
            "accuse", candidates=decision.candidates), pick_schema(decision.candidates,
                                                                  "Accusation"))
        return Accusation(target=reply.name, reason=reply.thought)

    async def on_speak(self, decision: Speak) -> Speech:
        question = decision.question
        if question is not None:
            messages = self.prompt("answer", asker=question.speaker, question=question.text)
        elif decision.kind == "introduction":
            messages = self.prompt("introduce", history="")
        else:
            messages = self.prompt("speak", request=decision.prompt, kind=decision.kind)
        reply = await self.ask_model(decision.kind, messages, Said)
        return Speech(text=nonempty(reply.response.strip(), decision.kind))

    async def turn(self, candidates: list[str], places: list[str]) -> Questions | Investigate:
        reply = await self.ask_model("turn", self.prompt(
            "converse", candidates=candidates, places=places),
            converse_schema(candidates, places))
        place = getattr(reply, "place", None)
        if reply.action == "investigate" and place:
            self.last_action = render("mirage", "last_action", self.lang, thought=reply.thought,
                                      action="investigate", item=place, content=reply.content)
            return Investigate(location=place, statement=reply.content.strip())
        target = reply.target or candidates[0]
        self.last_action = render("mirage", "last_action", self.lang, thought=reply.thought,
                                  action="ask", item=target, content=reply.content)
        return Questions(target=target, questions=[reply.content.strip()])

    async def on_ask(self, decision: AskQuestions) -> Questions:
        """Questions outside open turns (other procedures): the turn prompt, Ask only."""
        asked: list[str] = []
        target = decision.candidates[0]
        for _ in range(decision.count):
            action = await self.turn(decision.candidates, [])
            assert isinstance(action, Questions)
            target = action.target if not asked else target
            asked.extend(action.questions)
        return Questions(target=target, questions=asked[:decision.count])

    async def on_rate(self, decision: RateStatement) -> Rating:
        statement = decision.statement
        view = self.config.rate_view == "character"
        values = {"speaker": statement.speaker, "statement": statement.text, "as_me": view}
        if self.config.rating == "joint":
            both = await self.ask_model("rate", self.prompt("rate", **values), Both)
            return Rating(trust=both.trust, doubt=both.doubt)
        trust = await self.ask_model("rate.trust", self.prompt("belief", **values), Trust)
        doubt = await self.ask_model("rate.doubt", self.prompt("doubt", **values), Doubt)
        return Rating(trust=trust.trust, doubt=doubt.doubt)
