"""Internal.

The Werewolf baseline (architecture ``werewolf``), adapted to murder mysteries as in the
PLAYER* paper's appendix C.2 (after Xu et al. 2023).

Asking takes two calls: ``question.pick`` chooses the seat to question and questions from a
fixed list written by experts (the paper's table A2, ``prompts/werewolf/*/questions.j2``),
given the script and the dialogue; ``question.rewrite`` fits the picked questions to the case
and the conversation. Answering takes three: ``answer.draft`` from the script and the
dialogue, ``answer.reflect`` criticises the draft against the dialogue, ``answer.final``
writes the answer the critique calls for; the draft and the critique stay in the seat's
system prompt, the question in the user prompt. Everything else is ``BaselineAgent``'s.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from jubensha.agents.baseline import BaselineAgent, BaselineConfig
from jubensha.agents.options import parse_options
from jubensha.engine import AskQuestions, Questions, Spoke
from jubensha.llm import ModelError
from jubensha.prompts import render


def predefined_questions(lang: str, victim: str | None = None) -> list[str]:
    """The ten prepared questions of the paper's table A2, in ``lang``."""
    text = render("werewolf", "questions", lang, victim=victim)
    return [line.strip() for line in text.splitlines() if line.strip()]


def pick_schema(candidates: list[str], choices: int, count: int) -> type[BaseModel]:
    """A target among ``candidates`` and ``count`` question numbers ("1".."choices")."""
    numbers = tuple(str(n) for n in range(1, choices + 1))
    size = Field(min_length=count, max_length=count)
    fields: dict[str, Any] = {"target": (Literal[tuple(candidates)], ...),
                              "picks": (list[Literal[numbers]], size)}  # type: ignore[valid-type]
    return create_model("Pick", **fields)


def rewrite_schema(count: int) -> type[BaseModel]:
    return create_model("Rewrite", questions=(list[str], Field(min_length=count,
                                                               max_length=count)))


class WerewolfAgent(BaselineAgent):
    architecture = "werewolf"

    @classmethod
    def from_option(cls, option: str) -> WerewolfAgent:
        return cls(parse_options(BaselineConfig, option, "werewolf"))

    async def on_ask(self, decision: AskQuestions) -> Questions:
        victim = decision.victim or next((v.name for v in self.seat.sheet.victims), None)
        prepared = predefined_questions(self.lang, victim)
        pick = await self.structured(
            "question.pick", "werewolf", "pick", self.victims_query(decision.victim),
            pick_schema(decision.candidates, len(prepared), decision.count),
            questions=prepared, candidates=decision.candidates, count=decision.count)
        picked = [prepared[int(number) - 1] for number in pick.picks]
        rewrite = await self.structured(
            "question.rewrite", "werewolf", "rewrite", f"{pick.target} {' '.join(picked)}",
            rewrite_schema(len(picked)), target=pick.target, picked=picked)
        questions = [q.strip() for q in rewrite.questions]
        if not all(questions):
            raise ModelError("the rewritten questions include an empty one")
        return Questions(target=pick.target, questions=questions)

    async def answer(self, question: Spoke) -> str:
        values: dict[str, Any] = {
            "asker": question.speaker, "question": question.text,
            "murderer": self.seat.sheet.is_murderer, "sentences": self.config.sentences}
        draft = await self.text("answer.draft", "werewolf", "draft", question.text, **values)
        # The draft and the critique are the seat's own thoughts: the system prompt's
        # (BaselineAgent.messages), never part of what it was asked.
        reflection = await self.text(
            "answer.reflect", "werewolf", "reflect", f"{question.text} {draft}",
            render("werewolf", "notes", self.lang, draft=draft, reflection=None), **values)
        return await self.text(
            "answer.final", "werewolf", "final", None,
            render("werewolf", "notes", self.lang, draft=draft, reflection=reflection),
            **values)
