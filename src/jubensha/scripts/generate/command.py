"""``jubensha scripts generate``: write fresh mysteries, each proved to have one solution."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Literal

import typer

SHOWN = 20
"""Scripts listed one per row; a larger batch prints only its summary."""
MIN_PLAYERS, MAX_PLAYERS, MAX_ACTS, MAX_COUNT = 3, 10, 3, 100_000
"""The limits of ``generate.build`` and ``generate.batch``, here so that ``scripts --help``
and the other scripts commands need not import the generator (a test holds them equal)."""
Languages = Literal["en", "zh", "both"]
Level = Literal["easy", "medium", "hard"]


def generate_command(
    players: Annotated[int, typer.Option(
        "--players", "-n", min=MIN_PLAYERS, max=MAX_PLAYERS, help="Characters at the table.")
    ] = 5,
    acts: Annotated[int, typer.Option("--acts", "-k", min=1, max=MAX_ACTS,
                                      help="Acts the clues and sheets are dealt over.")] = 1,
    difficulty: Annotated[Level, typer.Option(
        "--difficulty", "-d", help="easy, medium or hard (docs/generated.md).")] = "medium",
    lang: Annotated[Languages, typer.Option(
        "--lang", help="en, zh, or both (the same mystery in each).")] = "en",
    seed: Annotated[int, typer.Option("--seed", "-s", min=0, help="The first seed.")] = 0,
    count: Annotated[int, typer.Option("--count", "-c", min=1, max=MAX_COUNT,
                                       help="Mysteries, one per seed from --seed on.")] = 1,
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder to write them to, one "
                                      "folder per script; new or empty.")] = Path("generated"),
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Empty a folder this command wrote before.")] = False,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, max=64,
                                      help="Processes that generate at once.")] = 1,
    model: Annotated[str | None, typer.Option(
        "--model", "-m", help="Rewrite each character's story with this model (e.g. "
        "openai:gpt-4o-mini); a story whose facts do not survive keeps the template's.")
    ] = None,
) -> None:
    """Generate murder mysteries whose unique solution is proved: native scripts that play
    in every procedure, in English, Chinese or both (the same mystery for one seed)."""
    from rich.table import Table

    from jubensha.llm.registry import ModelSpecError, parse_model_spec
    from jubensha.outdir import OutError, prepare_out
    from jubensha.scripts.generate.batch import MANIFEST, not_generated, requests, write_all
    from jubensha.scripts.generate.build import GenerationError
    from jubensha.scripts.generate.rewrite import Rewriter
    from jubensha.terminal import Terminal

    console = Terminal()
    try:
        rewriter = Rewriter(parse_model_spec(model)) if model else None
        prepare_out(out, overwrite=overwrite, markers=[MANIFEST], owns=not_generated)
    except (OutError, ModelSpecError) as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(code=1) from None
    table = Table("id", "title", "players", "acts", "seed")
    started = time.perf_counter()
    written = 0
    try:
        for entry in write_all(requests(seed, count, players, acts, difficulty), lang, out,
                               jobs, rewriter):
            written += 1
            table.add_row(*(str(entry[key]) for key in ("id", "title", "players", "acts",
                                                        "seed")))
    except GenerationError as exc:
        typer.echo(f"{out}: (generate): {exc}", err=True)
        raise typer.Exit(code=1) from None
    seconds = time.perf_counter() - started
    if written <= SHOWN:
        console.print(table)
    scripts = f"{written} script{'' if written == 1 else 's'}"
    mysteries = f"{count} {difficulty} myster{'y' if count == 1 else 'ies'}"
    typer.echo(f"wrote {scripts} of {mysteries} to {out} in {seconds:.1f} s "
               f"({count / seconds:.1f} per second); list: {out / MANIFEST}")
    if rewriter is not None:
        tally = rewriter.tally
        reasons = "; ".join(f"{reason}: {n}" for reason, n in tally.reasons.most_common())
        typer.echo(f"{model} rewrote {tally.kept} stories; {tally.refused} kept the template's"
                   + (f" ({reasons})" if reasons else ""))
