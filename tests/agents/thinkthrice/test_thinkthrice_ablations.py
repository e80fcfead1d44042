"""Each ablation row makes the pattern of model calls the paper's modules imply."""

from __future__ import annotations

import pytest
from conftest import always, purposes, seat, spoke

from jubensha.engine.decisions import AskQuestions, CastVote, Questions, Speak, Speech, Vote
from jubensha.engine.events import HostSpoke
from jubensha.llm.fake import ScriptedModel

INTRO = "Tom Hale, please introduce yourself and say what you did on the day of the crime."
PLAYERS = ["Agnes Pike", "Samuel Reed", "Nora Vance"]


def stubborn_model() -> ScriptedModel:
    """Every SR step finds work (2 sub-questions, nothing contained) and SV never passes."""
    return ScriptedModel(replies={
        "answer": lambda _r: "#Answer#: At 21:10 I crossed the yard.",
        "sr.decompose": lambda _r: {"questions": ["Who are you?", "What did you do?"]},
        "sr.relevance": always(True),
        "sr.contains": always(False),
        "sr.rewrite": lambda _r: {"answer": "At 21:10 I crossed the yard with a lantern."},
        "sv.decompose": lambda _r: {"claims": ["At 21:10 Tom crossed the yard.", "Tom drank."]},
        "sv.verify": always(False),
    })


async def play_a_little(model: ScriptedModel, option: str) -> None:
    """An introduction, an answer to a player, a question to one of three, a vote."""
    agent = await seat("Tom Hale", model, option)
    await agent.observe(HostSpoke(index=0, text=INTRO, to="Tom Hale"))
    assert isinstance(await agent.decide(Speak(kind="introduction", prompt=INTRO)), Speech)
    await agent.observe(spoke(1, "Tom Hale", "At 21:10 I crossed the yard."))
    asked = spoke(2, "Nora Vance", "Where were you at ten?", kind="question", to="Tom Hale")
    await agent.observe(asked)
    answer = await agent.decide(Speak(kind="answer", prompt="Tom Hale, please answer Nora.",
                                      question=asked))
    assert isinstance(answer, Speech)
    questions = await agent.decide(AskQuestions(candidates=PLAYERS))
    assert isinstance(questions, Questions) and questions.target in PLAYERS
    vote = await agent.decide(CastVote(candidates=["Tom Hale", *PLAYERS]))
    assert isinstance(vote, Vote) and vote.target in ["Tom Hale", *PLAYERS]


OTHERS = {"choose_target": 1, "ask": 1, "vote": 1}
SR_PLAN = {"sr.decompose": 2, "sr.relevance": 4}  # 2 speeches x 2 sub-questions


@pytest.mark.parametrize(("option", "expected"), [
    ("none", {"answer": 2, **OTHERS}),
    ("mr", {"answer": 2, **OTHERS}),
    ("mr+sr", {"answer": 2, **SR_PLAN, "sr.contains": 2, "sr.rewrite": 2, **OTHERS}),
    ("mr+sr+sv1", {"answer": 2, **SR_PLAN, "sr.contains": 2, "sr.rewrite": 2,
                   "sv.decompose": 2, "sv.verify": 2, **OTHERS}),
    ("mr+sr+sv3", {"answer": 6, **SR_PLAN, "sr.contains": 6, "sr.rewrite": 6,
                   "sv.decompose": 6, "sv.verify": 6, **OTHERS}),
])
async def test_calls_per_module(option: str, expected: dict[str, int]) -> None:
    model = stubborn_model()
    await play_a_little(model, option)
    assert dict(purposes(model)) == expected


@pytest.mark.parametrize(("option", "remembers"), [("none", False), ("mr", True)])
async def test_only_mr_puts_memories_in_prompts(option: str, remembers: bool) -> None:
    model = stubborn_model()
    await play_a_little(model, option)
    prompts = [r.messages[-1].text for r in model.requests
               if r.purpose in ("answer", "ask", "vote")]
    assert any("At 21:10 I crossed the yard." in p.split("right now")[-1] for p in prompts) \
        == remembers


async def test_one_candidate_needs_no_choice() -> None:
    model = stubborn_model()
    agent = await seat("Tom Hale", model, "mr")
    questions = await agent.decide(AskQuestions(candidates=["Nora Vance"], count=2))
    assert isinstance(questions, Questions) and len(questions.questions) == 2
    assert dict(purposes(model)) == {"ask": 1}
