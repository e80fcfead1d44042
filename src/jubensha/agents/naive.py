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

import re
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from jubensha.agents.options import parse_options
from jubensha.agents.person import first_person
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
from jubensha.llm import (
    GenerateConfig,
    Message,
    ModelError,
    Request,
    choice_schema,
    generate_object,
)
from jubensha.memory.text import sentence_spans
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


class RatingReply(BaseModel):
    trust: int = Field(ge=0, le=2)
    doubt: int = Field(ge=0, le=2)


def clip(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, cut at a word boundary with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return cut.rstrip(",;:") + "…"


def recent(lines: list[str], budget: int) -> list[str]:
    """The newest lines whose total length fits ``budget``, oldest first."""
    kept: list[str] = []
    used = 0
    for line in reversed(lines):
        if used + len(line) > budget:
            break
        kept.append(line)
        used += len(line) + 1
    return kept[::-1]


def window(lines: list[str], budget: int) -> list[str]:
    """The lines from a start that moves only when they outgrow ``budget``, then jumps so
    that they fill half of it: oldest first, at most ``budget`` characters, and the same
    start for many calls in a row (a cached prefix stays valid)."""
    start, used = 0, 0
    for end, line in enumerate(lines, 1):
        used += len(line) + 1
        if used > budget:
            kept = recent(lines[start:end], budget // 2)
            start = end - len(kept)
            used = sum(len(kept_line) + 1 for kept_line in kept)
    return lines[start:]


def questions_schema(candidates: list[str], count: int) -> type[BaseModel]:
    return _questions_schema(tuple(candidates), count)


@lru_cache(maxsize=256)
def _questions_schema(candidates: tuple[str, ...], count: int) -> type[BaseModel]:
    """One class per (candidates, count): building one costs ~2 ms of every question."""
    return create_model("Questions", target=(Literal[tuple(candidates)], ...),
                        questions=(list[str], Field(min_length=count, max_length=count)))


def turn_schema(candidates: list[str], locations: list[str]) -> type[BaseModel]:
    return _turn_schema(tuple(candidates), tuple(locations))


@lru_cache(maxsize=256)
def _turn_schema(candidates: tuple[str, ...], locations: tuple[str, ...]) -> type[BaseModel]:
    fields: dict[str, Any] = {
        "action": (Literal["ask", "investigate"] if locations else Literal["ask"], ...),
        "target": (Literal[tuple(candidates)], ...),
        "question": (str, ...),
    }
    if locations:
        fields["location"] = (Literal[tuple(locations)], ...)
    return create_model("Turn", **fields)


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
            self.clues.append(render("naive", "line", self.lang, **event.model_dump()))
            return
        if isinstance(event, HostSpoke):
            return
        line = render("naive", "line", self.lang, **event.model_dump())
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
        timeline = " ".join(f"{t.time} {t.text}" if t.time else t.text for t in me.timeline)
        act = self.act_sheet
        act_text = clip(act.text, self.config.story_chars // 2) if act and act.act > 1 else ""
        goals = (act.goals if act and act.goals else me.final_goals) or (
            [me.mission] if me.mission else [])

        def mine(text: str) -> str:
            return text if sheet.is_murderer else first_person(text, self.lang)

        return render("naive", "system", self.lang, me=me.name, title=sheet.title,
                      background=clip(sheet.background, 600), rules=clip(sheet.rules, 300),
                      others=[o.name for o in sheet.others], description=me.description,
                      story=mine(clip(me.story, self.config.story_chars)),
                      timeline=mine(clip(timeline, self.config.story_chars // 2)),
                      act_text=mine(act_text), goals=goals,
                      murderer=sheet.is_murderer, secrets=me.secrets)

    def messages(self, template: str, **values: Any) -> list[Message]:
        """System: the sheet; user: clues, history, then the decision (stable to new)."""
        context = render("naive", "context", self.lang,
                         clues=recent(self.clues, self.config.clue_chars),
                         history=window(self.history, self.config.history_chars))
        asked = render("naive", template, self.lang, me=self.name, **values)
        user = f"{context}\n\n{asked}" if context else asked
        return [Message(role="system", content=self.system()), Message(role="user", content=user)]

    def request(self, purpose: str, messages: list[Message], max_tokens: int) -> Request:
        config = GenerateConfig(temperature=self.config.temperature, max_tokens=max_tokens,
                                seed=self.seat.seed)
        return Request(messages=messages, config=config, purpose=purpose, seat=self.name)

    async def structured(self, purpose: str, messages: list[Message],
                         schema: type[BaseModel]) -> Any:
        result = await generate_object(self.model,
                                       self.request(purpose, messages, self.config.object_tokens),
                                       schema, attempts=self.config.attempts, lang=self.lang)
        return result.value

    # -- decisions -----------------------------------------------------------------------
    async def on_speak(self, decision: Speak) -> Speech:
        question = decision.question
        sheet = self.seat.sheet
        messages = self.messages("speak", prompt=decision.prompt, sentences=self.config.sentences,
                                 question=question.model_dump() if question else None,
                                 murderer=sheet.is_murderer)
        names = sheet.seat_names
        limit = self.config.speech_chars
        with self.speaking(lambda raw: clean_speech(raw, self.name, names, limit)):
            response = await self.model.generate(
                self.request(decision.kind, messages, self.config.max_tokens))
        text = response.text
        if response.finish_reason == "length":
            text = whole_sentences(text)
        text = clean_speech(text, self.name, names, limit)
        if not text:
            raise ModelError(f"empty {decision.kind} from the model")
        return Speech(text=text)

    async def on_ask(self, decision: AskQuestions) -> Questions:
        schema = questions_schema(decision.candidates, decision.count)
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
        schema = choice_schema(candidates, field_name="target", name=purpose.capitalize())
        return await self.structured(purpose, self.messages(
            purpose, candidates=candidates, **values), schema)

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


def whole_sentences(text: str) -> str:
    """A reply cut off by its token limit without the unfinished sentence at its end (the
    whole reply when no sentence ended)."""
    spans = sentence_spans(text)
    ended = [end for _, end in spans if text[end - 1] in ".!?。！？…\"'”’」』)）"]
    return text[:ended[-1]] if ended else text


def clean_speech(text: str, name: str, seats: list[str], limit: int) -> str:
    """Model text as one line of speech by ``name``: no ``Name:`` prefix, no wrapping
    quotes, cut where the model starts writing a dialogue line for any seat (when the
    reply is nothing but such lines, the first one's words are kept), bounded."""
    names = "|".join(re.escape(seat) for seat in sorted(seats, key=len, reverse=True))
    text = re.sub(rf"^\s*(?:\*\*)?{re.escape(name)}(?:\*\*)?\s*[:：]\s*", "", text.strip())
    turns = list(re.finditer(rf"(?:^|\s)(?:\*\*)?(?:{names})(?:\*\*)?\s*[:：]", text))
    if turns:
        head = text[:turns[0].start()].strip()
        end = turns[1].start() if len(turns) > 1 else len(text)
        text = head or text[turns[0].end():end]
    return clip(text.strip().strip('"“”').strip(), limit)

