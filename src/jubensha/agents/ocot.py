"""Internal.

The Objective-Guided Chain of Thought baseline (architecture ``ocot``), adapted to murder
mysteries as in the PLAYER* paper's appendix C.2 (after Park et al. 2023, Zhao et al. 2024).

Before each questioning turn the agent reflects on its objectives one at a time
(``objective.reflect``: achieved or not, and what is still missing), then writes its
questions from those reflections, its script and the dialogue (``question``); the
objectives and reflections stay in the seat's system prompt, apart from the dialogue. It answers in
one call from its script and the dialogue (``answer``). The objectives are the character's
own (the act's goals, else the final goals, else the mission); a sheet without any gets the
side's default objectives (``prompts/ocot/*/objectives.j2``).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from jubensha.agents.baseline import BaselineAgent, BaselineConfig
from jubensha.agents.options import parse_options
from jubensha.agents.toolkit import questions_schema
from jubensha.engine import AskQuestions, Questions, Spoke
from jubensha.prompts import render


class OCoTConfig(BaselineConfig):
    max_objectives: int = Field(5, ge=1, description="Objectives reflected on per turn "
                                                     "(the first ones).")


class Reflection(BaseModel):
    achieved: bool
    reflection: str


class OCoTAgent(BaselineAgent):
    architecture = "ocot"
    config: OCoTConfig

    def __init__(self, config: OCoTConfig | None = None):
        super().__init__(config or OCoTConfig())

    @classmethod
    def from_option(cls, option: str) -> OCoTAgent:
        return cls(parse_options(OCoTConfig, option, "ocot"))

    def objectives(self) -> list[str]:
        sheet = self.seat.sheet
        me = sheet.me
        act = self.act_sheet
        goals = (act.goals if act and act.goals else me.final_goals) or (
            [me.mission] if me.mission.strip() else [])
        if not goals:
            victims = me.killed if sheet.is_murderer and me.killed else [
                v.name for v in sheet.victims]
            text = render("ocot", "objectives", self.lang, murderer=sheet.is_murderer,
                          victims=victims)
            goals = [line.strip() for line in text.splitlines() if line.strip()]
        return goals[:self.config.max_objectives]

    async def on_ask(self, decision: AskQuestions) -> Questions:
        reflections = []
        for objective in self.objectives():
            thought = await self.structured(
                "objective.reflect", "ocot", "reflect", objective, Reflection,
                render("ocot", "notes", self.lang, objective=objective, reflections=[]))
            reflections.append({"objective": objective, "achieved": thought.achieved,
                                "reflection": thought.reflection})
        query = " ".join([self.victims_query(decision.victim),
                          *(r["reflection"] for r in reflections)])
        reply = await self.structured(
            "question", "ocot", "question", query,
            questions_schema(decision.count, decision.candidates),
            render("ocot", "notes", self.lang, objective=None, reflections=reflections),
            candidates=decision.candidates, count=decision.count)
        return Questions(target=reply.target, questions=reply.questions)

    async def answer(self, question: Spoke) -> str:
        return await self.text("answer", "ocot", "answer", question.text,
                               asker=question.speaker, question=question.text,
                               murderer=self.seat.sheet.is_murderer,
                               sentences=self.config.sentences)
