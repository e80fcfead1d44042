"""Results as data first: every metric result is a pydantic model that renders itself as
tables, shown in the terminal (rich), written into documentation (Markdown) or dumped as
JSON, so that numbers in docs are generated, never typed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from jubensha.terminal import plain_text

Format = Literal["table", "markdown", "json"]


class ResultTable(BaseModel):
    title: str
    columns: list[str]
    rows: list[list[str]]
    notes: list[str] = Field(default_factory=list)


class Scoring(BaseModel):
    """How a result was scored, named in every row that shows it: the judge model ("none"
    when no model judged; "lexical" for a metric whose judge was the lexical rule), the
    grading rule and the reading, each "" where the metric has none."""

    judge: str = "none"
    grading: str = ""
    reading: str = ""
    answers: int = Field(0, description="The answers the value rests on (eval.failure).")
    failed_answers: int = Field(0, description="Of those, the ones that failed.")

    def label(self) -> str:
        """``judge openai:gpt-4o · grading authors``: every part the metric has."""
        parts = [("judge", self.judge), ("grading", self.grading), ("reading", self.reading)]
        return " · ".join(f"{name} {value}" for name, value in parts if value)


class MetricResult(BaseModel):
    """Base of every metric's result; subclasses add fields and say how to tabulate them."""

    settings: ClassVar[tuple[str, ...]] = ()
    """Numeric fields that say how the metric was measured, not what it found: never
    averaged or compared as results (``headline`` leaves them out)."""

    metric: str
    run: str = ""
    """The run folder (or log) the result is about."""
    group: str = ""
    """What the run is an instance of (language and architecture), for averages."""
    scoring: Scoring = Field(default_factory=Scoring)
    """How it was scored (set by ``eval.scoring``): results scored otherwise are never
    pooled."""

    def tables(self) -> list[ResultTable]:
        raise NotImplementedError(f"{type(self).__name__} does not define its tables")

    def shown_tables(self) -> list[ResultTable]:
        """``tables()``, the first one saying how the result was scored."""
        return with_scoring(self.tables(), self.scoring)

    @classmethod
    def across(cls, results: Sequence[MetricResult]) -> list[ResultTable]:
        """Tables over several results beyond the column means (e.g. weighted); none."""
        return []


def with_scoring(tables: list[ResultTable], scoring: Scoring) -> list[ResultTable]:
    """``tables``, the first one noting ``scored with: judge ... · grading ...`` and, when
    the metric read answers, how many of them failed (counted wrong or left out)."""
    if not tables:
        return tables
    first = tables[0]
    note = f"scored with: {scoring.label()}" + (
        f"; failed_answers: {scoring.failed_answers}/{scoring.answers}"
        if scoring.answers else "")
    return [first.model_copy(update={"notes": [*first.notes, note]}), *tables[1:]]


def rich_table(table: ResultTable) -> Table:
    """The table for the terminal, every text as written: a header such as ``mean [ci_low,
    ci_high]`` or a name from a script is never read as rich markup."""
    out = Table(title=escape(table.title),
                caption=escape("\n".join(table.notes)) or None)
    for column in table.columns:
        out.add_column(escape(column), overflow="fold")  # wrap a long cell, never cut it
    for row in table.rows:
        out.add_row(*(escape(cell) for cell in row))
    return out


def print_table(console: Console, table: Table | ResultTable, markdown_hint: str) -> None:
    """Print a table whole: at its full width when the output is not a terminal (a file or
    a pipe has no 80-column limit), else folded to the terminal's width, with a hint to the
    Markdown format when it did not fit."""
    shown = rich_table(table) if isinstance(table, ResultTable) else table
    need = console.measure(shown, options=console.options.update_width(1000)).maximum
    if console.is_terminal:
        console.print(shown)
        if need > console.width:
            console.print(f"(the table is wider than this terminal; {markdown_hint} prints "
                          "it whole)", style="dim")
    else:
        width = console.width
        console.width = max(width, need)
        try:
            console.print(shown)
        finally:
            console.width = width


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(table: ResultTable) -> str:
    """The table as Markdown, without escape sequences (names come from scripts)."""
    lines = [f"**{table.title}**", "", "| " + " | ".join(map(_cell, table.columns)) + " |",
             "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(map(_cell, row)) + " |" for row in table.rows]
    for note in table.notes:
        lines += ["", note]
    return plain_text("\n".join(lines) + "\n")


def number(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def headline(result: BaseModel, prefix: str = "", depth: int = 3) -> dict[str, float]:
    """A metric result's numbers: its numeric fields and numeric properties, and those of
    the models nested in its fields (``score.overall.mean``). Numbers inside dictionaries
    and lists (per seat, per question) are left to the result file. A result's
    ``settings`` (how it was measured, e.g. similarity's ``n``) are not results."""
    numbers: dict[str, float] = {}
    settings = (*getattr(type(result), "settings", ()), "scoring")  # how, not what
    for name in type(result).model_fields:
        if name in settings:
            continue
        value = getattr(result, name)
        if _number(value):
            numbers[prefix + name] = value
        elif isinstance(value, BaseModel) and depth > 1:
            numbers |= headline(value, f"{prefix}{name}.", depth - 1)
    for cls in type(result).__mro__:
        if cls in (MetricResult, BaseModel):
            break
        for name, attribute in vars(cls).items():
            if isinstance(attribute, property) and _number(value := getattr(result, name)):
                numbers[prefix + name] = value
    return numbers
