"""Internal.

The ThinkThrice agent (architecture ``thinkthrice``): think three times before speaking.

An answer is made in up to three stages (section 4 of the paper, figure 2): an initial
answer from the seat's summary, the game rules, the background, the current dialogue and
the memories most relevant to it (Memory Retrieval); that answer completed with the
timeline facts it lacks (Self-Refinement); and the whole checked against the seat's own
timeline, regenerated until it passes or N attempts are spent (Self-Verification). Asking
is choosing a target (``choose_target``, skipped when there is one candidate) and asking it
(``ask``); voting is one ``vote`` call. ``config.ThinkThriceConfig`` says which modules
are on; ``ABLATIONS`` are the paper's rows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel

from jubensha.agents.thinkthrice.calls import QUESTIONS, Facts, ThinkCaller
from jubensha.agents.thinkthrice.config import ThinkThriceConfig
from jubensha.agents.thinkthrice.memory_retrieval import EpisodicMemory
from jubensha.agents.thinkthrice.refinement import RefinementPlan, plan, refine
from jubensha.agents.thinkthrice.timeline import conceal, entry_facts, length_unit
from jubensha.agents.thinkthrice.verification import Checker, self_verify
from jubensha.agents.toolkit import (
    RatingReply,
    clean_speech,
    clip,
    questions_schema,
    target_schema,
)
from jubensha.engine import (
    Accusation,
    Accuse,
    ActStarted,
    Agent,
    AskQuestions,
    CastVote,
    Event,
    HostSpoke,
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
from jubensha.llm import ModelError, choice_schema
from jubensha.prompts import render
from jubensha.scripts.model import ActSheet

_ANSWER_MARK = re.compile(r"#\s*(?:answer|回答)\s*#\s*[:：]?", re.IGNORECASE)


class Turn(BaseModel):
    """What a speech answers: who asks, what, and the line that is the current dialogue."""

    question: str
    dialogue: str
    asker: str | None = None
    exclude: list[int] = []

    @property
    def from_host(self) -> bool:
        """Self-introductions and every other host prompt; answers to players are not."""
        return self.asker is None


class ThinkThriceAgent(Agent):
    architecture = "thinkthrice"

    def __init__(self, config: ThinkThriceConfig | None = None) -> None:
        self.config = config or ThinkThriceConfig()
        self.memory: EpisodicMemory | None = None
        self.act_sheet: ActSheet | None = None
        self.last_line = ""
        self.host_prompt: tuple[str, int] | None = None
        self._facts: dict[int, list[str]] = {}

    @classmethod
    def from_option(cls, option: str) -> ThinkThriceAgent:
        return cls(ThinkThriceConfig.parse(option))

    async def start(self, seat: SeatContext) -> None:
        await super().start(seat)
        sheet = seat.sheet
        self.sheet = sheet
        self.names = [*sheet.seat_names, *(v.name for v in sheet.victims),
                      *sheet.me.aliases]
        self.act_sheet = sheet.me.act_sheet(1)
        if self.config.memory:
            self.memory = EpisodicMemory(self.lang, self.names, self.config.k,
                                         self.config.retrieval, seat.embedder or seat.model,
                                         self.config.memory_chars)

    async def observe(self, event: Event) -> None:
        if isinstance(event, ActStarted) and event.sheet is not None:
            self.act_sheet = event.sheet
            return
        if isinstance(event, HostSpoke) and event.to == self.name:
            self.host_prompt = (event.text, event.index)
        if isinstance(event, Spoke):
            self.last_line = self.line(event)
        if self.memory is not None:
            self.memory.remember(event)

    async def on_ask(self, decision: AskQuestions) -> Questions:
        return await self.ask(decision.candidates, decision.count, decision.victim)

    async def on_turn(self, decision: TakeTurn) -> Questions:
        return await self.ask(decision.candidates, 1, None)

    async def on_vote(self, decision: CastVote) -> Vote:
        target, reason = await self.choose("vote", decision.candidates, decision.victim,
                                           decision.accused)
        return Vote(target=target, reason=reason)

    async def on_accuse(self, decision: Accuse) -> Accusation:
        target, reason = await self.choose("accuse", decision.candidates, None, [])
        return Accusation(target=target, reason=reason)

    # -- what the prompts are made of -------------------------------------------------------
    @property
    def caller(self) -> ThinkCaller:
        config = self.config
        return ThinkCaller.for_seat(self.seat, temperature=config.temperature,
                                    attempts=config.attempts, text_tokens=config.answer_tokens,
                                    object_tokens=config.judge_tokens)

    @property
    def conceals(self) -> bool:
        """Whether this seat keeps its secrets out of SR and SV (see ``config.conceal``)."""
        rule = self.config.conceal
        return rule == "everyone" or rule == "murderer" and self.sheet.is_murderer

    def line(self, event: Event | dict[str, Any]) -> str:
        values = event if isinstance(event, dict) else event.model_dump()
        return render("thinkthrice", "line", self.lang, **values)

    def summary(self) -> str:
        """The agent summary, rules and background: the system message of every prompt
        that speaks as the character."""
        me = self.sheet.me
        act = self.act_sheet if self.act_sheet and self.act_sheet.act > 1 else None
        return render("thinkthrice", "summary", self.lang, me=me, sheet=self.sheet,
                      story=clip(me.story, self.config.story_chars),
                      timeline=entry_facts(me.timeline, self.lang),
                      act_text=clip(act.text, self.config.story_chars // 2) if act else "",
                      goals=(act.goals if act and act.goals else me.final_goals),
                      murderer=self.sheet.is_murderer)

    def relationship(self, other: str | None) -> str:
        me = self.sheet.me
        known = next((r for r in me.relationships if other is not None and r.other == other),
                     None)
        public = next((o for o in self.sheet.others if o.name == other), None)
        return render("thinkthrice", "relationship", self.lang, other=other, known=known,
                      description=public.description if public else "")

    async def recall(self, query: str, exclude: Sequence[int] = (),
                     speaker: str | None = None) -> list[str]:
        """MR: the top-k memories for ``query``; nothing when the agent is memoryless."""
        if self.memory is None:
            return []
        return await self.memory.recall(query, exclude, speaker)

    async def facts(self) -> list[str]:
        """The seat's timeline facts: the sheet's timeline, else extracted from the story
        (``sr.timeline``) once per act and kept."""
        me = self.sheet.me
        if me.timeline:
            return entry_facts(me.timeline, self.lang)
        act = self.act_sheet.act if self.act_sheet else 1
        if act not in self._facts:
            story = clip(me.story, self.config.story_chars)
            if self.act_sheet and self.act_sheet.act > 1:
                story = f"{story}\n{clip(self.act_sheet.text, self.config.story_chars // 2)}"
            reply = await self.caller.structured("sr.timeline", self.caller.messages(
                "sr_timeline", me=self.name, players=self.sheet.seat_names,
                victims=[v.name for v in self.sheet.victims], story=story), Facts)
            self._facts[act] = [fact.strip() for fact in reply.facts if fact.strip()]
        return self._facts[act]

    async def volunteered_facts(self) -> list[str]:
        """The facts SR may add: all of them, or for a concealing seat those not tied to
        its secrets."""
        facts = await self.facts()
        if not self.conceals:
            return facts
        shown, _hidden = conceal(facts, self.sheet.me.secrets, self.names,
                                 self.config.conceal_overlap)
        return shown

    # -- speaking: MR, then SR, then SV ---------------------------------------------------
    def turn(self, decision: Speak) -> Turn:
        question = decision.question
        if question is not None:
            return Turn(question=question.text, dialogue=self.line(question),
                        asker=question.speaker, exclude=[question.index])
        prompt = decision.prompt
        exclude = [self.host_prompt[1]] if self.host_prompt and self.host_prompt[0] == prompt \
            else []
        dialogue = self.line({"type": "host_spoke", "text": prompt, "to": self.name})
        return Turn(question=prompt, dialogue=dialogue, exclude=exclude)

    async def on_speak(self, decision: Speak) -> Speech:
        turn = self.turn(decision)
        caller = self.caller
        memories = await self.recall(turn.question, turn.exclude)
        system = self.summary()
        refinement_plan: RefinementPlan | None = None

        async def produce(sample: int) -> str:
            nonlocal refinement_plan
            answer = await self.initial_answer(caller, system, turn, memories, sample)
            if not self.config.refine:
                return answer
            if refinement_plan is None:
                refinement_plan = await self.plan(caller, turn.question)
            refined = await refine(caller, refinement_plan, answer, system=system,
                                   name=self.name, conceal=self.secrets_kept)
            return self.clean(refined.answer) or answer

        if not self.config.verify_attempts:
            return Speech(text=await produce(0))
        checker = await self.checker(turn)
        verification = await self_verify(produce, lambda answer: checker.check(caller, answer),
                                         self.config.verify_attempts)
        return Speech(text=verification.best.answer)

    @property
    def secrets_kept(self) -> list[str]:
        return list(self.sheet.me.secrets) if self.conceals else []

    async def initial_answer(self, caller: ThinkCaller, system: str, turn: Turn,
                             memories: list[str], sample: int) -> str:
        asker = turn.asker
        messages = caller.messages(
            "answer", system=system, me=self.name, asker=asker, dialogue=turn.dialogue,
            memories=memories, relationship=self.relationship(asker))
        text = self.clean(await caller.text("answer", messages, sample=sample))
        if not text:
            raise ModelError("empty answer from the model")
        return text

    def clean(self, text: str) -> str:
        """Model text as this seat's speech: after the last ``#Answer#:``, no name prefix."""
        said = next((part for part in reversed(_ANSWER_MARK.split(text)) if part.strip()), "")
        return clean_speech(said, self.name, self.sheet.seat_names, self.config.speech_chars)

    async def plan(self, caller: ThinkCaller, question: str) -> RefinementPlan:
        try:
            candidates = await self.volunteered_facts()
        except ModelError:
            candidates = []
        return await plan(caller, question, candidates, self.config.max_subquestions)

    async def checker(self, turn: Turn) -> Checker:
        """SV's yardstick for this turn: the full timeline for an honest seat; for a
        concealing one, the facts it may show plus what it said before."""
        try:
            facts = await (self.volunteered_facts() if self.conceals else self.facts())
        except ModelError:
            facts = []
        config = self.config
        return Checker(me=self.name, players=self.sheet.seat_names,
                       victims=[v.name for v in self.sheet.victims], timeline=facts,
                       threshold=config.threshold(turn.from_host), consistency=self.conceals,
                       said=lambda answer: self.recall(answer, turn.exclude, speaker=self.name),
                       secrets=self.secrets_kept, names=self.names,
                       conceal_overlap=config.conceal_overlap,
                       length_unit=length_unit(config.length_unit, self.lang),
                       length_per_point=config.length_per_point, max_claims=config.max_claims)

    # -- asking, voting ---------------------------------------------------------------------
    async def ask(self, candidates: list[str], count: int, victim: str | None) -> Questions:
        caller = self.caller
        system = self.summary()
        target = candidates[0] if len(candidates) == 1 else \
            await self.choose_target(caller, system, candidates, victim)
        dialogue = self.last_line
        memories = await self.recall(f"{target} {dialogue}")
        reply: Any = await caller.structured("ask", caller.messages(
            "ask", system=system, me=self.name, target=target, count=count, dialogue=dialogue,
            memories=memories, relationship=self.relationship(target)),
            questions_schema(count, description=QUESTIONS))
        return Questions(target=target, questions=reply.questions)

    async def choose_target(self, caller: ThinkCaller, system: str, candidates: list[str],
                            victim: str | None) -> str:
        question = render("thinkthrice", "target_question", self.lang, candidates=candidates,
                          victim=victim)
        memories = await self.recall(question)
        reply: Any = await caller.structured("choose_target", caller.messages(
            "choose_target", system=system, me=self.name, candidates=candidates,
            question=question, memories=memories),
            choice_schema(candidates, field_name="target", reason=False, name="Target"))
        return str(reply.target)

    async def choose(self, purpose: Literal["vote", "accuse"], candidates: list[str],
                     victim: str | None, accused: list[str]) -> tuple[str, str]:
        caller = self.caller
        victims = [victim] if victim else [v.name for v in self.sheet.victims]
        question = render("thinkthrice", "vote_question", self.lang, purpose=purpose,
                          candidates=candidates, victims=victims, me=self.name)
        memories = await self.recall(question)
        reply: Any = await caller.structured(purpose, caller.messages(
            "vote", system=self.summary(), me=self.name, question=question, memories=memories,
            accused=accused, purpose=purpose),
            target_schema(candidates, purpose))
        return str(reply.target), str(reply.reason)

    async def on_rate(self, decision: RateStatement) -> Rating:
        caller = self.caller
        statement = decision.statement
        dialogue = self.line(statement)
        memories = await self.recall(dialogue, [statement.index])
        reply = await caller.structured("rate", caller.messages(
            "rate", system=self.summary(), me=self.name, dialogue=dialogue, memories=memories,
            speaker=statement.speaker), RatingReply)
        return Rating(trust=reply.trust, doubt=reply.doubt)
