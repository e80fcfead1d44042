"""Internal.

The PLAYER* authors' released game logs: typed readers, and their WellPlay scores.

``player-logs/log_<lang>/log_<Method>/<Script>/`` holds one game transcript
(``<Title>.xlsx``: ``index, stage, speaker, listener, words, prompt``) and three
evaluation passes (``evaluate/evaluation_{0,1,2}.xlsx``: ``tester, value, question,
choices, truth, answer, is_right``, then one summary row the authors' code appended).
Workbooks are read with openpyxl in read-only mode; any problem becomes a
``PlayerLogError`` naming the file, the row and the column.
"""

from __future__ import annotations

import re
import zipfile
import zlib
from collections.abc import Iterator
from functools import cache
from importlib import resources
from io import BytesIO
from pathlib import Path
from typing import Any, Literal, cast

import yaml
from pydantic import BaseModel, ValidationError

from jubensha.eval.playerlog_titles import WellPlayTitle, find_title
from jubensha.eval.stats import MeanStd
from jubensha.eval.wellplay import (
    POINTS_CATEGORY,
    GradedAnswer,
    PassScore,
    ScriptScore,
    extract_answer,
    is_correct,
    score_pass,
    score_script,
)
from jubensha.safeload import DocumentError, one_line, read_bounded

_BAD_WORKBOOK = (zipfile.BadZipFile, KeyError, ValueError, OSError, EOFError, SyntaxError,
                 zlib.error)
"""What openpyxl raises on truncated or foreign files (XML parse errors are SyntaxErrors; a
corrupt compressed part is a zlib.error), besides its own ``InvalidFileException``."""

Grading = Literal["logged", "authors", "sets", "exact"]
"""``logged``: the authors' own ``is_right`` column; the others re-grade the answers."""
LogLanguage = Literal["cn", "en"]

TRANSCRIPT_COLUMNS = ("index", "stage", "speaker", "listener", "words", "prompt")
EVALUATION_COLUMNS = ("tester", "value", "question", "choices", "truth", "answer", "is_right")
METHODS = {"PLAYER": "PLAYER", "O-CoT": "O-CoT", "Werewolf": "Werewolf",
           "think": "ThinkThrice", "think_thrice": "ThinkThrice", "SSA": "SSA", "FSA": "FSA"}
"""Log folder suffix (``log_<suffix>``) to the method's name in the paper's tables."""
_CHOICE_RE = re.compile(r"(?:^|\s)([A-E]):\s")


class PlayerLogError(Exception):
    """A log file that cannot be read; the message names the file and what is wrong."""


class TranscriptRow(BaseModel):
    """One utterance of a game and the prompt that produced it."""

    index: int
    stage: str
    speaker: str
    listener: str
    words: str
    prompt: str


class EvaluationRow(BaseModel):
    """One question put to one character in one pass, with the authors' judgement."""

    tester: str
    points: int
    question: str
    choices: str
    truth: str | None
    reply: str
    is_right: bool

    @property
    def options(self) -> dict[str, str]:
        """Option letter to text, parsed back from ``" A: x B: y "``."""
        parts = _CHOICE_RE.split(self.choices)
        return {parts[i].lower(): parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}

    @property
    def answer(self) -> Any:
        return extract_answer(self.reply)


class EvaluationPass(BaseModel):
    path: str
    rows: list[EvaluationRow]
    logged_score: float | None
    """The score the authors' code wrote in the summary row (``is_right`` column)."""


def _open_rows(path: Path, columns: tuple[str, ...]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of the first sheet as dicts keyed by the header, numbered as in Excel."""
    from openpyxl import load_workbook  # the player-logs extra, only when a log is read
    from openpyxl.utils.exceptions import InvalidFileException

    try:  # its kind and size checked first: a FIFO named .xlsx would hang the reader
        workbook = load_workbook(BytesIO(read_bounded(path)), read_only=True, data_only=True)
    except DocumentError as exc:
        raise PlayerLogError(f"{path}: {exc}") from None
    except (*_BAD_WORKBOOK, InvalidFileException) as exc:
        raise PlayerLogError(f"{path}: not a readable xlsx workbook "
                             f"({one_line(str(exc), 200)})") from None
    try:
        rows = workbook.worksheets[0].iter_rows(values_only=True)
        header = next(rows, None)
        names = [str(h).strip() if h is not None else "" for h in header or ()]
        missing = [c for c in columns if c not in names]
        if missing:
            found = one_line(", ".join(n for n in names if n), 300) or "nothing"
            raise PlayerLogError(f"{path}: header lacks column(s) {', '.join(missing)} "
                                 f"(found {found})")
        for number, values in enumerate(rows, start=2):
            yield number, dict(zip(names, values, strict=False))
    except _BAD_WORKBOOK as exc:
        raise PlayerLogError(f"{path}: cannot read the sheet ({exc})") from None
    finally:
        workbook.close()


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _problem(path: Path, number: int, exc: ValidationError) -> PlayerLogError:
    err = exc.errors()[0]
    column = ".".join(str(p) for p in err["loc"])
    return PlayerLogError(f"{path}: row {number}, column {column}: {err['msg']}")


def read_transcript(path: Path) -> list[TranscriptRow]:
    """Every utterance of a game transcript, in order."""
    out = []
    for number, row in _open_rows(path, TRANSCRIPT_COLUMNS):
        if all(v is None for v in row.values()):
            continue
        try:
            out.append(TranscriptRow(
                index=row["index"], stage=_text(row["stage"]), speaker=_text(row["speaker"]),
                listener=_text(row["listener"]), words=_text(row["words"]),
                prompt=_text(row["prompt"])))
        except ValidationError as exc:
            raise _problem(path, number, exc) from None
    return out


def read_evaluation(path: Path) -> EvaluationPass:
    """One evaluation pass; the authors' trailing summary row is kept apart."""
    rows: list[EvaluationRow] = []
    logged: float | None = None
    for number, row in _open_rows(path, EVALUATION_COLUMNS):
        if row["tester"] is None and row["value"] is None:
            if isinstance(row["is_right"], int | float):
                logged = float(row["is_right"])
            continue
        try:
            rows.append(EvaluationRow(
                tester=_text(row["tester"]), points=row["value"],
                question=_text(row["question"]), choices=_text(row["choices"]),
                truth=None if row["truth"] is None else str(row["truth"]),
                reply=_text(row["answer"]), is_right=row["is_right"]))
        except ValidationError as exc:
            raise _problem(path, number, exc) from None
        if rows[-1].points not in POINTS_CATEGORY:
            raise PlayerLogError(f"{path}: row {number}, column value: {rows[-1].points} is "
                                 f"not a WellPlay point value {sorted(POINTS_CATEGORY)}")
    if not rows:
        raise PlayerLogError(f"{path}: no evaluation rows")
    return EvaluationPass(path=str(path), rows=rows, logged_score=logged)


class LogEntry(BaseModel):
    """One method's game on one script: its transcript (when released) and its passes."""

    language: LogLanguage
    method: str
    folder: str
    title: str
    transcript: Path | None
    passes: list[Path]

    @property
    def label(self) -> str:
        return f"{self.language}/{self.method}/{self.title}"


def script_title(folder: str) -> str:
    """``131-罪恶（4人封闭）`` -> ``罪恶``; ``Sin (4 people closed)`` -> ``Sin``."""
    title = re.sub(r"^\d+-", "", folder)
    return re.split(r"\s*[（(]", title, maxsplit=1)[0].strip()


def discover(root: Path) -> list[LogEntry]:
    """Every (language, method, script) under a ``player-logs`` folder, sorted."""
    if not root.is_dir():
        raise PlayerLogError(f"{root}: not a folder")
    entries = []
    for folder in sorted(root.glob("log_*/log_*/*/")):
        language, method = folder.parent.parent.name[4:], folder.parent.name[4:]
        if language not in ("cn", "en") or method not in METHODS:
            continue
        passes = sorted((folder / "evaluate").glob("evaluation_*.xlsx"))
        transcripts = sorted(p for p in folder.glob("*.xlsx") if not p.name.startswith("~$"))
        entries.append(LogEntry(
            language=cast(LogLanguage, language), method=METHODS[method], folder=folder.name,
            title=script_title(folder.name), passes=passes,
            transcript=transcripts[0] if transcripts else None))
    if not entries:
        raise PlayerLogError(f"{root}: no log_cn/log_<Method>/<Script> folders")
    return entries


def graded(evaluation: EvaluationPass, grading: Grading = "logged",
           multiple: dict[tuple[str, str], bool] | None = None) -> list[GradedAnswer]:
    """The pass's answers judged by ``grading``.

    Re-grading needs to know which questions are multiple choice: ``multiple`` maps
    ``(tester, question)`` to it (the WellPlay question files say; the logs do not); a
    question it lacks counts as single choice.
    """
    out = []
    for row in evaluation.rows:
        if grading == "logged":
            correct = row.is_right
        else:
            is_multiple = (multiple or {}).get((row.tester, row.question.strip()), False)
            correct = row.truth is not None and is_correct(
                row.answer, row.truth, is_multiple, rule=grading,
                letters=row.options.keys() or "abcde")
        out.append(GradedAnswer(question=row.question, points=row.points,
                                category=POINTS_CATEGORY[row.points], correct=correct,
                                tester=row.tester))
    return out


def score_entry(entry: LogEntry, passes: list[EvaluationPass], grading: Grading = "logged",
                multiple: dict[tuple[str, str], bool] | None = None,
                digits: int | None = None) -> ScriptScore:
    """A method's score on a script: mean and sample std over the evaluation passes
    (``digits``: round each pass first, see ``wellplay.score_script``)."""
    if not passes:
        raise PlayerLogError(f"{entry.label}: no evaluation passes")
    scores: list[PassScore] = [score_pass(graded(p, grading, multiple)) for p in passes]
    return score_script(entry.title, scores, digits)


class PaperCell(BaseModel):
    mean: float
    std: float


class PaperScript(BaseModel):
    """One script's block of the paper's table: question counts and [mean, std] cells."""

    questions: dict[str, int]
    cells: dict[str, dict[str, PaperCell]]
    """metric (voting, objective, reasoning, relations, overall) -> method -> cell."""


class PaperTables(BaseModel):
    methods: list[str]
    scripts: list[WellPlayTitle]
    """Every WellPlay script in both languages and its name in the tables."""
    tables: dict[str, dict[str, PaperScript]]
    """``zh`` (table A3) / ``en`` (table A4) -> the paper's script name -> block."""

    def lookup(self, language: LogLanguage, title: str,
               folder: str = "") -> tuple[str, PaperScript] | None:
        """The paper's name and block for a log's script (its folder's number, else its
        title in either language)."""
        table = self.tables["zh" if language == "cn" else "en"]
        found = find_title(self.scripts, title, folder)
        name = found.paper if found else title
        return (name, table[name]) if name in table else None


@cache
def paper_tables() -> PaperTables:
    """The WellPlay results printed in the PLAYER* paper (tables A3 and A4)."""
    text = resources.files("jubensha.eval").joinpath("data/player_star_tables.yaml").read_text(
        encoding="utf-8")
    raw = yaml.safe_load(text)
    tables = {
        language: {
            script: PaperScript(
                questions=block["questions"],
                cells={metric: {m: PaperCell(mean=v[0], std=v[1]) for m, v in row.items()}
                       for metric, row in block.items() if metric != "questions"})
            for script, block in scripts.items()}
        for language, scripts in raw["tables"].items()}
    return PaperTables(methods=raw["methods"], scripts=raw["scripts"], tables=tables)


class Comparison(BaseModel):
    """A recomputed cell next to the paper's."""

    language: LogLanguage
    method: str
    script: str
    metric: str
    ours: MeanStd
    questions: int
    paper: PaperCell | None = None
    paper_questions: int | None = None

    @property
    def difference(self) -> float | None:
        """Ours minus the paper, both rounded to the paper's three decimals."""
        if self.paper is None:
            return None
        return round(round(self.ours.mean, 3) - self.paper.mean, 3)


def compare(entry: LogEntry, score: ScriptScore) -> list[Comparison]:
    """Every category and the overall score of ``score`` next to the paper's cell."""
    found = paper_tables().lookup(entry.language, entry.title, entry.folder)
    name, block = found if found else (entry.title, None)
    rows = []
    for metric in (*score.categories, "overall"):
        ours = score.overall if metric == "overall" else score.categories[metric]
        questions = score.passes[0].questions if metric == "overall" else score.questions(metric)
        cell = block.cells.get(metric, {}).get(entry.method) if block else None
        rows.append(Comparison(
            language=entry.language, method=entry.method, script=name, metric=metric,
            ours=ours, questions=questions, paper=cell,
            paper_questions=block.questions.get(metric) if block else None))
    return rows
