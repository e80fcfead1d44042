"""Internal.

`jubensha eval wellplay-reference` and `jubensha eval factual-questions`: the
post-game metrics' commands that need no run folder (registered in ``eval.commands``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from jubensha.eval.cli_helpers import console, emit, load_reference_script, read_options
from jubensha.eval.factual import FactualOptions, with_generated
from jubensha.eval.judge import EvalSession, open_session
from jubensha.eval.report import Format
from jubensha.eval.wellplay_game import WellPlayOptions, WellPlayResult, score_reference
from jubensha.jobs import model_job
from jubensha.llm.base import Model
from jubensha.llm.calls import OnCall, SeatModel
from jubensha.llm.registry import DEFAULT_SPEC, ModelSpecError, parse_model_spec
from jubensha.llm.wrappers import CachedModel
from jubensha.scripts.io import ScriptError, save_script
from jubensha.terminal import fail

LogDir = Annotated[Path | None, typer.Option(
    "--log-dir", help="Keep the model calls and their cache in DIR/eval/ (calls.jsonl, "
                      "cache.sqlite); default: not kept.")]


def _logged(client: Model, session: EvalSession | None) -> Model:
    if session is None:
        return client
    return SeatModel(CachedModel(client, session.cache), session.calls)


def wellplay_reference(
    scripts: Annotated[list[str], typer.Argument(
        help="Script(s): bundled id, script file, or WellPlay folder.")],
    answerer: Annotated[Literal["ssa", "fsa"], typer.Option(
        help="ssa: each character's own script (lower reference); fsa: every script "
             "(upper reference).")] = "ssa",
    model: Annotated[str, typer.Option(help="The model that answers.")] = DEFAULT_SPEC,
    samples: Annotated[int, typer.Option(min=1, help="Passes (answers per question).")] = 3,
    options: Annotated[Path | None, typer.Option(
        "--options", help="YAML/JSON file whose 'wellplay' entry sets the options.")] = None,
    log_dir: LogDir = None,
    fmt: Annotated[Format, typer.Option("--format", help="table, markdown or json.")] = "table",
    out: Annotated[Path | None, typer.Option("--out", help="Also write the JSON here.")] = None,
) -> None:
    """WellPlay's ssa or fsa reference on scripts, with no game: per script, and weighted
    across scripts (PLAYER* section 3, appendix C.6.3)."""
    settings = WellPlayOptions.model_validate(read_options(options).get("wellplay", {}))
    try:
        loaded = [load_reference_script(source) for source in scripts]
        client = parse_model_spec(model)
    except (ScriptError, ModelSpecError) as exc:
        raise fail(str(exc)) from None

    async def score_all(on_call: OnCall) -> list[WellPlayResult]:
        session = open_session(log_dir, on_call) if log_dir else None
        tagged = _logged(client, session)
        try:
            return [await score_reference(script, answerer, tagged, samples=samples,
                                          options=settings) for script in loaded]
        finally:
            await client.aclose()
            if session is not None:
                session.close()

    results = model_job(score_all, title="wellplay reference")
    emit([r.model_copy(update={"run": r.script}) for r in results], fmt, out)


def factual_questions(
    script: Annotated[str, typer.Argument(help="Bundled id, script file, or WellPlay folder.")],
    judge: Annotated[str, typer.Option(help="The model that writes the questions.")],
    out: Annotated[Path, typer.Option("--out", help="Where to save the script copy (YAML).")],
    options: Annotated[Path | None, typer.Option(
        "--options", help="YAML/JSON file whose 'factual' entry sets the options.")] = None,
    log_dir: LogDir = None,
) -> None:
    """Write a copy of SCRIPT whose characters without factual questions get generated ones
    (ThinkThrice appendix H): play or evaluate with the copy to reuse them."""
    settings = FactualOptions.model_validate(read_options(options).get("factual", {}))
    try:
        source = load_reference_script(script)
        client = parse_model_spec(judge)
    except (ScriptError, ModelSpecError) as exc:
        raise fail(str(exc)) from None

    async def generate(on_call: OnCall) -> int:
        session = open_session(log_dir, on_call) if log_dir else None
        try:
            copy = await with_generated(source, _logged(client, session), settings)
        finally:
            await client.aclose()
            if session is not None:
                session.close()
        save_script(copy, out)
        return len(copy.questions.factual) - len(source.questions.factual)

    made = model_job(generate, title="factual questions")
    console.print(f"{made} factual questions generated; script saved to {out}")
