"""What a PLAYER* seat says and decides besides questioning: introductions, answers with the
question-reply prompt, other speeches, votes, accusations and ratings; and what it
remembers (its own script in segments, question-and-answer pairs, later acts, clues)."""

from __future__ import annotations

from player_helpers import own_text, purposes, seated, sent, user_text

from jubensha.engine.decisions import Accuse, CastVote, RateStatement, Speak
from jubensha.engine.events import ActStarted, ClueRevealed, Spoke
from jubensha.llm.fake import ScriptedModel
from jubensha.memory.text import count_tokens
from jubensha.scripts import ActSheet

QUESTION = Spoke(index=9, speaker="Bob", kind="question", to="Ann",
                 text="Where was the brass candlestick at midnight?")


async def test_the_introduction_reads_the_script_and_the_goals() -> None:
    model = ScriptedModel()
    ann = await seated("Ann", model)
    speech = await ann.decide(Speak(kind="introduction", prompt="Please introduce yourself."))
    assert speech.text
    [request] = sent(model, "introduction")
    text = user_text(request)
    assert "Ann struck Lord Vale with the brass candlestick" in own_text(request)
    assert "candlestick" not in text  # the script is the system prompt's, not the user's
    assert "You are the murderer, so you may lie" in text
    assert "Please introduce yourself." in text
    bob_model = ScriptedModel()
    bob = await seated("Bob", bob_model)
    await bob.decide(Speak(kind="introduction"))
    [request] = sent(bob_model, "introduction")
    assert "You are not the murderer, so share details" in user_text(request)
    assert "candlestick" not in own_text(request) and "orchids" in own_text(request)


async def test_a_civilian_answers_in_the_first_person_with_all_it_knows() -> None:
    model = ScriptedModel()
    dan = await seated("Dan", model)
    question = QUESTION.model_copy(update={"to": "Dan"})
    await dan.decide(Speak(kind="answer", question=question))
    [request] = sent(model, "answer")
    text = user_text(request)
    assert text.startswith("Bob asks you: Where was the brass candlestick")
    assert "He noticed one candlestick missing from the set." in own_text(request)
    assert "tell as much as you can" in text and "in the first person as Dan" in text
    assert "keep hidden" not in text


async def test_the_murderer_answers_with_the_murderers_reply_prompt() -> None:
    model = ScriptedModel()
    ann = await seated("Ann", model)
    await ann.decide(Speak(kind="answer", question=QUESTION))
    text = user_text(sent(model, "answer")[0])
    assert "keep hidden that you killed Lord Vale. You may make things up." in text
    assert "Blame the gardener" not in text  # act 2 goals are not known yet
    await ann.observe(ActStarted(index=3, act=2, audience=["Ann"],
                                 sheet=ActSheet(act=2, text="The gardener found a glove.",
                                                goals=["Blame the gardener."])))
    await ann.decide(Speak(kind="answer", question=QUESTION))
    second = sent(model, "answer")[1]
    assert "Keep your goals in mind." in user_text(second)
    assert "Your goals: Blame the gardener." in own_text(second)


async def test_dialogue_is_remembered_one_question_and_answer_per_record() -> None:
    model = ScriptedModel()
    bob = await seated("Bob", model)
    await bob.observe(Spoke(index=1, speaker="Cara", kind="question", to="Dan",
                            text="Did you lock the wine cellar?"))
    await bob.observe(Spoke(index=2, speaker="Dan", kind="answer", to="Cara", reply_to=1,
                            text="Yes, at half past eleven."))
    await bob.observe(ClueRevealed(index=3, clue_id="c1", title="Candlestick",
                                   text="A brass candlestick with a dented base."))
    records = [r.text for r in bob.core.memory.store.records if r.source != "script"]
    assert records == [("Cara asks Dan: Did you lock the wine cellar?\n"
                        "Dan answers Cara: Yes, at half past eleven."),
                       'Clue "Candlestick": A brass candlestick with a dented base.']
    await bob.decide(Speak(kind="answer", question=QUESTION.model_copy(
        update={"to": "Bob", "text": "Who locked the wine cellar, and the candlestick?"})))
    [request] = sent(model, "answer")
    assert "Dan answers Cara: Yes, at half past eleven." in user_text(request)
    assert 'Clue "Candlestick"' in own_text(request) + user_text(request)


async def test_the_script_is_stored_in_segments_and_retrieved_within_budget() -> None:
    model = ScriptedModel()
    bob = await seated("Bob", model, spec="player:chunk_tokens=8+script_tokens=10")
    script = [r for r in bob.core.memory.store.records if r.source == "script"]
    assert len(script) > 3 and all(count_tokens(r.text) <= 8 for r in script)
    await bob.decide(Speak(kind="answer", question=QUESTION.model_copy(
        update={"to": "Bob", "text": "What about the orchids in the glasshouse?"})))
    text = user_text(sent(model, "answer")[0])
    retrieved = text.split("concerns the question:\n")[1].split("\n\n")[0].splitlines()
    assert 0 < sum(count_tokens(line) for line in retrieved) <= 10


async def test_other_speeches_are_tagged_with_their_kind() -> None:
    model = ScriptedModel()
    cara = await seated("Cara", model)
    await cara.decide(Speak(kind="reasoning", prompt="Who do you think did it?"))
    text = user_text(sent(model, "reasoning")[0])
    assert "your reasoning about the case: Who do you think did it?" in text


async def test_the_vote_weighs_the_suspects_and_the_murderer_deflects() -> None:
    model = ScriptedModel()
    bob = await seated("Bob", model)
    vote = await bob.decide(CastVote(candidates=["Ann", "Cara", "Dan"], victim="Lord Vale"))
    assert vote.target in ("Ann", "Cara", "Dan") and vote.reason
    request = sent(model, "vote")[0]
    assert request.json_schema["properties"]["target"]["enum"] == ["Ann", "Cara", "Dan"]
    assert "who killed Lord Vale?" in user_text(request)
    assert "Vote for someone else" not in user_text(request)
    ann_model = ScriptedModel()
    ann = await seated("Ann", ann_model)
    await ann.decide(CastVote(candidates=["Bob", "Cara", "Dan"], victim="Lord Vale"))
    assert "You killed Lord Vale. Vote for someone else" in user_text(sent(ann_model, "vote")[0])


async def test_accusations_and_ratings_have_their_own_prompts() -> None:
    model = ScriptedModel()
    dan = await seated("Dan", model)
    accusation = await dan.decide(Accuse(candidates=["Ann", "Bob", "Cara"]))
    assert accusation.target in ("Ann", "Bob", "Cara")
    statement = Spoke(index=4, speaker="Ann", kind="statement", text="I was asleep.")
    rating = await dan.decide(RateStatement(statement=statement))
    assert 0 <= rating.trust <= 2 and 0 <= rating.doubt <= 2
    assert "Ann said: I was asleep." in user_text(sent(model, "rate")[0])
    assert purposes(model) == {"accuse": 1, "rate": 1}
