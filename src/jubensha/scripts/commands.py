"""`jubensha scripts ...`: list, show, validate, import and export the schema of mysteries.

Every command reports a bad script as ``file: field: problem`` lines and a non-zero exit
code; none lets a traceback through. The script model is imported by the commands that
read a script, when they run: `list` and `validate` read the bundled scripts' index
(``bundled_index``) and load only a script it does not hold as it is.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from jubensha.scripts.bundled_index import bundled_scripts, fresh_entries
from jubensha.scripts.export.command import export_command
from jubensha.scripts.generate.command import generate_command
from jubensha.scripts.importers import IMPORTERS
from jubensha.terminal import Terminal, fail, printable

if TYPE_CHECKING:
    from jubensha.scripts.io import ScriptError
    from jubensha.scripts.model import Derivation, Script
    from jubensha.scripts.validation import Problem

app = typer.Typer(help="List, show, validate, import, generate and export mystery scripts.",
                  no_args_is_help=True)
console = Terminal()


def _problem_lines(source: str, problems: list[Problem], err: bool = False) -> None:
    """One plain line per problem (no wrapping or markup, so it can be grepped); on stderr
    an error line starts with "error: " as every command's does."""
    for problem in problems:
        line = printable(problem.shown(source))  # cut: a value may be 70,000 long
        typer.echo(f"error: {line}" if err and problem.severity == "error" else line, err=err)


def _fail(exc: ScriptError) -> typer.Exit:
    """The script could not be read: its problems on stderr, exit code 2."""
    _problem_lines(exc.source, exc.problems, err=True)
    return typer.Exit(code=2)


@app.command("list")
def list_scripts() -> None:
    """List the bundled mysteries."""
    table = Table("id", "title", "language", "players")
    folders = bundled_scripts()
    for script_id, entry in fresh_entries().items():
        if entry is None:  # not as the index holds it: read it
            from jubensha.scripts.io import load_script

            script = load_script(folders[script_id])
            table.add_row(script_id, script.title, script.language, str(len(script.characters)))
        else:
            table.add_row(script_id, entry.title, entry.language, str(entry.players))
    console.print(table)


@app.command("show")
def show(name: Annotated[str, typer.Argument(help="A bundled script id, or a script file or "
                                             "folder.")],
         full: Annotated[bool, typer.Option("--full", help="With --truth: print the texts "
                                            "too, the character sheets among them.")] = False,
         truth: Annotated[bool, typer.Option(
             "--truth", help="Reveal the solution: sides, murderers, the truth, and how an "
             "importer derived them (spoilers).")] = False,
         ) -> None:
    """Show a mystery as a player reads it: the story, the rules, the dead, the people and
    the clue cards, never a sheet or the solution (--truth: a summary with who did it and
    how that was derived)."""
    from jubensha.scripts.bundled import find_script
    from jubensha.scripts.io import ScriptError
    from jubensha.scripts.proof.explain import proof_lines

    try:
        script = find_script(name)
    except ScriptError as exc:
        raise _fail(exc) from None
    say = partial(console.print, highlight=False, markup=False, soft_wrap=True)
    where = f"({script.id}, {script.language}, source: {script.metadata.source})"
    if not truth:
        from jubensha.scripts.export.casebook import player_view  # templates: when shown

        say(player_view(script))
        say(f"{where} {_question_summary(script)}")
        say("(the solution is hidden; --truth shows it)")
        say(f"({len(script.characters)} character sheets hidden: a murderer's sheet gives the "
            "solution away; --truth shows them)")
        return
    console.print(Text(script.title, style="bold") + Text(f"  {where}"), highlight=False)
    console.print(_cast_table(script))
    say(f"victims: {', '.join(v.name for v in script.victims) or 'none'}")
    say(f"murderers: {', '.join(script.murderers) or 'unknown (the script has no truth)'}")
    say(f"acts: {len(script.acts)}  " + "  ".join(
        f"{a.number}. {a.title}" for a in script.acts if a.title))
    say(_clue_summary(script))
    say(_question_summary(script))
    for note in script.metadata.notes:  # authors' and importers' notes may tell the solution
        say(f"note: {note}")
    for found in script.metadata.derivations:
        for line in derivation_lines(found):
            say(line)
    if script.truth is not None and script.truth.proof is not None:
        for line in proof_lines(script.truth.proof):
            say(line)
    if full:
        _print_texts(script)


_ORIGINS = {"text": "derived from the texts", "field": "stated by a field of the source",
            "file": "from a truth file the user supplied", "release": "the release's own code"}


def derivation_lines(found: Derivation) -> list[str]:
    """Where one fact of the truth came from: a truth file, a field of the source, the
    release's code, or the texts (with the confidence and the candidates weighed)."""
    sure = f", confidence {found.confidence:.2f}" if found.confidence is not None else ""
    used = f" — overridden by {found.overridden_by}" if found.overridden_by else ""
    head = f"{found.fact}: {', '.join(found.value) or 'none'}"
    lines = [f"{head} ({_ORIGINS[found.origin]}, {found.source}{sure}){used}"]
    if found.evidence:
        lines.append(f"  evidence ({found.method}): {found.evidence}")
    lines += [f"  candidate {c.name}: score {c.score:g}, confidence {c.confidence:.2f}"
              + (" (derived)" if c.derived else "")
              + (f"; also called {', '.join(c.aliases)}" if c.aliases else "")
              for c in found.candidates]
    return lines


def undecided_lines(script: Script) -> list[str]:
    """A line for each fact of the truth the texts name candidates for but do not settle:
    nothing was derived, and a truth file can say who."""
    return [f"{found.fact}: none derived, the texts do not make it clear (confidence "
            f"{found.confidence or 0:.2f}); candidates: "
            + ", ".join(f"{c.name} ({c.score:g})" for c in found.candidates)
            + "; a truth.yaml beside the source (or --truth FILE) can say who"
            for found in script.metadata.derivations
            if found.origin == "text" and not found.value and found.candidates
            and not found.overridden_by]


def _cast_table(script: Script) -> Table:
    table = Table("character", "side", "also called", "relationships", "acts")
    for c in script.characters:
        cells = [c.name, c.side, ", ".join(c.aliases), str(len(c.relationships)),
                 str(len(c.acts))]
        table.add_row(*(Text(cell) for cell in cells))
    return table


def _clue_summary(script: Script) -> str:
    from jubensha.scripts.model import PUBLIC

    public = sum(c.holder == PUBLIC and not c.location for c in script.clues)
    located = sum(bool(c.location) for c in script.clues)
    held = sum(c.holder != PUBLIC for c in script.clues)
    images = sum(bool(c.image) for c in script.clues)
    return (f"clues: {len(script.clues)} ({public} public, {held} held by a character, "
            f"{located} at {len(script.locations)} locations, {images} images)")


def _question_summary(script: Script) -> str:
    sets = Counter(q.set for q in script.questions.choice)
    categories = Counter(q.category for q in script.questions.choice if q.category)
    parts = [f"{n} {name}" for name, n in sets.items()]
    if categories:
        parts.append("categories " + ", ".join(f"{k} {v}" for k, v in categories.items()))
    return (f"questions: {len(script.questions.choice)} choice"
            + (f" ({'; '.join(parts)})" if parts else "")
            + f", {len(script.questions.factual)} factual, {len(script.questions.open)} open")


def _print_texts(script: Script) -> None:
    """Every text of the script, the characters' sheets and the truth among them."""
    sections = [("background", script.background), ("rules", script.rules)]
    sections += [(f"act {a.number}", a.public_text) for a in script.acts]
    for c in script.characters:
        sections += [(f"{c.name}: mission", c.mission), (f"{c.name}: story", c.story)]
        sections += [(f"{c.name}: act {s.act}", s.text) for s in c.acts]
    if script.truth is not None:
        sections.append(("truth", script.truth.narrative))
    for title, text in sections:
        if text.strip():
            console.rule(Text(title))
            console.print(text, markup=False, highlight=False)


@app.command("validate")
def validate_command(names: Annotated[list[str] | None, typer.Argument(
        help="Bundled script ids, script files or folders (a folder of script folders too) "
             "(default: every bundled mystery).")] = None) -> None:
    """Check native scripts; print every problem as a "file: field: message" line."""
    bundled = bundled_scripts()
    indexed = {bundled[script_id]: entry for script_id, entry in fresh_entries().items()}
    errors = warnings = checked = 0
    for path in [_location(name) for name in names] if names else list(bundled.values()):
        for target in [path] if path in indexed else _script_targets(path):
            entry = indexed.get(target)
            found = _checked(target) if entry is None else [
                (severity, f"{target / 'script.yaml'}: {line}")
                for severity, line in entry.problems]
            checked += 1
            for _, line in found:
                typer.echo(printable(line))
            errors += sum(severity == "error" for severity, _ in found)
            warnings += sum(severity == "warning" for severity, _ in found)
    typer.echo(f"{checked} script(s): {errors} error(s), {warnings} warning(s)")
    if errors:
        raise typer.Exit(code=1)


def _location(name: str) -> Path:
    """A bundled id's folder, read from no script; else ``script_location``'s answer (exit
    code 2 when there is none)."""
    bundled = bundled_scripts()
    if name in bundled:
        return bundled[name]
    from jubensha.scripts.bundled import script_location
    from jubensha.scripts.io import ScriptError

    try:
        return script_location(name)
    except ScriptError as exc:
        raise _fail(exc) from None


def _script_targets(path: Path) -> list[Path]:
    """``scripts.io.script_targets``, imported only for a path the index does not hold."""
    from jubensha.scripts.io import script_targets

    return script_targets(path)


def _checked(target: Path) -> list[tuple[str, str]]:
    """(severity, line) of every problem of the script at ``target``, checked now."""
    from jubensha.scripts.io import check_script

    _, report, source = check_script(target)
    return [(p.severity, p.shown(source)) for p in report.problems]


@app.command("import")
def import_command(
    fmt: Annotated[str, typer.Argument(metavar="FORMAT",
                                       help=f"One of: {', '.join(IMPORTERS)}.")],
    src: Annotated[Path, typer.Argument(help="The source script (or, with --all, a dataset).")],
    dest: Annotated[Path, typer.Argument(help="Folder to write script.yaml (and images) to; "
                                         "new or empty.")],
    all_: Annotated[bool, typer.Option("--all", help="Import every script found under SRC, "
                                       "one folder per script in DEST.")] = False,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Empty a destination folder that holds a script first.")] = False,
    truth: Annotated[Path | None, typer.Option(
        "--truth", metavar="FILE", help="A truth file (murderers, victims...) that overrides "
        "what the importer derives; without it, a truth.yaml beside the source is used. "
        "See docs/script-format.md.")] = None,
) -> None:
    """Convert scripts of a public dataset format to the native YAML. Problems, and the
    warnings of each imported script, go to stderr as "file: field: problem" lines; exit 2
    when nothing could be imported."""
    from jubensha.scripts.importers import discover
    from jubensha.scripts.io import ScriptError

    if truth is not None and all_:
        raise fail(f"{truth}: (option): --truth names the truth of one script; with --all, "
                     "put a truth.yaml beside each script instead")
    try:
        sources = discover(fmt, src) if all_ else [src]
    except ScriptError as exc:
        _problem_lines(exc.source, exc.problems, err=True)
        raise typer.Exit(code=2) from None
    if all_ and not sources:
        raise fail(f"{src}: (folder): no {fmt} scripts found")
    table = Table("id", "title", "players", "questions", "warnings")
    failures = sum(not _import_one(fmt, source, dest, all_, overwrite, truth, table)
                   for source in sources)
    if table.row_count:
        console.print(table)
    if failures == len(sources):
        raise typer.Exit(code=2)
    typer.echo(f"imported {len(sources) - failures} of {len(sources)} script(s) to {dest}")
    if failures:
        raise typer.Exit(code=1)


def _import_one(fmt: str, source: Path, dest: Path, all_: bool, overwrite: bool,
                truth: Path | None, table: Table) -> bool:
    """Import the script at ``source`` into ``dest`` (a folder of its own below it with
    ``all_``), its row added to ``table``; False when it failed (said on stderr)."""
    from jubensha.outdir import OutError, prepare_out
    from jubensha.scripts.importers import copy_assets, import_script
    from jubensha.scripts.io import SCRIPT_FILENAMES, ScriptError, save_script
    from jubensha.scripts.validation import validate

    try:
        script = import_script(fmt, source, truth)
        target = dest / script.id if all_ else dest
        prepare_out(target, overwrite=overwrite, markers=SCRIPT_FILENAMES,
                    inputs=[source], option="destination")
        written = save_script(script, target)
        copy_assets(script, source, written.parent)
    except ScriptError as exc:
        _problem_lines(exc.source, exc.problems, err=True)
        return False
    except OutError as exc:
        typer.echo(f"error: {exc}", err=True)
        return False
    except OSError as exc:
        typer.echo(f"error: {source}: (write): {exc}", err=True)
        return False
    for line in undecided_lines(script):
        typer.echo(f"{source}: {line}", err=True)
    report = validate(script)
    _problem_lines(str(written), report.problems, err=True)
    table.add_row(script.id, script.title, str(len(script.characters)),
                  str(len(script.questions.choice)), str(len(report.warnings)))
    return not report.errors


@app.command("schema")
def schema(out: Annotated[Path | None, typer.Option("--out", help="Write to this file.")]
           = None) -> None:
    """Print the JSON Schema of the native script format."""
    from jubensha.scripts.model import Script

    text = json.dumps(Script.model_json_schema(), indent=2, ensure_ascii=False)
    if out is None:
        typer.echo(text)
        return
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        raise fail(f"{out}: (write): {exc}") from None
    typer.echo(f"wrote {out}")


@app.command("caption")
def caption_command(
    script: Annotated[str, typer.Argument(
        help="A bundled script id, or a script file or folder (native YAML).")],
    model: Annotated[str | None, typer.Option(
        "--model", "-m", help="Describe cards with this vision model (e.g. openai:gpt-4o) "
        "instead of OCR.")] = None,
    languages: Annotated[str | None, typer.Option(
        "--ocr-lang", help="Tesseract languages (default: chi_sim+eng for Chinese scripts, "
        "eng for English).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Caption cards that have one.")
                     ] = False,
) -> None:
    """Caption the image clue cards of a script (OCR, or a vision model) and save them in
    the script, so text-only models can use the cards."""
    from jubensha.scripts.caption import caption_file  # models and OCR: only when used
    from jubensha.scripts.io import ScriptError

    try:
        file, done, images, source = caption_file(script, model, languages, force)
    except ScriptError as exc:
        raise fail("; ".join(printable(p.render(exc.source)) for p in exc.problems)) from None
    typer.echo(f"{file}: captioned {len(done)} of {images} image clue(s) by {source}"
               + ("" if done else " (all had captions; --force redoes)"))


app.command("generate")(generate_command)
app.command("export")(export_command)
