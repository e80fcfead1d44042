"""PLAYER* prompts open with what the calls about one suspect share, so a server's prefix
cache reuses it across the sensors and the question: the system message (the rules, the
seat's role and its script retrieved about the suspect) is the same, and the user message
opens with the dialogue retrieved about the suspect."""

from __future__ import annotations

from itertools import pairwise

from player_helpers import about, own_text, seated, sent, user_text

from jubensha.engine.decisions import AskQuestions
from jubensha.llm.fake import ScriptedModel


def head(text: str) -> str:
    """The retrieved dialogue: everything before the seat's role line."""
    return text.split(" has been murdered.")[0].rsplit("\n", 1)[0]


async def test_the_sensors_and_the_question_about_a_suspect_share_their_opening() -> None:
    model = ScriptedModel()
    bob = await seated("Bob", model)
    await bob.decide(AskQuestions(stage="questioning", round=1, count=1,
                                  candidates=["Ann", "Cara", "Dan"]))
    sensors = [r for r in model.requests if r.purpose.startswith("sensor.")]
    names = ["Ann", "Cara", "Dan"]
    for before, after in pairwise(sensors):
        if about(before, names) == about(after, names):
            shared = user_text(before).split("With all of this in mind:")[0]
            assert user_text(after).startswith(shared) and len(shared) > 20
            assert own_text(after) == own_text(before)
    [question] = sent(model, "question")
    target = about(question, names)
    opening = head(user_text(question))
    assert opening.startswith(f"What has been said about {target} so far:")
    assert any(user_text(s).startswith(opening) and own_text(s) == own_text(question)
               for s in sensors if about(s, names) == target)


async def test_the_combined_refinement_prompt_opens_with_the_retrieved_blocks() -> None:
    model = ScriptedModel()
    bob = await seated("Bob", model)
    for round_ in (1, 2):
        await bob.decide(AskQuestions(stage="questioning", round=round_, count=1,
                                      candidates=["Ann", "Cara", "Dan"]))
    combined = sent(model, "sensors")
    assert combined
    for request in combined:
        text = user_text(request)
        assert "What your script says about " in own_text(request)
        assert text.startswith("What has been said about ")
        assert text.index("has been murdered") > text.index("What has been said about ")
