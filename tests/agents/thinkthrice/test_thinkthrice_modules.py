"""What each module does, forced with the scripted fake's per-purpose replies."""

from __future__ import annotations

import pytest
from conftest import TEA, always, items, judge, purposes, seat, spoke, user_prompt

from jubensha.agents.thinkthrice import ThinkThriceConfig
from jubensha.agents.thinkthrice.config import Threshold
from jubensha.agents.thinkthrice.verification import AttemptReport, Claim
from jubensha.engine.decisions import Speak
from jubensha.engine.events import HostSpoke
from jubensha.llm.base import ModelError, Request
from jubensha.llm.fake import HashingEmbedder, ScriptedModel
from jubensha.scripts import find_script

INTRO = "Tom Hale, please introduce yourself and say what you did on the day of the crime."


def question(text: str, asker: str = "Agnes Pike", to: str = "Tom Hale",
             index: int = 50) -> Speak:
    return Speak(kind="answer", prompt=f"{to}, please answer {asker}.",
                 question=spoke(index, asker, text, kind="question", to=to))


# -- Memory Retrieval ------------------------------------------------------------------------
BOATHOUSE = "At ten past nine I saw a lantern moving from the boathouse to the sea cave."


async def remembering(model: ScriptedModel, option: str) -> None:
    agent = await seat("Nora Vance", model, option, embedder=None)
    for event in [HostSpoke(index=1, text="Welcome to Gull Rock."),
                  spoke(2, "Samuel Reed", "I played cribbage in the parlour all evening."),
                  spoke(3, "Tom Hale", BOATHOUSE),
                  spoke(4, "Agnes Pike", "I was baking bread in the kitchen.")]:
        await agent.observe(event)
    await agent.decide(question("Who was near the boathouse and the sea cave that night?",
                                to="Nora Vance"))


@pytest.mark.parametrize("retrieval", ["lexical", "dense", "hybrid"])
async def test_mr_puts_the_relevant_remembered_statement_in_the_answer_prompt(
        retrieval: str) -> None:
    model = ScriptedModel()
    await remembering(model, f"mr+k=1+retrieval={retrieval}")
    prompt = user_prompt(model, "answer")
    assert f'Tom Hale says to everyone: "{BOATHOUSE}"' in prompt
    assert "cribbage" not in prompt and "baking" not in prompt


class CountingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    async def embed(self, texts: list[str]) -> list[list[float]]:
        self.texts.extend(texts)
        return await super().embed(texts)


async def test_each_seat_keeps_its_own_vectors_even_with_one_embedder() -> None:
    """A cache shared by the seats of an embedder would hold every seat's private lines
    where any seat could read them (docs/isolation.md): each seat embeds what it recalls
    itself, a public line once per seat."""
    embedder = CountingEmbedder()
    agents = [await seat(name, ScriptedModel(), "mr+retrieval=dense", embedder=embedder)
              for name in ("Nora Vance", "Tom Hale")]
    line = f'Samuel Reed says to everyone: "{BOATHOUSE}"'
    for agent in agents:
        await agent.observe(spoke(3, "Samuel Reed", BOATHOUSE))
        assert await agent.recall("the boathouse") == [line]
    assert sorted(embedder.texts) == sorted([line, "the boathouse"] * 2)  # once per seat


async def test_without_mr_the_agent_is_memoryless() -> None:
    model = ScriptedModel()
    await remembering(model, "none")
    prompt = user_prompt(model, "answer")
    assert "Who was near the boathouse" in prompt
    assert BOATHOUSE not in prompt and "remembers" not in prompt


async def test_the_question_being_answered_is_not_recalled_as_a_memory() -> None:
    model = ScriptedModel()
    agent = await seat("Tom Hale", model, "mr")
    asked = question("Why were you in the boathouse?", index=9)
    await agent.observe(asked.question)
    await agent.decide(asked)
    assert user_prompt(model, "answer").count("Why were you in the boathouse?") == 1


# -- Self-Refinement -------------------------------------------------------------------------
def rewrite_with_missing(request: Request) -> dict[str, str]:
    """A faithful reviser: the earlier answer plus every missing fact it was given."""
    prompt = request.messages[-1].text
    earlier = prompt.split("Your earlier answer:\n")[1].split("\n\n")[0]
    listed = prompt.split("leaves out these important facts:\n")[1].split("\n\n")[0]
    missing = [line.removeprefix("- ") for line in listed.splitlines()]
    return {"answer": " ".join([earlier, *missing])}


async def test_sr_inserts_the_missing_timeline_fact() -> None:
    model = ScriptedModel(replies={
        "answer": ["#Answer#: I am Tom Hale. At 22:10 I played cribbage with Dr. Reed."],
        "sr.decompose": [{"questions": ["What did you do between nine and ten?"]}],
        "sr.relevance": judge(lambda fact: fact.startswith(("21:10", "22:10"))),
        "sr.contains": judge(lambda fact: fact.startswith("22:10")),
        "sr.rewrite": rewrite_with_missing,
    })
    agent = await seat("Tom Hale", model, "mr+sr")
    speech = await agent.decide(question("What did you do between nine and ten?"))
    rewrite = user_prompt(model, "sr.rewrite")
    assert "21:10, Crosses the yard with a lantern" in rewrite
    assert "22:10, Plays cribbage" not in rewrite.split("leaves out")[1]
    assert speech.text.startswith("I am Tom Hale. At 22:10 I played cribbage")
    assert "21:10, Crosses the yard with a lantern and drags the six crates" in speech.text
    assert purposes(model)["sr.relevance"] == 1 and "sr.timeline" not in purposes(model)


async def test_sr_leaves_a_complete_answer_alone() -> None:
    model = ScriptedModel(replies={"answer": ["#Answer#: At 22:10 I played cribbage."],
                                   "sr.relevance": always(True), "sr.contains": always(True)})
    agent = await seat("Tom Hale", model, "mr+sr")
    speech = await agent.decide(question("Where were you at ten past ten?"))
    assert speech.text == "At 22:10 I played cribbage."
    assert "sr.rewrite" not in purposes(model)


async def test_murderer_sr_never_volunteers_a_secret() -> None:
    model = ScriptedModel(replies={"sr.relevance": always(True), "sr.contains": always(False)})
    agent = await seat("Agnes Pike", model, "mr+sr")
    await agent.decide(Speak(kind="introduction", prompt=INTRO.replace("Tom Hale", "Agnes")))
    offered = [fact for request in model.requests if request.purpose == "sr.relevance"
               for fact in items(request)]
    rewrite = user_prompt(model, "sr.rewrite")
    missing = rewrite.split("leaves out these important facts:")[1].split("Using the")[0]
    for forbidden in ("22:27", "22:30", "22:36", "rolling pin", "logbook"):
        assert forbidden not in missing
        assert all(forbidden not in fact for fact in offered)
    assert "22:15, The rain begins" in missing
    assert "You killed Elias with the kitchen rolling pin" in rewrite.split("Using the")[1]


async def test_a_civilian_volunteers_its_facts_unless_everyone_conceals() -> None:
    model = ScriptedModel(replies={"sr.relevance": always(True), "sr.contains": always(False)})
    civilian = await seat("Tom Hale", model, "mr+sr")
    await civilian.decide(Speak(kind="introduction", prompt=INTRO))
    assert "21:20, Elias calls him into the study" in user_prompt(model, "sr.rewrite")
    model = ScriptedModel(replies={"sr.relevance": always(True), "sr.contains": always(False)})
    guarded = await seat("Tom Hale", model, "mr+sr+conceal=everyone")
    await guarded.decide(Speak(kind="introduction", prompt=INTRO))
    assert "21:20" not in user_prompt(model, "sr.rewrite").split("Using the")[0]


async def test_without_a_timeline_the_facts_are_extracted_once() -> None:
    character = find_script(TEA).character("许松").model_copy(update={"timeline": []})
    model = ScriptedModel(replies={
        "sr.timeline": [{"facts": ["21:00，你去了焙房。", "23:00，你回到卧房。"]}],
        "sr.relevance": always(True), "sr.contains": always(False)})
    agent = await seat("许松", model, "mr+sr+sv1", script_id=TEA, character=character)
    await agent.decide(Speak(kind="introduction", prompt="许松，请介绍一下你自己。"))
    await agent.decide(Speak(kind="statement", prompt="许松，请说说你的看法。"))
    assert purposes(model)["sr.timeline"] == 1
    assert "21:00，你去了焙房。" in user_prompt(model, "sr.rewrite")
    assert "21:00，你去了焙房。" in user_prompt(model, "sv.verify")
    assert "#回答#" in user_prompt(model, "answer")


# -- Self-Verification -----------------------------------------------------------------------
def words(count: int, start: str = "At 21:10 I") -> str:
    return " ".join([start, *["word"] * (count - len(start.split()))])


async def test_sv_retries_until_n_and_returns_the_best_attempt() -> None:
    answers = [words(5), words(25), words(12)]
    model = ScriptedModel(replies={
        "answer": [f"#Answer#: {a}" for a in answers],
        "sv.decompose": [{"claims": ["At 21:10 Tom crossed the yard."]},
                         {"claims": ["At 21:10 Tom crossed the yard.", "At 22:10 Tom played.",
                                     "Tom drank rum."]},
                         {"claims": []}],
        "sv.verify": [{"item_0": True}, {"item_0": True, "item_1": True, "item_2": False}],
    })
    agent = await seat("Tom Hale", model, ThinkThriceConfig(refine=False, verify_attempts=3))
    speech = await agent.decide(question("What did you do at nine?"))
    assert purposes(model)["answer"] == 3
    assert speech.text == answers[1]  # 2/3 correct, both timed, 25 words: the best score
    samples = [r.sample for r in model.requests if r.purpose == "answer"]
    assert samples == [0, 1, 2]


async def test_sv_stops_at_the_first_answer_that_passes() -> None:
    model = ScriptedModel(replies={
        "answer": [f"#Answer#: {words(40)}", "#Answer#: never asked"],
        "sv.decompose": [{"claims": ["At 21:10 Tom crossed the yard."]}],
        "sv.verify": [{"item_0": True}],
    })
    agent = await seat("Tom Hale", model, ThinkThriceConfig(refine=False, verify_attempts=3))
    speech = await agent.decide(question("What did you do at nine?"))
    assert speech.text == words(40)
    assert purposes(model)["answer"] == 1 and purposes(model)["sv.verify"] == 1


async def test_an_empty_answer_spends_an_attempt_and_all_failing_is_an_error() -> None:
    model = ScriptedModel(replies={
        "answer": ["#Answer#:", f"#Answer#: {words(40)}"],
        "sv.decompose": [{"claims": ["At 21:10 Tom crossed the yard."]}],
        "sv.verify": [{"item_0": True}],
    })
    agent = await seat("Tom Hale", model, ThinkThriceConfig(refine=False, verify_attempts=3))
    speech = await agent.decide(question("What did you do at nine?"))
    assert speech.text == words(40) and purposes(model)["answer"] == 2
    model = ScriptedModel(replies={"answer": ["#Answer#:"] * 3})
    agent = await seat("Tom Hale", model, ThinkThriceConfig(refine=False, verify_attempts=3))
    with pytest.raises(ModelError, match="empty answer"):
        await agent.decide(question("What did you do at nine?"))
    assert purposes(model) == {"answer": 3}


async def test_host_questions_use_the_host_threshold() -> None:
    # 40 words and one correct fact pass a player's question, not the host's (350, 4).
    model = ScriptedModel(replies={
        "answer": [f"#Answer#: {words(40)}"] * 3,
        "sv.decompose": [{"claims": ["At 21:10 Tom crossed the yard."]}] * 3,
        "sv.verify": [{"item_0": True}] * 3,
    })
    agent = await seat("Tom Hale", model, ThinkThriceConfig(refine=False, verify_attempts=3))
    await agent.decide(Speak(kind="introduction", prompt=INTRO))
    assert purposes(model)["answer"] == 3


def test_the_score_is_appendix_gs_sum() -> None:
    claims = [Claim(text="At 21:10 Tom left.", correct=True, timed=True),
              Claim(text="Tom drank.", correct=True, timed=False),
              Claim(text="At 22:00 Tom slept.", correct=False, timed=True)]
    report = AttemptReport(answer="...", claims=claims, length=300,
                           threshold=Threshold(accuracy=0.6, facts=1, length=30))
    assert (report.correct, report.time_matched) == (2, 1)
    assert report.score == pytest.approx(2 / 3 + 2 + 1 + 300 / 200)
    assert report.passed
    assert not report.model_copy(update={"length": 29}).passed


async def test_murderer_sv_checks_consistency_and_counts_leaks_as_incorrect() -> None:
    model = ScriptedModel(replies={
        "sv.decompose": [{"claims": ["At 22:30 Agnes Pike struck Elias on the top landing.",
                                     "At 22:15 Agnes Pike put the kettle on."]}],
        "sv.verify": always(True),
    })
    agent = await seat("Agnes Pike", model, "mr+sr+sv1")
    await agent.observe(spoke(3, "Agnes Pike", "I was in the kitchen all evening, baking."))
    ask = question("Where were you at half past ten?", asker="Tom Hale", to="Agnes Pike")
    checker = await agent.checker(agent.turn(ask))
    report = await checker.check(agent.caller, "At 22:15 I put the kettle on, I never left.")
    assert [c.leak for c in report.claims] == [True, False]
    assert report.correct == 1
    prompt = user_prompt(model, "sv.verify")
    assert "contradicts none of the facts above" in prompt
    assert "I was in the kitchen all evening, baking." in prompt
    assert "22:27" not in prompt.split("item_0")[0]


async def test_relevance_judgements_open_with_the_facts_they_share() -> None:
    """One ``sr.relevance`` call per sub-question: the facts come first and the
    sub-question last, so each call reuses the one before as a cached prefix."""
    model = ScriptedModel(replies={
        "answer": ["#Answer#: I was at the lamp."],
        "sr.decompose": [{"questions": ["Where were you at nine?", "Who did you see?"]}],
    })
    agent = await seat("Tom Hale", model, "mr+sr")
    await agent.decide(question("Where were you at nine, and who did you see?"))
    first, second = (r.messages[-1].text for r in model.requests
                     if r.purpose == "sr.relevance")
    shared = first.split("Where were you at nine?")[0]
    assert "item_0:" in shared and second.startswith(shared)
    assert second.index("Who did you see?") > second.index("item_0:")
