"""Internal.

The WhodunitBench agent (architecture ``whodunit``), after the supplementary material's
prompts (section 4.1, figures 7-9).

Every call carries three system parts: the game rules (I_e), the role script (I_S: name,
background, faction, mission, the text clues) and the live information (I_d: the dialogue
so far); then one action prompt. It differs from ``naive`` in what the paper does
differently: the faction is stated, the whole dialogue is shown (newest lines within a
token budget), image clue cards are attached to the prompt for vision models (a text-only
client reads their captions instead), one discussion call both shares the clues and picks
whom to question, the reasoning is free text in the "Modus operandi: ... Motive: ..."
format, and the vote is the line "I think the killer is: [option]", parsed from the text
(a reply that names nobody is asked again as a structured choice).

It has no trust/doubt rating of its own (WhodunitBench has none): ``RateStatement`` is left
to the shared default (``engine.defaults``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from jubensha.agents.options import parse_options
from jubensha.agents.toolkit import (
    Caller,
    chat,
    clip_tokens,
    event_line,
    nonempty,
    questions_schema,
    timeline_lines,
    within,
)
from jubensha.engine import (
    Accusation,
    Accuse,
    Agent,
    AskQuestions,
    CastVote,
    ClueRevealed,
    Event,
    HostSpoke,
    Questions,
    Speak,
    Speech,
    TakeTurn,
    Vote,
)
from jubensha.engine.stages import match_name
from jubensha.llm import ImagePart, Message, TextPart, choice_schema
from jubensha.prompts import render

_KILLER = re.compile(r"(?:killer\s+is|凶手是)\s*[:：]?\s*[\[【「\"“]?\s*([^\]】」\"”\n,，。.]+)",
                     re.IGNORECASE)


@dataclass(frozen=True)
class Card:
    """An image clue card: the file (None when it is not to be attached) and its caption."""

    path: str | None
    caption: str


class WhodunitConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    temperature: float = Field(0.7, ge=0)
    reply_tokens: int = Field(500, ge=32, description="Token limit of a reply.")
    history_tokens: int = Field(3000, ge=100, description="Budget of the dialogue shown.")
    story_tokens: int = Field(6000, ge=100, description="Budget of the role background.")
    images: Literal["attach", "caption", "off"] = Field(
        "attach", description="attach: image clue cards go with every prompt (captions "
        "for text-only clients); caption: captions only; off: no image clues.")
    attempts: int = Field(2, ge=1)


def parse_killer(text: str, candidates: list[str]) -> str | None:
    """The candidate named by "I think the killer is: X" (or, failing that, the only
    candidate the text names); None when the text names no single candidate."""
    for match in _KILLER.finditer(text):
        found = match_name(match.group(1).strip(" *[]"), candidates)
        if found is not None:
            return found
    named = [c for c in candidates if c in text]
    return named[0] if len(named) == 1 else None


class WhodunitAgent(Agent):
    architecture = "whodunit"

    def __init__(self, config: WhodunitConfig | None = None):
        self.config = config or WhodunitConfig()
        self.dialogue: list[str] = []
        self.text_clues: list[str] = []
        self.cards: list[Card] = []
        self.planned: Questions | None = None

    @classmethod
    def from_option(cls, option: str) -> WhodunitAgent:
        return cls(parse_options(WhodunitConfig, option, "whodunit"))

    async def observe(self, event: Event) -> None:
        if isinstance(event, ClueRevealed):
            self.add_clue(event)
            return
        if isinstance(event, HostSpoke):
            return
        line = event_line(event, self.lang)
        if line:
            self.dialogue.append(line)

    def add_clue(self, clue: ClueRevealed) -> None:
        if clue.image and self.config.images != "off":
            caption = clue.caption or clue.title or clue.clue_id
            if clue.text:
                caption = f"{caption}: {clue.text}"
            attach = self.config.images == "attach" and Path(clue.image).is_file()
            self.cards.append(Card(clue.image if attach else None, caption))
            return
        if clue.text:
            self.text_clues.append(f"{clue.title}: {clue.text}" if clue.title else clue.text)

    # -- prompts -------------------------------------------------------------------------------
    def system(self) -> str:
        me = self.seat.sheet.me
        timeline = "\n".join(timeline_lines(me))
        background = "\n".join(x for x in (me.description, me.story, timeline) if x)
        act = me.act_sheet(1)
        if act is not None and act.text:
            background = f"{background}\n{act.text}"
        return "\n\n".join([
            render("whodunit", "rules", self.lang),
            render("whodunit", "role", self.lang, me=self.name, title=self.seat.sheet.title,
                   background=clip_tokens(background, self.config.story_tokens),
                   case=self.seat.sheet.background,
                   murderer=self.seat.sheet.is_murderer,
                   mission=me.mission or "\n".join(me.final_goals), clues=self.text_clues,
                   secrets=me.secrets),
            render("whodunit", "live", self.lang,
                   dialogue=within(self.dialogue, self.config.history_tokens)),
        ])

    def messages(self, template: str, **values: Any) -> list[Message]:
        text = render("whodunit", template, self.lang, me=self.name, **values)
        images = [ImagePart(url=card.path, caption=card.caption) for card in self.cards
                  if card.path]
        captions = [card.caption for card in self.cards if not card.path]
        if captions:
            text = render("whodunit", "captions", self.lang, captions=captions) + "\n\n" + text
        content: str | list[TextPart | ImagePart] = text
        if images:
            content = [TextPart(text=text), *images]
        return chat(content, self.system())

    @property
    def caller(self) -> Caller:
        config = self.config
        return Caller.for_seat(self.seat, temperature=config.temperature,
                               attempts=config.attempts, text_tokens=config.reply_tokens,
                               object_tokens=config.reply_tokens)

    async def text(self, purpose: str, messages: list[Message]) -> str:
        return nonempty((await self.caller.text(purpose, messages)).strip(), purpose)

    async def structured(self, purpose: str, messages: list[Message],
                         schema: type[BaseModel]) -> Any:
        return await self.caller.structured(purpose, messages, schema)

    # -- decisions ------------------------------------------------------------------------------
    async def on_ask(self, decision: AskQuestions) -> Questions:
        return await self.ask(decision.candidates, decision.count)

    async def on_turn(self, decision: TakeTurn) -> Questions:
        return await self.ask(decision.candidates, 1)

    async def on_vote(self, decision: CastVote) -> Vote:
        return Vote(target=await self.name_killer("vote", decision.candidates, decision.victim))

    async def on_accuse(self, decision: Accuse) -> Accusation:
        return Accusation(target=await self.name_killer("accuse", decision.candidates, None))

    async def on_speak(self, decision: Speak) -> Speech:
        if decision.question is not None:
            return Speech(text=await self.text("answer", self.messages(
                "act_answer", asker=decision.question.speaker,
                question=decision.question.text)))
        if decision.kind == "introduction":
            return Speech(text=await self.text("introduction", self.messages("act_introduce")))
        if decision.kind == "clue_share":
            return await self.discuss()
        if decision.kind == "reasoning":
            return Speech(text=await self.text("reasoning", self.messages("act_reason")))
        return Speech(text=await self.text(decision.kind, self.messages(
            "act_speak", request=decision.prompt)))

    async def discuss(self) -> Speech:
        """Share and analyse the clues and choose whom to question, in one call (I_D)."""
        others = [o.name for o in self.seat.sheet.others]
        fields: dict[str, Any] = {"clues": (str, ...), "target": (Literal[tuple(others)], ...),
                                  "question": (str, ...)}
        schema = create_model("Discussion", **fields)
        reply = await self.structured("clue_share", self.messages(
            "act_discuss", candidates=others), schema)
        self.planned = Questions(target=reply.target, questions=[reply.question])
        return Speech(text=reply.clues)

    async def ask(self, candidates: list[str], count: int) -> Questions:
        planned, self.planned = self.planned, None
        if planned is not None and count == 1 and planned.target in candidates:
            return planned
        reply = await self.structured("ask", self.messages(
            "act_ask", candidates=candidates, count=count), questions_schema(count, candidates))
        return Questions(target=reply.target, questions=reply.questions)

    async def name_killer(self, purpose: str, candidates: list[str], victim: str | None) -> str:
        """The paper's free-text vote, parsed; a structured choice when it names no one."""
        messages = self.messages("act_vote", candidates=candidates, victim=victim)
        found = parse_killer(await self.text(purpose, messages), candidates)
        if found is not None:
            return found
        schema = choice_schema(candidates, field_name="killer", reason=False, name="Killer")
        reply = await self.structured(f"{purpose}.retry", messages, schema)
        return str(reply.killer)
