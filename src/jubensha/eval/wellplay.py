"""Internal.

WellPlay scoring (PLAYER* paper, section 3 and appendix B).

Objective questions are worth 10 points, reasoning 5, relations 2; a pass's score is
awarded points over total points, and each category also gets its accuracy (share of its
questions answered correctly). A script is evaluated in several passes (the paper's three
evaluation runs, our ``--samples``); across scripts the weighted mean and weighted
standard deviation use question counts for categories and total points for the score
(see ``stats.py`` for the exact formulas).

Correctness has three rules (docs/evaluation.md counts where they differ on the
authors' own logs):

- ``authors``: the released PLAYER code, literally. The answer and the truth are compared
  as lower-cased strings: a single-choice answer is right when it is a *substring* of the
  truth, a multiple-choice answer when the truth is a substring of it. So an empty answer
  is right on every single-choice question, ``A,B`` is right on a multiple-choice question
  whose truth is ``a``, and ``None of the above`` is too (it contains an ``a``);
- ``sets``: the same intent on option letters: single choice right when the answer's
  letters are a non-empty subset of the truth, multiple choice when they include it;
- ``exact``: the answer's set of letters equals the truth's.
"""

from __future__ import annotations

import ast
import json
import re
import unicodedata
from collections.abc import Collection, Iterable, Sequence
from typing import Any, Literal, cast

from pydantic import BaseModel

from jubensha.eval.stats import MeanStd, pooled_weighted, sample_mean_std
from jubensha.scripts.model import CATEGORY_POINTS, ChoiceCategory, ChoiceQuestion

Rule = Literal["authors", "sets", "exact"]
RULES: tuple[Rule, ...] = ("authors", "sets", "exact")
CATEGORIES: tuple[ChoiceCategory, ...] = ("objective", "reasoning", "relations")
POINTS_CATEGORY: dict[int, ChoiceCategory] = {  # the keys of CATEGORY_POINTS are categories
    points: cast(ChoiceCategory, category) for category, points in CATEGORY_POINTS.items()}
DEFAULT_LETTERS = "abcde"

_SEPARATORS = re.compile(r"(?:\s*(?:[,，、;；/&+]|\band\b|和|与|及)\s*)|\s+")
_LABELLED = re.compile(r"([a-z])\s*(?:[:：.)）(（]|$)")


def extract_answer(reply: Any) -> Any:
    """The ``answer`` field of a ``{"reason", "answer"}`` reply; ``None`` when absent.

    Parsed as the authors' ``json_format`` did, without evaluating code: newlines
    removed, then JSON, then a Python literal (single-quoted dicts), then the first object
    that parses from the last ``{`` backwards, closing a final object that lacks ``}``.
    """
    if isinstance(reply, dict):
        return reply.get("answer")
    if not isinstance(reply, str):
        return None
    data = _parse_object(reply.strip().replace("\n", ""))
    return data.get("answer") if isinstance(data, dict) else None


def _parse_object(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        pass
    decoder = json.JSONDecoder()
    for start in reversed([i for i, c in enumerate(text) if c == "{"]):
        tail = text[start:]
        try:
            return decoder.raw_decode(tail)[0]
        except json.JSONDecodeError:
            pass
        if "}" not in tail:
            for end in range(len(tail), 0, -1):
                try:
                    return json.loads(tail[:end] + "}")
                except json.JSONDecodeError:
                    continue
    return None


def answer_letters(answer: Any, letters: Collection[str] = DEFAULT_LETTERS
                   ) -> frozenset[str] | None:
    """The option letters an answer names, or ``None`` when it is not a list of letters.

    Accepted: ``A``, ``a,c``, ``A, C``, ``A和C``, ``AC`` (a run of distinct letters), a
    JSON list ``["A", "C"]``, and a letter followed by its text (``A: 李警察``). Anything
    else (``Unknown``, ``None of the above``, an empty answer) names no letters.
    """
    if isinstance(answer, list):
        answer = ",".join(str(a) for a in answer)
    if not isinstance(answer, str):
        return None
    text = unicodedata.normalize("NFKC", answer).strip().lower()
    found: list[str] = []
    for token in filter(None, _SEPARATORS.split(text)):
        if token in letters:
            found.append(token)
        elif all(c in letters for c in token) and len(set(token)) == len(token):
            found.extend(token)
        else:
            labelled = _LABELLED.match(token)
            if labelled is None or labelled.group(1) not in letters or found:
                return None
            return frozenset(labelled.group(1))
    return frozenset(found) or None


def is_correct(answer: Any, truth: Sequence[str] | str, multiple: bool,
               rule: Rule = "authors", letters: Collection[str] = DEFAULT_LETTERS) -> bool:
    """Whether ``answer`` (the reply's ``answer`` field) matches ``truth`` under ``rule``."""
    truth_text = truth if isinstance(truth, str) else "".join(truth)
    truth_text = truth_text.strip().lower()
    if not truth_text:
        return False
    if rule == "authors":
        if not isinstance(answer, str):
            return False
        given = answer.lower()
        return truth_text in given if multiple else given in truth_text
    given_letters = answer_letters(answer, letters)
    if given_letters is None:
        return False
    expected = frozenset(c for c in truth_text if c.isalpha())
    if rule == "exact":
        return given_letters == expected
    return expected <= given_letters if multiple else given_letters <= expected


class GradedAnswer(BaseModel):
    """One answer to one question in one pass, already judged."""

    question: str
    points: int
    category: ChoiceCategory | None
    correct: bool
    tester: str | None = None
    sample: int = 0


def grade(question: ChoiceQuestion, reply: Any, rule: Rule = "authors", sample: int = 0,
          tester: str | None = None) -> GradedAnswer:
    """Judge one reply (raw model text or parsed object) to a WellPlay question."""
    correct = is_correct(extract_answer(reply), question.answer, question.multiple, rule,
                         letters=question.options.keys() or DEFAULT_LETTERS)
    return GradedAnswer(question=question.question, points=question.worth,
                        category=question.category, correct=correct,
                        tester=tester or question.asked_of, sample=sample)


class CategoryScore(BaseModel):
    questions: int
    correct: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.questions if self.questions else 0.0


class PassScore(BaseModel):
    """One evaluation pass over a script's questions."""

    awarded: int
    total: int
    categories: dict[str, CategoryScore]

    @property
    def score(self) -> float:
        return self.awarded / self.total if self.total else 0.0

    @property
    def questions(self) -> int:
        return sum(c.questions for c in self.categories.values())


def score_pass(answers: Iterable[GradedAnswer]) -> PassScore:
    """Awarded over total points, and per-category accuracy, of one pass."""
    awarded = total = 0
    counts = {c: [0, 0] for c in CATEGORIES}
    for answer in answers:
        total += answer.points
        awarded += answer.points if answer.correct else 0
        if answer.category is not None:
            counts[answer.category][0] += 1
            counts[answer.category][1] += answer.correct
    return PassScore(awarded=awarded, total=total, categories={
        c: CategoryScore(questions=n, correct=k) for c, (n, k) in counts.items() if n})


class ScriptScore(BaseModel):
    """A script's passes summarised: mean and sample std over passes (table A3's cells)."""

    script: str
    passes: list[PassScore]
    overall: MeanStd
    categories: dict[str, MeanStd]

    @property
    def total_points(self) -> int:
        return self.passes[0].total

    def questions(self, category: str) -> int:
        found = self.passes[0].categories.get(category)
        return found.questions if found else 0


def significant(value: float, digits: int | None) -> float:
    """``value`` rounded to ``digits`` significant digits (unchanged when ``None``)."""
    return value if digits is None or value == 0 else float(f"{value:.{digits}g}")


def score_script(script: str, passes: Sequence[PassScore], digits: int | None = None
                 ) -> ScriptScore:
    """Summarise a script's passes; every pass must ask the same number of questions.

    ``digits`` rounds each pass's values to that many significant digits before the mean
    and std are taken, as the authors' summary sheets did (``digits=3`` reproduces the
    third decimal the paper prints where exact values round the other way).
    """
    if not passes:
        raise ValueError(f"{script}: no evaluation passes")
    sizes = {p.questions for p in passes}
    if len(sizes) > 1:
        raise ValueError(f"{script}: passes ask different numbers of questions {sorted(sizes)}")
    categories: dict[str, MeanStd] = {
        c: sample_mean_std([significant(p.categories[c].accuracy, digits) for p in passes])
        for c in CATEGORIES if c in passes[0].categories}
    return ScriptScore(script=script, passes=list(passes), categories=categories,
                       overall=sample_mean_std([significant(p.score, digits) for p in passes]))


def aggregate(scripts: Sequence[ScriptScore]) -> dict[str, MeanStd]:
    """Across scripts: categories weighted by their question counts, the overall score by
    total points; pooled over every (script, pass) value as the paper's Overall rows."""
    result: dict[str, MeanStd] = {}
    for category in CATEGORIES:
        having = [s for s in scripts if category in s.categories]
        if having:
            result[category] = pooled_weighted(
                [[p.categories[category].accuracy for p in s.passes] for s in having],
                [s.questions(category) for s in having])
    result["overall"] = pooled_weighted([[p.score for p in s.passes] for s in scripts],
                                        [s.total_points for s in scripts])
    return result
