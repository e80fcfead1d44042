"""The script model and its cross-reference validation."""

from __future__ import annotations

from jubensha.scripts import (
    Character,
    ChoiceQuestion,
    Clue,
    Kill,
    Script,
    Truth,
    Victim,
    dump_script,
    validate,
)
from jubensha.scripts.io import parse_script


def _script(**changes) -> Script:
    base = {
        "id": "tiny", "title": "Tiny", "language": "en",
        "characters": [Character(name="Ann", side="murderer", killed=["Vic"]),
                       Character(name="Bob")],
        "victims": [Victim(name="Vic")],
        "truth": Truth(murderers=["Ann"], kills=[Kill(victim="Vic", killers=["Ann"])]),
    }
    return Script(**(base | changes))


def test_a_coherent_script_has_no_problems() -> None:
    assert validate(_script()).problems == []


def test_unknown_clue_holder_is_an_error_naming_the_field() -> None:
    report = validate(_script(clues=[Clue(id="c1", text="x", holder="Zed")]))
    assert [(p.field, p.severity) for p in report.problems] == [("clues[0].holder", "error")]
    assert "Zed" in report.problems[0].message


def test_victim_without_killer_is_an_error() -> None:
    script = _script(truth=Truth(murderers=["Ann"]))
    assert any(p.field == "truth.kills" and "Vic" in p.message for p in validate(script).errors)


def test_sides_disagreeing_with_truth_is_only_a_warning() -> None:
    script = _script(characters=[Character(name="Ann", killed=["Vic"]), Character(name="Bob")])
    report = validate(script)
    assert report.ok and report.warnings


def test_answer_letter_must_be_an_option() -> None:
    question = ChoiceQuestion(id="q1", question="Who?", options={"A": "Ann", "b": "Bob"},
                              answer=["C"])
    report = validate(_script(questions={"choice": [question]}))
    assert [p.field for p in report.errors] == ["questions.choice[0].answer[0]"]


def test_choice_points_follow_wellplay_categories() -> None:
    worth = [ChoiceQuestion(id="q", question="?", options={"a": "x"}, category=c).worth
             for c in ("objective", "reasoning", "relations")]
    assert worth == [10, 5, 2]


def test_yaml_round_trip_keeps_everything() -> None:
    import yaml

    script = _script(background="Line one.\nLine two.\n", clues=[Clue(id="c", text="x")])
    text = dump_script(script)
    assert "background: |" in text
    assert parse_script(yaml.safe_load(text), "mem") == script
