"""WellPlay: the three correctness rules on crafted answers, points, scores, aggregation."""

from __future__ import annotations

import math

import pytest

from jubensha.eval.wellplay import (
    GradedAnswer,
    aggregate,
    answer_letters,
    extract_answer,
    grade,
    is_correct,
    score_pass,
    score_script,
)
from jubensha.scripts.model import ChoiceQuestion


@pytest.mark.parametrize(("answer", "truth", "multiple", "authors", "sets", "exact"), [
    ("A", "a", False, True, True, True),
    ("", "a", False, True, False, False),                 # '' is a substring of anything
    ("a,b", "a", False, False, False, False),
    ("Unknown", "a", False, False, False, False),
    ("A: 李警察", "a", False, False, True, True),          # labelled letter: not a substring
    ("b", "bb", False, True, True, True),                  # a doubled letter in the truth
    ("A,B", "a", True, True, True, False),                 # "pick two" with one culprit
    ("None of the above", "a", True, True, False, False),  # contains an 'a'
    ("Cannot be determined", "a", True, True, False, False),
    ("B,C", "a", True, False, False, False),
    ("", "a", True, False, False, False),
    ("a,c", "ac", True, False, True, True),                # the separator breaks the substring
    ("AC", "ac", True, True, True, True),
    ("C和A", "ac", True, False, True, True),
    ("A", None, False, False, False, False),               # no truth: never right
    (None, "a", False, False, False, False),               # no parsable answer
])
def test_correctness_rules(answer: str | None, truth: str | None, multiple: bool,
                           authors: bool, sets: bool, exact: bool) -> None:
    got = {rule: is_correct(answer, truth or "", multiple, rule)
           for rule in ("authors", "sets", "exact")}
    assert got == {"authors": authors, "sets": sets, "exact": exact}


def test_answer_letters_accepts_letter_lists_only() -> None:
    assert answer_letters("A, C") == frozenset("ac")
    assert answer_letters(["A", "D"]) == frozenset("ad")
    assert answer_letters("ｂ") == frozenset("b")          # full-width letters are normalised
    assert answer_letters("a and b") == frozenset("ab")
    assert answer_letters("F", letters="abcd") is None
    assert answer_letters("None") is None
    assert answer_letters("") is None


def test_extract_answer_parses_replies_like_the_authors_without_evaluating_code() -> None:
    assert extract_answer('{"reason": "r", "answer": "B"}') == "B"
    assert extract_answer("{'reason': 'r', 'answer': 'c'}") == "c"
    assert extract_answer('My reply: {"reason": "r",\n "answer": "a,b"} done') == "a,b"
    assert extract_answer('{"reason": "cut short", "answer": "D"') == "D"   # closed for it
    assert extract_answer('{"reason": "r", "answer": ""}') == ""
    assert extract_answer({"answer": "A"}) == "A"
    assert extract_answer("no json at all") is None
    assert extract_answer('[{"answer": "A"}') == "A"          # the object inside a list
    assert extract_answer(None) is None


def test_extract_answer_never_runs_code() -> None:
    assert extract_answer("__import__('os').getcwd()") is None


def _question(category: str, multiple: bool = False, answer: str = "a") -> ChoiceQuestion:
    return ChoiceQuestion(id=category, question=f"{category}?", options={"a": "x", "b": "y"},
                          answer=[answer], multiple=multiple, category=category,
                          asked_of="Li")


def test_grade_uses_the_question_points_truth_and_kind() -> None:
    graded = grade(_question("objective", multiple=True), '{"answer": "A,B"}')
    assert (graded.points, graded.correct, graded.tester) == (10, True, "Li")
    assert not grade(_question("objective", multiple=True), '{"answer": "A,B"}',
                     rule="exact").correct
    assert grade(_question("relations"), '{"answer": "b"}').points == 2


def _answers(spec: list[tuple[str, int, bool]]) -> list[GradedAnswer]:
    return [GradedAnswer(question=str(i), category=c, points=p, correct=ok)
            for i, (c, p, ok) in enumerate(spec)]


PASS = _answers([("objective", 10, True), ("objective", 10, False),
                 ("reasoning", 5, True), ("reasoning", 5, False),
                 ("relations", 2, True), ("relations", 2, True), ("relations", 2, False)])


def test_score_is_awarded_over_total_points_with_category_accuracy() -> None:
    result = score_pass(PASS)
    assert (result.awarded, result.total) == (10 + 5 + 4, 20 + 10 + 6)
    assert result.score == pytest.approx(19 / 36)
    accuracy = {c: s.accuracy for c, s in result.categories.items()}
    assert accuracy == pytest.approx({"objective": 0.5, "reasoning": 0.5, "relations": 2 / 3})


def test_script_summary_is_mean_and_sample_std_over_passes() -> None:
    other = _answers([("objective", 10, True), ("objective", 10, True),
                      ("reasoning", 5, True), ("reasoning", 5, True),
                      ("relations", 2, False), ("relations", 2, False), ("relations", 2, False)])
    script = score_script("S", [score_pass(PASS), score_pass(other)])
    assert script.overall.mean == pytest.approx((19 / 36 + 30 / 36) / 2)
    assert script.overall.std == pytest.approx(math.sqrt(2) * (11 / 36) / 2)
    assert script.categories["objective"].mean == pytest.approx(0.75)
    assert (script.total_points, script.questions("relations")) == (36, 3)
    with pytest.raises(ValueError, match="different numbers"):
        score_script("S", [score_pass(PASS), score_pass(PASS[:3])])


def test_aggregate_weights_categories_by_questions_and_the_score_by_points() -> None:
    small = score_script("small", [score_pass(_answers([("objective", 10, True)]))] * 2)
    large = score_script("large", [score_pass(_answers([("objective", 10, False),
                                                        ("reasoning", 5, True),
                                                        ("reasoning", 5, True)]))] * 2)
    summary = aggregate([small, large])
    # objective: 1 question at 1.0, 1 question at 0.0 -> 0.5 +- 0.5
    assert (summary["objective"].mean, summary["objective"].std) == pytest.approx((0.5, 0.5))
    assert summary["reasoning"].mean == 1.0
    # overall: 1.0 with 10 points, 0.5 with 20: mean 2/3, variance (10/9 + 20/36) / 30
    assert summary["overall"].mean == pytest.approx(2 / 3)
    assert summary["overall"].std == pytest.approx(math.sqrt(2) / 6)
    assert "relations" not in summary
