"""The speech guard: what a seat says is checked against its own sheet before it is said;
a leaking or degenerate draft is rewritten once with the reason, else replaced by a safe
line, and each is counted in the call log."""

from __future__ import annotations

import asyncio
import json
from functools import partial
from pathlib import Path

import pytest

from jubensha.agents.disclosure import SeatText, screen_speech
from jubensha.agents.guard import GuardedAgent
from jubensha.agents.person import first_person
from jubensha.agents.registry import AgentSpecError, architectures, make_agent
from jubensha.engine.agent import CharacterSheet, SeatContext
from jubensha.engine.decisions import AskQuestions, CastVote, Questions, Speak, Speech, Vote
from jubensha.engine.events import ActStarted, Spoke
from jubensha.engine.procedure import find_procedure
from jubensha.llm.calls import NOT_A_CALL, CallLog, CallRecord, MemorySink, write_note
from jubensha.llm.fake import ScriptedModel
from jubensha.prompts import render
from jubensha.runs.play import PlayConfig, plan_seats, play_game
from jubensha.scripts import ActSheet, load_script

TINY = Path(__file__).parents[1] / "engine" / "tiny_script.yaml"
LEAK = ("Ann struck Lord Vale with the brass candlestick after he dismissed her. She washed "
        "her gloves in the scullery sink.")
CLEAN = "I am Ann, the housekeeper. I was in the kitchen all evening."
STORY = ("Bob spent the evening repotting orchids in the glasshouse, as he does every night "
         "when the frost comes, because he owes Lord Vale forty pounds and cannot pay it back "
         "before the quarter day, and the bailiff has written twice.")
"""One sentence of 38 words: a recital that no trim can save."""
INTRO = Speak(kind="introduction", prompt="Introduce yourself.")


async def guarded(name: str, model: ScriptedModel, spec: str = "naive:guard"
                  ) -> tuple[GuardedAgent, MemorySink]:
    sink = MemorySink()
    agent = make_agent(spec)
    assert isinstance(agent, GuardedAgent)
    sheet = CharacterSheet.for_seat(load_script(TINY), name)
    logged = CallLog(sink).seat(model, name)
    await agent.start(SeatContext(sheet=sheet, model=logged, seed=1,
                                  notes=partial(write_note, logged, seat=name)))
    return agent, sink


def purposes(sink: MemorySink) -> list[str]:
    return [record.purpose for record in sink.records]


async def test_a_clean_speech_passes_at_no_cost() -> None:
    agent, sink = await guarded("Ann", ScriptedModel(replies={"introduction": [CLEAN]}))
    assert await agent.decide(INTRO) == Speech(text=CLEAN)
    assert purposes(sink) == ["introduction"]


async def test_a_leaking_draft_is_rewritten_once_with_the_reason() -> None:
    model = ScriptedModel(replies={"introduction": [LEAK], "guard": [CLEAN]})
    agent, sink = await guarded("Ann", model)
    assert await agent.decide(INTRO) == Speech(text=CLEAN)
    assert purposes(sink) == ["introduction", "guard"]
    rewrite = model.requests[-1]
    assert rewrite.seat == "Ann"
    assert rewrite.messages[:-2] == model.requests[0].messages  # the draft's own prompt
    assert rewrite.messages[-2].content == LEAK
    assert "tells everyone that you are the killer" in rewrite.messages[-1].text


async def test_a_recital_of_the_sheet_is_rewritten_and_a_murderers_secret_too() -> None:
    script = load_script(TINY)
    bob = script.character("Bob").model_copy(update={"story": STORY})
    script = script.model_copy(update={"characters": [
        bob if c.name == "Bob" else c for c in script.characters]})
    model = ScriptedModel(replies={"introduction": [STORY], "guard": [CLEAN]})
    agent = make_agent("naive:guard")
    await agent.start(SeatContext(sheet=CharacterSheet.for_seat(script, "Bob"), model=model))
    await agent.decide(INTRO)
    assert "reads your private script out word for word" in model.requests[-1].messages[-1].text
    secret = "Ann hid the bloody gloves under the coal scuttle."
    model = ScriptedModel(replies={"introduction": [secret], "guard": [CLEAN]})
    ann, _ = await guarded("Ann", model)
    assert await ann.decide(INTRO) == Speech(text=CLEAN)
    assert "says a secret you must keep" in model.requests[-1].messages[-1].text


async def test_a_draft_that_opens_well_keeps_its_opening_at_no_cost() -> None:
    model = ScriptedModel(replies={"introduction": [f"{CLEAN} {LEAK}"]})
    agent, sink = await guarded("Ann", model)
    assert await agent.decide(INTRO) == Speech(text=CLEAN)
    assert purposes(sink) == ["introduction", "guard.trim"]
    trim = sink.records[-1]
    assert (trim.model, trim.raw, trim.usage.total_tokens) == (NOT_A_CALL, CLEAN, 0)
    assert trim.messages[0].text == f"{CLEAN} {LEAK}"


async def test_a_rewrite_that_opens_well_keeps_its_opening() -> None:
    model = ScriptedModel(replies={"introduction": [LEAK],
                                   "guard": [f"I was in the kitchen. {LEAK}"]})
    agent, sink = await guarded("Ann", model)
    assert await agent.decide(INTRO) == Speech(text="I was in the kitchen.")
    assert purposes(sink) == ["introduction", "guard", "guard.trim"]


async def test_a_rewrite_that_fails_too_becomes_a_safe_line_on_record() -> None:
    model = ScriptedModel(replies={"introduction": [LEAK], "guard": ["Bob asks"]})
    agent, sink = await guarded("Ann", model)
    action = await agent.decide(INTRO)
    assert isinstance(action, Speech)
    assert action.text.startswith("I am Ann. ") and "candlestick" not in action.text
    assert agent.passes(action.text)  # a fact of her own that she may say
    assert purposes(sink) == ["introduction", "guard", "guard.safe"]
    safe: CallRecord = sink.records[-1]
    assert (safe.model, safe.raw, safe.seat) == (NOT_A_CALL, action.text, "Ann")
    assert safe.messages[0].text == "Bob asks" and safe.usage.total_tokens == 0
    assert any("transcript" in note for note in safe.notes)


async def test_an_answer_that_is_a_transcript_label_is_caught() -> None:
    question = Spoke(index=3, speaker="Bob", kind="question", to="Ann", text="Where were you?")
    model = ScriptedModel(replies={"answer": ["Bob asks"], "guard": ["In the kitchen."]})
    agent, _ = await guarded("Ann", model)
    await agent.observe(question)
    action = await agent.decide(Speak(kind="answer", question=question))
    assert action == Speech(text="In the kitchen.")
    assert "it is a line of the transcript" in model.requests[-1].messages[-1].text


async def test_a_copy_of_what_another_seat_said_is_caught() -> None:
    said = "I spent the evening repotting orchids in the glasshouse and saw nobody at all."
    model = ScriptedModel(replies={"statement": [said], "guard": [CLEAN]})
    agent, _ = await guarded("Ann", model)
    await agent.observe(Spoke(index=1, speaker="Bob", kind="statement", text=said))
    assert await agent.decide(Speak(kind="statement", prompt="Speak.")) == Speech(text=CLEAN)
    assert "copies what someone else said" in model.requests[-1].messages[-1].text


async def test_an_answer_may_repeat_the_words_of_its_question() -> None:
    question = Spoke(index=3, speaker="Bob", kind="question", to="Ann",
                     text="Did you go into the library through the servants' door?")
    answer = "No, I did not go into the library through the servants' door."
    agent, sink = await guarded("Ann", ScriptedModel(replies={"answer": [answer]}))
    await agent.observe(question)
    assert await agent.decide(Speak(kind="answer", question=question)) == Speech(text=answer)
    assert purposes(sink) == ["answer"]


async def test_questions_are_guarded_and_votes_are_not() -> None:
    model = ScriptedModel(replies={
        "ask": [{"target": "Bob", "questions": [f"{LEAK}?"]}],
        "guard": ['Where were you at midnight, Bob?"]}'],
        "vote": [{"target": "Bob", "reason": LEAK}]})
    agent, sink = await guarded("Ann", model)
    asked = await agent.decide(AskQuestions(candidates=["Bob", "Cara"]))
    assert asked == Questions(target="Bob", questions=["Where were you at midnight, Bob?"])
    assert "one short question" in model.requests[1].messages[-1].text
    vote = await agent.decide(CastVote(candidates=["Bob", "Cara", "Dan"]))
    assert vote == Vote(target="Bob", reason=LEAK)  # not said aloud at the table
    assert purposes(sink) == ["ask", "guard", "vote"]


async def test_a_chinese_seat_is_told_why_in_chinese() -> None:
    script = load_script(TINY).model_copy(update={"language": "zh"})
    model = ScriptedModel(replies={"introduction": [LEAK], "guard": ["Bob asks"]})
    agent = make_agent("naive:guard")
    await agent.start(SeatContext(sheet=CharacterSheet.for_seat(script, "Ann"), model=model))
    action = await agent.decide(INTRO)
    assert isinstance(action, Speech) and action.text.startswith("我是Ann。")
    assert "它向大家说出了你就是凶手" in model.requests[1].messages[-1].text


def test_the_guard_fits_every_architecture_but_a_persons_seat() -> None:
    for name in architectures():
        if name == "human":
            with pytest.raises(AgentSpecError, match="a person's seat"):
                make_agent("human:guard")
            continue
        agent = make_agent(f"{name}:guard")
        assert isinstance(agent, GuardedAgent) and agent.architecture == name
    assert isinstance(make_agent("thinkthrice:mr+sr+guard"), GuardedAgent)
    assert not isinstance(make_agent("naive"), GuardedAgent)


@pytest.mark.parametrize("architecture", ["naive", "thinkthrice", "player", "werewolf",
                                          "mirage", "whodunit", "extractive", "ocot"])
def test_guarded_games_of_every_architecture_end_and_meta_says_so(
        tmp_path: Path, architecture: str) -> None:
    script = load_script(TINY)
    plans = plan_seats(script, f"{architecture}:guard", "scripted",
                       ["Bob=naive@scripted"])
    result = asyncio.run(play_game(PlayConfig(script=script, procedure=find_procedure("demo"),
                                              plans=plans, embedder="scripted"), tmp_path / "run"))
    assert not result.degraded
    meta = json.loads((tmp_path / "run" / "meta.json").read_text(encoding="utf-8"))
    assert meta["seats"]["Ann"]["guard"] is True and meta["seats"]["Bob"]["guard"] is False
    calls = [json.loads(line) for line in (tmp_path / "run" / "calls.jsonl").open()]
    guard = [c for c in calls if c["purpose"].startswith("guard")]
    assert all(c["seat"] != "Bob" for c in guard)
    noted = sum(c["model"] == NOT_A_CALL for c in calls)  # trims and safe lines: no calls
    assert (result.usage.calls, result.usage.noted) == (len(calls) - noted, noted)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_murderers_rewrite_prompt_read_aloud_confesses_nothing(lang: str) -> None:
    asked = render("guard", "rewrite", lang, me="Ann", kind="introduction", murderer=True,
                   problems=["…"]).splitlines()[-1]
    ann = SeatText.of(load_script(TINY).character("Ann"), [], 6, murderer=True,
                      victims=["Lord Vale"])
    assert screen_speech(first_person(asked, lang), ann).confession is None


async def test_a_later_acts_own_sheet_is_private_to_the_guard_as_it_arrives() -> None:
    model = ScriptedModel(replies={"statement": [STORY], "guard": [CLEAN]})
    agent, _ = await guarded("Ann", model)
    await agent.observe(ActStarted(act=2, sheet=ActSheet(act=2, text=STORY), audience=["Ann"]))
    assert await agent.decide(Speak(kind="statement", prompt="Speak.")) == Speech(text=CLEAN)
    assert "reads your private script out" in model.requests[-1].messages[-1].text


async def test_safe_lines_vary_so_two_seats_do_not_copy_each_other() -> None:
    lines = []
    for name in ("Ann", "Bob", "Cara", "Dan"):
        agent, _ = await guarded(name, ScriptedModel())
        lines.append((agent.safe_line("ask"), agent.safe_line("ask")))
    assert all(first != second for first, second in lines)  # a seat moves on
    assert len({first for first, _ in lines}) > 1  # seats start apart
    assert all(line.endswith("?") for pair in lines for line in pair)


def tingsong_guard(name: str) -> GuardedAgent:
    from jubensha.scripts.bundled import find_script

    agent = make_agent("naive:guard")
    assert isinstance(agent, GuardedAgent)
    sheet = CharacterSheet.for_seat(find_script("tingsong-tea-estate"), name)
    asyncio.run(agent.start(SeatContext(sheet=sheet, model=ScriptedModel())))
    return agent


def test_a_line_labelled_with_the_speakers_other_name_is_caught() -> None:
    """周妈's real name is 周桂芳: a speech that opens "周桂芳：" is a transcript line."""
    agent = tingsong_guard("周妈")
    check = agent.check("周桂芳：不好意思，我确实偷看了老爷的信。", False)
    assert "label" in check.degenerate
    assert not agent.passes("周桂芳：不好意思，我确实偷看了老爷的信。")


def test_an_introduction_made_of_two_other_seats_lines_is_a_copy() -> None:
    agent = tingsong_guard("沈青禾")
    first = "我是许松，跟了师父十二年，是茶庄里焙茶最好的徒弟，师父待我像亲儿子一样。"
    second = "我是从上海来的茶商顾远之，为了买焙火秘谱进山，晚饭时被庄主当众回绝了。"
    for speaker, text in (("许松", first), ("顾远之", second)):
        asyncio.run(agent.observe(Spoke(index=1, speaker=speaker, kind="introduction",
                                        text=text)))
    copied = ("我跟了师父十二年，是茶庄里焙茶最好的徒弟，师父待我像亲儿子一样。"
              "为了买焙火秘谱进山，晚饭时被庄主当众回绝了。")
    check = agent.check(copied, False)
    assert "copy" in check.degenerate
    assert "许松" in check.evidence["copy"] and "顾远之" in check.evidence["copy"]
    assert not agent.check("我是沈青禾，三天前刚从上海回来。", False).degenerate


def test_a_seat_that_says_it_is_another_is_caught() -> None:
    """Asked a confusing question, Agnes Pike once answered "I am Nora Vance."."""
    from jubensha.scripts.bundled import find_script

    agent = make_agent("naive:guard")
    assert isinstance(agent, GuardedAgent)
    sheet = CharacterSheet.for_seat(find_script("lighthouse-keeper"), "Agnes Pike")
    asyncio.run(agent.start(SeatContext(sheet=sheet, model=ScriptedModel())))
    check = agent.check("I am Nora Vance.", False)
    assert "impersonation" in check.degenerate and not agent.passes("I am Nora Vance.")
    assert not agent.check("I am Agnes Pike, the cook. Nora is Elias's niece.", False).degenerate
    zh = tingsong_guard("周妈")
    assert "impersonation" in zh.check("我是沈青禾。", False).degenerate
    assert not zh.check("我是周桂芳，大家叫我周妈。", False).degenerate


def test_an_assistant_refusal_is_no_answer() -> None:
    """The 1.5B model, asked about the Teeth, said "I'm sorry, but I can't assist with that."
    as Agnes Pike: a guarded seat rewrites it; an in-character "I cannot say" stands."""
    from jubensha.scripts.bundled import find_script

    agent = make_agent("naive:guard")
    assert isinstance(agent, GuardedAgent)
    sheet = CharacterSheet.for_seat(find_script("lighthouse-keeper"), "Agnes Pike")
    asyncio.run(agent.start(SeatContext(sheet=sheet, model=ScriptedModel())))
    for line in ("I'm sorry, but I can't assist with that.",
                 "I apologize, but I cannot assist with that.",
                 "As an AI, I cannot speculate about the case."):
        check = agent.check(line, False)
        assert "refusal" in check.degenerate and not agent.passes(line), line
    assert not agent.check("I'm sorry, but I cannot say where Tom was at ten.", False).degenerate
    assert not agent.check("I helped Elias with the lamp that night.", False).degenerate
    zh = tingsong_guard("周妈")
    assert "refusal" in zh.check("抱歉，作为一个AI，我无法协助回答这个问题。", False).degenerate
    assert not zh.check("我不能说老爷的事，那是他的私事。", False).degenerate


@pytest.mark.parametrize("line", [
    ("I had accumulated enough financial resources and connections to recover this bloody "
     "hatred."),
    "我和死者有血海深仇，案发当天我做了偷窃宝石的准备。",
])
def test_a_murderer_telling_its_motive_or_preparations_in_any_words_is_caught(
        line: str) -> None:
    """Lines a murderer said in its own introduction in games on the 1.5B model."""
    from jubensha.agents.disclosure import SeatText, screen_speech

    sheet = CharacterSheet.for_seat(load_script(TINY), "Ann")
    seat = SeatText.of(sheet.me, [], 4, murderer=True, victims=["Lord Vale"])
    assert screen_speech(line, seat).confession
    innocent = SeatText.of(sheet.me, [], 4, murderer=False, victims=["Lord Vale"])
    assert not screen_speech(line, innocent).confession
    for said in ("I never hated him.", "Everyone hated Lord Vale.", "我准备了一壶茶。",
                 "我从来没有恨过他。"):
        assert not screen_speech(said, seat).confession, said


# -- one sentence at a time -------------------------------------------------------------------
async def test_the_answer_is_kept_and_the_question_given_back_is_removed() -> None:
    """The 1.5B model gave back the question it was asked before its answer; the guard
    kept the question and cut the answer. Now the answer stays, at no call."""
    question = Spoke(index=3, speaker="Bob", kind="question", to="Ann",
                     text="What did you see in the library at midnight?")
    reply = ("What did you see in the library at midnight? "
             "I saw nothing there, I was asleep by then.")
    agent, sink = await guarded("Cara", ScriptedModel(replies={"answer": [reply]}))
    await agent.observe(question)
    action = await agent.decide(Speak(kind="answer", question=question))
    assert action == Speech(text="I saw nothing there, I was asleep by then.")
    assert purposes(sink) == ["answer", "guard.trim"]
    agent, _ = await guarded("Cara", ScriptedModel())
    await agent.observe(question)
    agent.answering = question.text
    assert not agent.passes("What did you see in the library at midnight?")
    assert agent.passes("No, I did not see anything in the library at midnight.")


def test_a_chinese_answer_outlives_the_question_it_repeats() -> None:
    agent = tingsong_guard("顾远之")
    asked = "顾远之，你有没有找到那只玳瑁发簪？"
    asyncio.run(agent.observe(Spoke(index=2, speaker="许松", kind="question", to="顾远之",
                                    text=asked)))
    agent.answering = asked
    verdicts = agent.judge(f"{asked}我没有找到，我一整晚都在客房里。")
    assert [v.passes for v in verdicts] == [False, True]
    assert ("question echo", asked) in verdicts[0].faults


def test_a_reasoned_accusation_is_no_echo_of_the_instructions() -> None:
    """The detective's prompt holds the reason it is to give: saying it is no echo; the
    templates' own words are."""
    agent = tingsong_guard("周妈")
    assert agent.passes("我怀疑钱守仁，因为他的铜纽扣藏在窗帘后面。")
    assert not agent.passes("用第一人称回答顾远之，最多两句话。")
    assert agent.passes("老东家对我的信任让我对生活的意义有了更深的理解。")  # a few short words
    assert agent.passes("许松的包袱放在门边，字条上写着：“天一亮路通，我们就走。”。")
    english, _ = asyncio.run(guarded("Cara", ScriptedModel()))
    assert not english.passes("Speak as Cara in at most 3 sentences.")
    assert english.passes("I suspect Ann, because her gloves were wet with soap.")


@pytest.mark.parametrize("line", [
    "I'm sorry, but I don't have enough information to properly address your note.",
    "Could you please provide more context or clarify your question?",
    "Sure! Here's a possible response as Cara.",
    "How can I assist you today?",
    "I'm sorry, but I cannot physically enter a cellar or witness events.",
    "However, I can provide you with an analysis of the case based on the information given.",
])
async def test_an_assistant_reply_is_no_speech(line: str) -> None:
    agent, _ = await guarded("Cara", ScriptedModel())
    assert not agent.passes(line), line


@pytest.mark.parametrize("line", ["好的，我来回答顾远之的问题。", "准备好了，沈墨山。",
                                  "请提供更多信息，我才能回答。", "根据你提供的信息，我认为是他。"])
def test_an_assistant_reply_or_a_line_to_the_dead_is_no_speech_in_chinese(line: str) -> None:
    agent = tingsong_guard("周妈")
    assert not agent.passes(line), line
    assert agent.passes("好，我来说说那天晚上的事。我一直在厨房里。")
    assert agent.passes("I can give you my account of the evening.")
    assert agent.passes("沈墨山死的那天晚上，我在厨房熬汤。")
    assert agent.passes("许松，你准备好了吗？")  # a question to a seat, not an assistant


async def test_a_recital_loses_the_sentences_read_from_the_sheet_and_keeps_the_rest() -> None:
    """A trim kept the very sentence it flagged as read from the sheet: now the sentences
    that are the sheet's own words go, and what the seat says of its own stays."""
    script = load_script(TINY)
    bob = script.character("Bob").model_copy(update={"story": STORY})
    script = script.model_copy(update={"characters": [
        bob if c.name == "Bob" else c for c in script.characters]})
    agent = make_agent("naive:guard")
    assert isinstance(agent, GuardedAgent)
    await agent.start(SeatContext(sheet=CharacterSheet.for_seat(script, "Bob"),
                                  model=ScriptedModel()))
    said = f"I am Bob, the gardener. {STORY} Ask me anything."
    verdicts = agent.judge(said)
    assert [v.passes for v in verdicts] == [True, False, True]
    assert verdicts[1].faults[0][0] == "recites"
    assert agent.passes(f"I am Bob. {STORY.split(',')[0]}.")  # one fact: no recital


async def test_a_listed_secret_is_removed_for_any_seat() -> None:
    agent, sink = await guarded("Bob", ScriptedModel(replies={"statement": [
        "I was in the glasshouse all evening. I pawned the silver snuffbox last spring."]}))
    action = await agent.decide(Speak(kind="statement", prompt="Speak."))
    assert action == Speech(text="I was in the glasshouse all evening.")
    assert "a secret you must keep" in sink.records[-1].notes[0]


async def test_one_bad_sentence_costs_no_call_and_the_rest_is_said() -> None:
    reply = "I'm sorry, but I can't assist with that. I was in the kitchen all evening."
    agent, sink = await guarded("Cara", ScriptedModel(replies={"statement": [reply]}))
    action = await agent.decide(Speak(kind="statement", prompt="Speak."))
    assert action == Speech(text="I was in the kitchen all evening.")
    assert purposes(sink) == ["statement", "guard.trim"]


async def test_the_fallback_tells_the_seats_own_facts_and_never_the_same_line_twice() -> None:
    agent, _ = await guarded("Dan", ScriptedModel())
    lines = [agent.safe_line(kind) for kind in ("answer", "statement", "answer", "ask",
                                                "statement", "answer", "introduction")]
    assert len(set(lines)) == len(lines), lines
    sheet = load_script(TINY).character("Dan")
    assert any("silver" in line or "wine cellar" in line for line in lines[:3])
    assert all("brandy" not in line for line in lines)  # his listed secret
    assert all(agent.passes(line) for line in lines)
    assert sheet.name in lines[-1]
    facts = agent.fallback.facts
    told = [next(f for f in facts if f in line) for line in lines[:len(facts)]]
    assert len(set(told)) == len(told)  # a fact comes again only once all were told


async def test_a_murderers_fallback_keeps_the_kill() -> None:
    agent, _ = await guarded("Ann", ScriptedModel())
    lines = [agent.safe_line("answer") for _ in range(6)]
    assert len(set(lines)) == len(lines)
    for line in lines:
        assert not any(word in line for word in ("struck", "candlestick", "gloves")), line


async def test_the_guard_of_a_seat_that_uses_no_model_never_asks_one() -> None:
    """``ledger:phrase=false`` is model-free, guarded or not: a failing draft is trimmed or
    replaced, never rewritten by the seat's model; a seat that uses one may be."""
    model = ScriptedModel(replies={"guard": [CLEAN]})
    free, sink = await guarded("Ann", model, "ledger:phrase=false+guard")
    assert not free.uses_model
    assert await free.rewrite("introduction", LEAK, ["a leak"]) == ""
    assert model.requests == [] and "guard" not in purposes(sink)
    speaking, _ = await guarded("Ann", model, "naive:guard")
    assert await speaking.rewrite("introduction", LEAK, ["a leak"]) == CLEAN
