"""Internal.

Self-Refinement (SR): make an answer carry every timeline fact the question asks for.

Following section 4 and appendix H of the paper: decompose the question into
sub-questions (``sr.decompose``); for each, judge which of the seat's timeline facts can
answer it (``sr.relevance``, one call per sub-question); check which of the relevant facts
the answer already contains (``sr.contains``, strict: time and action); rewrite the
answer to add the missing ones (``sr.rewrite``). The first two depend only on the question,
so a ``RefinementPlan`` is made once per question and reused by every Self-Verification
attempt; the last two run for each answer.

Only the facts the seat may volunteer are candidates: a concealing seat (the murderer, by
default) passes its facts tied to secrets through ``timeline.conceal`` first, so SR can
never push it to confess.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from jubensha.agents.thinkthrice.calls import (
    Rewrite,
    SubQuestions,
    ThinkCaller,
    flags,
    flags_schema,
)
from jubensha.llm import ModelError


class RefinementPlan(BaseModel):
    """What SR learnt from the question alone."""

    question: str
    subquestions: list[str]
    candidates: list[str] = Field(description="Facts the seat may volunteer.")
    relevant: list[str] = Field(description="Candidates that answer some sub-question.")


class Refinement(BaseModel):
    answer: str
    missing: list[str] = Field(default_factory=list, description="Relevant facts the "
                                                                 "initial answer lacked.")
    rewritten: bool = False


async def decompose(caller: ThinkCaller, question: str, limit: int) -> list[str]:
    """The question's sub-questions; the question itself when decomposition fails."""
    try:
        reply = await caller.structured("sr.decompose", caller.messages(
            "sr_decompose", question=question), SubQuestions)
    except ModelError:
        return [question]
    subquestions = [q.strip() for q in reply.questions if q.strip()]
    return subquestions[:limit] or [question]


async def plan(caller: ThinkCaller, question: str, candidates: list[str],
               limit: int) -> RefinementPlan:
    """Sub-questions and the candidate facts relevant to any of them."""
    subquestions = await decompose(caller, question, limit)
    chosen = [False] * len(candidates)
    if candidates:
        schema = flags_schema("Relevance", candidates)
        for subquestion in subquestions:
            try:
                reply = await caller.structured("sr.relevance", caller.messages(
                    "sr_relevance", subquestion=subquestion, facts=candidates), schema)
            except ModelError:
                continue
            chosen = [old or new for old, new in zip(chosen, flags(reply, len(candidates)),
                                                     strict=True)]
    relevant = [fact for fact, keep in zip(candidates, chosen, strict=True) if keep]
    return RefinementPlan(question=question, subquestions=subquestions, candidates=candidates,
                          relevant=relevant)


async def refine(caller: ThinkCaller, refinement_plan: RefinementPlan, answer: str, *,
                 system: str, name: str, conceal: list[str]) -> Refinement:
    """``answer`` with the relevant facts it lacks added; unchanged when it lacks none or
    a step fails (SR improves an answer, it never costs the seat its answer)."""
    relevant = refinement_plan.relevant
    if not relevant:
        return Refinement(answer=answer)
    try:
        reply = await caller.structured("sr.contains", caller.messages(
            "sr_contains", answer=answer, facts=relevant), flags_schema("Contained", relevant))
    except ModelError:
        return Refinement(answer=answer)
    missing = [fact for fact, present in zip(relevant, flags(reply, len(relevant)), strict=True)
               if not present]
    if not missing:
        return Refinement(answer=answer)
    try:
        rewrite = await caller.structured("sr.rewrite", caller.messages(
            "sr_rewrite", system=system, me=name, question=refinement_plan.question,
            answer=answer, missing=missing, conceal=conceal), Rewrite)
    except ModelError:
        return Refinement(answer=answer, missing=missing)
    text = rewrite.answer.strip()
    return Refinement(answer=text or answer, missing=missing, rewritten=bool(text))
