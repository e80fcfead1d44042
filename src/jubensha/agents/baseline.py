"""Internal.

What the PLAYER* paper's LLM baselines (``werewolf``, ``ocot``) share.

Both read their script and the dialogue through retrieval, as in the paper's appendix C.1
(script chunks of at most 50 tokens, one question-and-answer pair per dialogue record, a
token budget for each in a prompt), and differ only in how they ask and answer. This base
class keeps the seat's memory, builds the context a prompt gets, makes tagged model calls,
and answers the decisions the paper does not specify for the baselines (speeches other
than answers, votes, accusations, ratings, open turns) with plain prompts of its own.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from jubensha.agents.toolkit import (
    Caller,
    RatingReply,
    chat,
    clean_speech,
    clip,
    event_line,
    goals,
    recent,
    target_schema,
    turn_schema,
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
    Spoke,
    TakeTurn,
    Vote,
)
from jubensha.llm import Message, ModelError
from jubensha.memory.store import MemoryConfig, MemoryStore, RetrievalMode
from jubensha.memory.text import TokenizerOptions
from jubensha.prompts import render
from jubensha.scripts.model import ActSheet

OBJECT_TOKENS = 300
"""Token limit of a structured reply (a choice, questions, a rating, a reflection)."""


class BaselineConfig(BaseModel):
    """Budgets and sampling shared by the baselines; ``arch:key=value+key=value``."""

    model_config = ConfigDict(extra="forbid")

    script_tokens: int = Field(600, ge=0, description="Retrieved script in a prompt (the "
                                                      "paper: 4000).")
    dialogue_tokens: int = Field(400, ge=0, description="Retrieved dialogue in a prompt (the "
                                                        "paper: 4000).")
    chunk_tokens: int = Field(50, ge=1, description="Script chunk size (the paper: 50).")
    retrieval: RetrievalMode = Field("lexical", description="dense and hybrid need the seat's "
                                                            "embedder.")
    recent_events: int = Field(6, ge=0, description="Latest events always in the prompt.")
    background_chars: int = Field(600, ge=0)
    sentences: int = Field(3, ge=1, description="Asked length of a speech.")
    max_tokens: int = Field(160, ge=16, description="Token limit of a speech or a thought.")
    speech_chars: int = Field(800, ge=50, description="A longer speech is cut.")
    temperature: float = Field(0.7, ge=0)
    attempts: int = Field(2, ge=1, description="Tries for a structured reply.")


class BaselineAgent(Agent):
    """A retrieval-backed LLM player; subclasses implement ``on_ask`` and ``answer``."""

    area = "baseline"
    """Prompt area of the subclass's own templates."""

    def __init__(self, config: BaselineConfig | None = None):
        self.config = config or BaselineConfig()
        self.lines: list[str] = []
        self.clues: list[str] = []
        self.questions: dict[int, Spoke] = {}

    async def start(self, seat: SeatContext) -> None:
        await super().start(seat)
        sheet = seat.sheet
        self.act_sheet = sheet.me.act_sheet(1)
        self.acts: set[int] = set()
        tokenizer = TokenizerOptions(keep_words=tuple(sheet.seat_names))
        memory = MemoryConfig(mode=self.config.retrieval, chunk_tokens=self.config.chunk_tokens,
                              tokenizer=tokenizer)
        self.memory = MemoryStore(memory, seat.embedder if self.config.retrieval != "lexical"
                                  else None)
        me = sheet.me
        self.memory.add_document(me.story, source="script", kind="story")
        timeline = "\n".join(render("extractive", "timeline", self.lang, time=t.time, text=t.text)
                             for t in me.timeline)
        self.memory.add_document(timeline, source="script", kind="timeline")
        relations = "\n".join(render("extractive", "relationship", self.lang, other=r.other,
                                     text=r.description) for r in me.relationships)
        self.memory.add_document(relations, source="script", kind="relationship")
        if self.act_sheet is not None:
            self.remember_act(self.act_sheet)

    def remember_act(self, sheet: ActSheet) -> None:
        """The act's sheet becomes current; its text is remembered once (act 1 comes both
        with the character sheet and with the distribution stage)."""
        self.act_sheet = sheet
        if sheet.act not in self.acts:
            self.acts.add(sheet.act)
            self.memory.add_document(sheet.text, source="script", kind="act", act=sheet.act)

    # -- observing ---------------------------------------------------------------------------
    async def observe(self, event: Event) -> None:
        if isinstance(event, ActStarted) and event.sheet is not None:
            self.remember_act(event.sheet)
            return
        if isinstance(event, HostSpoke):
            return
        line = event_line(event, self.lang)
        if isinstance(event, ClueRevealed):
            self.clues.append(line)
            self.memory.add(line, source="clue", turn=event.index)
            return
        if not line:
            return
        self.lines.append(line)
        if isinstance(event, Spoke) and event.kind == "question":
            self.questions[event.index] = event
        elif isinstance(event, Spoke) and event.reply_to in self.questions:
            asked = event_line(self.questions.pop(event.reply_to), self.lang)
            self.memory.add(f"{asked}\n{line}", source="dialogue", kind="qa",
                            speaker=event.speaker, turn=event.index)
        else:
            self.memory.add(line, source="dialogue", kind=getattr(event, "kind", event.type),
                            speaker=getattr(event, "speaker", None), turn=event.index)

    # -- prompts -------------------------------------------------------------------------------
    async def context(self, query: str) -> dict[str, Any]:
        """Script and dialogue retrieved for ``query`` within their budgets (in the order they
        were remembered), and the latest events."""
        script = await self.memory.retrieve_budget(query, self.config.script_tokens,
                                                   where={"source": ["script", "clue"]})
        dialogue = await self.memory.retrieve_budget(query, self.config.dialogue_tokens,
                                                     where={"source": "dialogue"})
        latest = self.lines[-self.config.recent_events:] if self.config.recent_events else []
        return {"script": [h.record.text for h in script],
                "dialogue": [h.record.text for h in dialogue if h.record.text not in latest],
                "latest": latest}

    def system(self, script: list[str] | None = None, notes: str = "") -> str:
        """Who the seat is and what only it knows: its sheet, the passages of its script
        retrieved for this call, and its own ``notes`` (a draft, a critique, reflections)."""
        sheet = self.seat.sheet
        me = sheet.me
        return render("baseline", "system", self.lang, me=me.name, title=sheet.title,
                      background=clip(sheet.background, self.config.background_chars),
                      others=[o.name for o in sheet.others], description=me.description,
                      goals=goals(me, self.act_sheet), murderer=sheet.is_murderer,
                      secrets=me.secrets, clues=recent(self.clues, 600), script=script or [], notes=notes)

    async def messages(self, area: str, template: str, query: str | None, notes: str = "",
                       **values: Any) -> list[Message]:
        """The system prompt holds what only this seat knows (its sheet, the script
        retrieved for ``query``, its ``notes``); the user prompt what was said at the table
        and the request. A reply draws on both, but the split keeps the seat's own text
        apart from what it may repeat: the scripted fake repeats only the user prompt."""
        context = await self.context(query) if query is not None else {}
        script = context.pop("script", [])
        user = render(area, template, self.lang, me=self.name, **context, **values)
        return chat(user, self.system(script, notes))

    @property
    def caller(self) -> Caller:
        config = self.config
        return Caller.for_seat(self.seat, temperature=config.temperature,
                               attempts=config.attempts, text_tokens=config.max_tokens,
                               object_tokens=OBJECT_TOKENS)

    async def text(self, purpose: str, area: str, template: str, query: str | None,
                   notes: str = "", **values: Any) -> str:
        """One free-text call (a speech or a thought), cleaned of speaker prefixes; a reply
        that is empty once cleaned is asked for again (a new sample), up to ``attempts``."""
        messages = await self.messages(area, template, query, notes, **values)
        caller = self.caller
        for sample in range(self.config.attempts):
            text = clean_speech(await caller.text(purpose, messages, sample=sample), self.name,
                                self.seat.sheet.seat_names, self.config.speech_chars)
            if text:
                return text
        raise ModelError(f"empty {purpose} from the model after {self.config.attempts} "
                         "attempt(s)")

    async def structured(self, purpose: str, area: str, template: str, query: str,
                         schema: type[BaseModel], notes: str = "", **values: Any) -> Any:
        messages = await self.messages(area, template, query, notes, **values)
        return await self.caller.structured(purpose, messages, schema)

    def victims_query(self, victim: str | None = None) -> str:
        victims = [victim] if victim else [v.name for v in self.seat.sheet.victims]
        return " ".join([*victims, *self.lines[-3:]])

    # -- decisions -----------------------------------------------------------------------------
    @abstractmethod
    async def on_ask(self, decision: AskQuestions) -> Questions:
        """Choose whom to question and write ``decision.count`` questions."""

    @abstractmethod
    async def answer(self, question: Spoke) -> str:
        """Reply to a question put to this seat."""

    async def on_speak(self, decision: Speak) -> Speech:
        if decision.kind == "answer" and decision.question is not None:
            return Speech(text=await self.answer(decision.question))
        return Speech(text=await self.text(
            decision.kind, "baseline", "speak", self.victims_query(), prompt=decision.prompt,
            sentences=self.config.sentences))

    async def on_vote(self, decision: CastVote) -> Vote:
        reply = await self.choose("vote", decision.candidates, decision.victim,
                                  accused=decision.accused)
        return Vote(target=reply.target, reason=reply.reason)

    async def on_accuse(self, decision: Accuse) -> Accusation:
        reply = await self.choose("accuse", decision.candidates, None, accused=[])
        return Accusation(target=reply.target, reason=reply.reason)

    async def choose(self, purpose: Literal["vote", "accuse"], candidates: list[str],
                     victim: str | None, accused: list[str]) -> Any:
        return await self.structured(purpose, "baseline", purpose, self.victims_query(victim),
                                     target_schema(candidates, purpose), candidates=candidates, victim=victim,
                                     accused=accused)

    async def on_rate(self, decision: RateStatement) -> Rating:
        statement = decision.statement
        reply = await self.structured("rate", "baseline", "rate", statement.text, RatingReply,
                                      speaker=statement.speaker, statement=statement.text)
        return Rating(trust=reply.trust, doubt=reply.doubt)

    async def on_turn(self, decision: TakeTurn) -> Questions | Investigate:
        schema = turn_schema(decision.candidates, decision.locations)
        reply = await self.structured("turn", "baseline", "turn", self.victims_query(), schema,
                                      candidates=decision.candidates,
                                      locations=decision.locations)
        if reply.action == "investigate":
            return Investigate(location=reply.location)
        return Questions(target=reply.target, questions=[reply.question])
