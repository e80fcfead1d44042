"""Reference answerers for multiple-choice questions: what each kind of access lets into the
prompt (own script only, plus observed dialogue, or every character's script within a
per-character budget), the reply format, and failures that never raise."""

from __future__ import annotations

from pathlib import Path

import pytest

from jubensha.agents.answerers import (
    FSA_BUDGETS,
    AnswererConfig,
    answer_choice,
    build_context,
    fsa_budget,
    parse_letters,
)
from jubensha.engine.events import ActStarted, Spoke
from jubensha.eval.wellplay import grade
from jubensha.llm.fake import ScriptedModel
from jubensha.memory.text import count_tokens
from jubensha.scripts import Script, bundled_scripts, load_script
from jubensha.scripts.model import ChoiceQuestion

WHO = ChoiceQuestion(id="q1", question="Who went to the kitchen at 22:33 and moved the kettle?",
                     options={"a": "Tom Hale", "b": "Agnes Pike", "c": "Nora Vance"},
                     answer=["c"])
WHERE = ChoiceQuestion(id="q2", question="Who was in the parlour playing cribbage?",
                       options={"a": "Tom Hale", "b": "Samuel Reed", "c": "Agnes Pike"},
                       answer=["a", "b"], multiple=True)
PUBLIC_TALK = Spoke(index=1, speaker="Tom Hale", kind="statement",
                    text="I sat by the parlour window all evening, playing cribbage.")
PRIVATE_TALK = Spoke(index=2, speaker="Samuel Reed", kind="statement", audience=["Agnes Pike"],
                     text="Only you should know: the kitchen kettle was whistling like a banshee.")


def lighthouse() -> Script:
    return load_script(bundled_scripts()["lighthouse-keeper"])


def private_lines(script: Script, name: str) -> list[str]:
    return [line.strip() for line in script.character(name).story.splitlines()
            if len(line.strip()) > 20]


async def ask(access: str, question: ChoiceQuestion = WHO, seat: str | None = "Nora Vance",
              **options: object) -> tuple[str, str, ScriptedModel]:
    script = lighthouse()
    model = ScriptedModel()
    context = build_context(access, script, seat, [PUBLIC_TALK, PRIVATE_TALK],  # type: ignore[arg-type]
                            config=AnswererConfig(**options))  # type: ignore[arg-type]
    await answer_choice(question, context, model)
    request = model.requests[-1]
    return request.messages[0].text, request.messages[-1].text, model


async def test_ssa_reads_only_the_seats_own_script() -> None:
    script = lighthouse()
    system, prompt, model = await ask("ssa")
    assert model.requests[-1].purpose == "answer.ssa"
    assert any(line in prompt for line in private_lines(script, "Nora Vance"))
    for other in ("Tom Hale", "Samuel Reed", "Agnes Pike"):
        assert not any(line in prompt for line in private_lines(script, other))
    assert "what was said during the game" not in prompt and "cribbage" not in prompt
    assert "You play Nora Vance" in system and "You are not the murderer" in system


async def test_the_dialogue_answerer_adds_what_the_seat_observed_and_nothing_else() -> None:
    _, prompt, model = await ask("dialogue")
    assert model.requests[-1].purpose == "answer.dialogue"
    assert "What was said during the game that concerns the question:" in prompt
    assert "Tom Hale says to everyone: I sat by the parlour window" in prompt
    assert "banshee" not in prompt  # said privately to Agnes Pike
    _, agnes_prompt, _ = await ask("dialogue", seat="Agnes Pike")
    assert "whistling like a banshee" in agnes_prompt


async def test_a_murderer_answers_in_role_unless_told_otherwise() -> None:
    system, _, _ = await ask("ssa", seat="Agnes Pike")
    assert "You are the murderer: you killed Elias Thorne" in system
    system, _, model = await ask("ssa", seat="Agnes Pike", role_play=False)
    assert len(model.requests[-1].messages) == 1


async def test_fsa_reads_every_characters_script_within_the_per_character_budget() -> None:
    script = lighthouse()
    system, prompt, model = await ask("fsa", seat=None, fsa_tokens=40)
    assert model.requests[-1].purpose == "answer.fsa" and model.requests[-1].seat is None
    assert "you may now read every character's script" in system
    sections = prompt.split("What ")[1:]
    names = [section.split("'s script says about it:")[0] for section in sections]
    assert names == script.names
    for section in sections:
        body = section.split("says about it:\n")[1].split("\n\n")[0]
        assert 0 < count_tokens(body.replace("\n", " ")) <= 40


def test_the_fsa_budget_shrinks_with_the_number_of_players() -> None:
    assert [fsa_budget(n) for n in range(4, 10)] == [3500, 3000, 2500, 2000, 1600, 1200]
    assert fsa_budget(3) == FSA_BUDGETS[4]
    assert fsa_budget(12) == 900
    budgets = [fsa_budget(n) for n in range(2, 20)]
    assert budgets == sorted(budgets, reverse=True)


async def test_single_choice_replies_are_one_letter_in_any_case() -> None:
    script = lighthouse()
    for reply, letters in [({"reason": "r", "answer": "C"}, ["c"]),
                           ({"reason": "r", "answer": "b."}, ["b"])]:
        model = ScriptedModel(replies={"answer.ssa": [reply]})
        answer = await answer_choice(WHO, build_context("ssa", script, "Nora Vance"), model)
        assert (answer.letters, answer.answer, answer.reason) == (letters, letters[0], "r")
        assert answer.attempts == 1 and answer.error is None


async def test_multiple_choice_replies_are_a_list_of_letters() -> None:
    script = lighthouse()
    model = ScriptedModel(replies={"answer.ssa": [{"reason": "both", "answer": "B, a"}]})
    answer = await answer_choice(WHERE, build_context("ssa", script, "Tom Hale"), model)
    assert answer.letters == ["a", "b"] and answer.answer == "a,b"
    schema = model.requests[-1].json_schema["properties"]["answer"]
    assert schema["type"] == "array" and schema["items"]["enum"] == ["a", "b", "c"]
    assert grade(WHERE, {"answer": answer.answer}, rule="sets").correct


async def test_a_reply_that_never_validates_is_an_empty_answer_not_an_error() -> None:
    script = lighthouse()
    model = ScriptedModel(replies={"answer.ssa": lambda r: '{"reason": "?", "answer": "z"}'})
    answer = await answer_choice(WHO, build_context("ssa", script, "Nora Vance"), model)
    assert answer.letters == [] and answer.answer == "" and answer.attempts == 3
    assert "answer" in (answer.error or "") and answer.raw.endswith('"z"}')
    assert not grade(WHO, {"answer": answer.answer}, rule="sets").correct


async def test_repeated_passes_are_told_apart_by_sample() -> None:
    script = lighthouse()
    model = ScriptedModel()
    context = build_context("fsa", script)
    await answer_choice(WHO, context, model, sample=2)
    assert model.requests[-1].sample == 2


async def test_chinese_scripts_get_chinese_prompts() -> None:
    script = load_script(bundled_scripts()["tingsong-tea-estate"])
    model = ScriptedModel()
    question = ChoiceQuestion(id="z", question="谁是凶手？", answer=["a"],
                              options={"a": script.names[0], "b": script.names[1]})
    await answer_choice(question, build_context("fsa", script), model)
    assert "请根据各个角色的剧本回答问题" in model.requests[-1].messages[-1].text
    await answer_choice(question, build_context("dialogue", script, script.names[0]), model)
    assert "你扮演" in model.requests[-1].messages[0].text


def test_letters_are_parsed_strictly() -> None:
    assert parse_letters("A和C", "abc") == ["a", "c"]
    assert parse_letters(["c", "a", "a"], "abc") == ["a", "c"]
    assert parse_letters("AC", "abc") == ["a", "c"]
    assert parse_letters("None of the above", "abc") is None
    assert parse_letters("", "abc") is None


@pytest.mark.parametrize(("access", "seat", "words"), [
    ("oracle", "Tom Hale", "unknown answerer 'oracle'"),
    ("ssa", None, "needs the seat"),
    ("dialogue", "Nobody", "no character 'Nobody'"),
])
def test_bad_contexts_say_what_is_wrong(access: str, seat: str | None, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        build_context(access, lighthouse(), seat)  # type: ignore[arg-type]


@pytest.mark.parametrize("access", ["dialogue", "ssa"])
async def test_an_act_sheet_the_game_never_handed_out_is_not_answered_from(
        access: str) -> None:
    script = load_script(Path(__file__).parents[1] / "engine" / "tiny_script.yaml")
    act2 = script.character("Bob").act_sheet(2)
    assert act2 is not None
    question = ChoiceQuestion(id="q", question="Whose lamp was it?",
                              options={"a": "the housekeeper's", "b": "the butler's"},
                              answer=["a"])

    async def prompt(events: list, whole_script: bool = False) -> str:
        model = ScriptedModel()
        context = build_context(access, script, "Bob", events, whole_script=whole_script)  # type: ignore[arg-type]
        await answer_choice(question, context, model)
        return model.requests[-1].messages[-1].text

    handed = ActStarted(index=3, act=2, sheet=act2, audience=["Bob"])
    assert act2.text not in await prompt([])  # the game never reached act 2
    assert act2.text in await prompt([handed])
    assert act2.text not in await prompt([handed.model_copy(update={"audience": ["Ann"]})])
    assert act2.text in await prompt([], whole_script=True)  # imported: whole scripts
