"""Internal.

What the ``jubensha eval`` commands share: printing results, reading ``--options`` and
naming the reference script, for the metric commands and the post-game ones alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from jubensha.eval.registry import options_problems
from jubensha.eval.report import (
    Format,
    MetricResult,
    ResultTable,
    markdown_table,
    print_table,
    with_scoring,
)
from jubensha.safeload import DocumentError, one_line, read_document
from jubensha.scripts.bundled import find_script
from jubensha.scripts.importers.wellplay import import_wellplay
from jubensha.scripts.model import Script
from jubensha.terminal import Terminal, fail

console = Terminal()


def show(tables: list[ResultTable], fmt: Format) -> None:
    for table in tables:
        if fmt == "markdown":
            typer.echo(markdown_table(table))
        else:
            print_table(console, table, "--format markdown")


def emit(results: list[MetricResult], fmt: Format, out: Path | None) -> None:
    """Print results in ``fmt`` (several runs of one metric share their tables) and write
    their JSON to ``out`` (an object for one result, a list for several)."""
    data = (results[0].model_dump_json(indent=2) if len(results) == 1 else
            "[" + ",\n".join(r.model_dump_json(indent=2) for r in results) + "]")
    if fmt == "json":
        typer.echo(data)
    else:
        show(with_scoring(merge(results), results[0].scoring), fmt)
    if out is not None:
        out.write_text(data + "\n", encoding="utf-8")


def load_reference_script(source: str) -> Script:
    """A bundled script id, a script file or folder of ours, or a WellPlay script folder."""
    path = Path(source)
    if (path / "json" / "script_info.json").is_file():
        return import_wellplay(path)
    return find_script(source)


def read_options(path: Path | None) -> dict[str, Any]:
    """``--options FILE``: YAML or JSON, metric name → that metric's options."""
    if path is None:
        return {}
    try:
        data = read_document(path)
    except DocumentError as exc:
        raise fail(f"{path}: cannot read options: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise fail(f"{path}: options must map metric names to their options")
    problems = options_problems(data)
    if problems:
        field, problem = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise fail(f"{path}: {one_line(field, 200)}: {one_line(problem, 300)}{more}")
    return data


def merge(results: list[MetricResult]) -> list[ResultTable]:
    """One table per kind of table with a row per run, for several runs of one metric,
    closed by the mean of each numeric column: per group when there are several, and over
    all runs."""
    if len(results) == 1:
        return results[0].tables()
    merged = []
    for i, first in enumerate(results[0].tables()):
        rows = [[Path(r.run).name, *row] for r in results for row in r.tables()[i].rows]
        groups = list(dict.fromkeys(r.group for r in results))
        for group in (groups if len(groups) > 1 else []):
            rows.append([f"mean {group}", *_means(
                [row for r in results if r.group == group for row in r.tables()[i].rows])])
        rows.append([f"mean of {len(results)}", *_means(
            [row for r in results for row in r.tables()[i].rows])])
        merged.append(first.model_copy(update={"columns": ["run", *first.columns],
                                               "rows": rows}))
    return merged + type(results[0]).across(results)


def _means(rows: list[list[str]]) -> list[str]:
    """Column means of cells that are all numbers (integers stay integers); else blank."""
    out = []
    for cells in zip(*rows, strict=True):
        try:
            values = [float(c) for c in cells]
        except ValueError:
            out.append("")
            continue
        mean = sum(values) / len(values)
        out.append(f"{mean:.0f}" if all(c.isdigit() for c in cells) else f"{mean:.3f}")
    return out
