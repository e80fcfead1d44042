"""`jubensha audit PATH...`: the isolation audit over run folders, batches and imported
logs (``eval.audit``); exit 1 when a seat call is flagged, 2 on unreadable input."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer
from pydantic import ValidationError

from jubensha.eval.audit import AuditOptions, RunAudit, audit_run
from jubensha.eval.audit_report import AuditReport
from jubensha.eval.commands import load_reference_script
from jubensha.eval.report import markdown_table, rich_table
from jubensha.llm.calls import read_calls
from jubensha.runlog.folder import RunError, RunLog, read_run
from jubensha.runlog.script import played_script
from jubensha.runs.loose import find_run_folders
from jubensha.scripts.importers import IMPORTERS, import_script
from jubensha.scripts.io import ScriptError
from jubensha.scripts.model import Script
from jubensha.terminal import Terminal, fail

console = Terminal()


class AuditInputError(ValueError):
    """A path or run that cannot be audited; the message names it and the problem."""


def run_folders(paths: list[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        if not path.is_dir():
            raise AuditInputError(f"{path}: no such folder")
        folders = find_run_folders(path)
        if not folders:
            raise AuditInputError(f"{path}: holds no run folder (meta.json, events.jsonl)")
        found += [f for f in folders if f not in found]
    return found


def load_any(source: str) -> Script:
    """A bundled id, a script of ours, a WellPlay folder, else the first importer that
    reads it (a run folder does not record the format of an imported script)."""
    try:
        return load_reference_script(source)
    except ScriptError as first:
        for name in IMPORTERS:
            try:
                return import_script(name, Path(source))
            except (ScriptError, ValueError, OSError):
                continue
        raise first from None


def script_of(run: RunLog, given: str | None, cache: dict[str, Script]) -> Script:
    """The script named with ``--script`` (read once for every run), else the run
    folder's own copy (``runlog.script``)."""
    if given is None:
        try:
            return played_script(run)
        except RunError as exc:
            raise AuditInputError(str(exc).splitlines()[0]) from None
    if given not in cache:
        try:
            cache[given] = load_any(given)
        except (ScriptError, KeyError, ValueError, OSError) as exc:
            message = str(exc).splitlines()[0]
            raise AuditInputError(f"--script {given!r}: {message}") from None
    return cache[given]


def audit_paths(paths: list[Path], options: AuditOptions, script: str | None = None
                ) -> AuditReport:
    scripts: dict[str, Script] = {}
    audits: list[RunAudit] = []
    for folder in run_folders(paths):
        try:
            run = read_run(folder)
            extra = folder / "eval" / "calls.jsonl"
            evaluated = read_calls(extra) if extra.is_file() else []
        except (RunError, ValueError, OSError) as exc:
            message = str(exc).splitlines()[0]
            raise AuditInputError(message if str(folder) in message
                                  else f"{folder}: {message}") from None
        played = script_of(run, script, scripts)
        audits.append(audit_run(played, run, options, evaluated))
    return AuditReport.of(audits, options, run=", ".join(str(p) for p in paths))


def audit(
    paths: Annotated[list[Path], typer.Argument(
        help="Run folders, batch folders or folders of imported logs.")],
    fmt: Annotated[Literal["table", "md", "json"], typer.Option(
        "--format", help="table (terminal), md or json.")] = "table",
    words: Annotated[int, typer.Option(help="Passage length in words.")] = 10,
    chars: Annotated[int, typer.Option(help="Passage length in Chinese characters.")] = 14,
    passages: Annotated[int, typer.Option(help="Leaked passages that flag a call.")] = 3,
    worst: Annotated[int, typer.Option(help="Flagged calls listed with their passage.")] = 10,
    script: Annotated[str | None, typer.Option(
        help="The script every run was played on (default: each run folder's own copy).")
    ] = None,
) -> None:
    """Find seat prompts holding another character's private text, or the truth, that the
    seat could not know when the call was made (docs/isolation.md)."""
    try:
        options = AuditOptions(words=words, chars=chars, passages=passages, worst=worst)
        report = audit_paths(paths, options, script)
    except (AuditInputError, ValidationError) as exc:
        message = str(exc).splitlines()[0] if isinstance(exc, AuditInputError) else \
            f"options: {exc.errors()[0]['loc'][0]}: {exc.errors()[0]['msg']}"
        raise fail(message) from None
    if fmt == "json":
        typer.echo(report.model_dump_json(indent=2))
    elif fmt == "md":
        typer.echo("\n".join(markdown_table(t) for t in report.tables()))
    else:
        for table in report.tables():
            console.print(rich_table(table))
    raise typer.Exit(1 if report.flagged else 0)
