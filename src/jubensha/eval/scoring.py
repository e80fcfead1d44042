"""Internal.

Scoring one run with several metrics, as ``jubensha eval all`` and a batch both do.

Each metric is skipped (its models not given, or it does not apply: the reason is kept),
computed, or failed: an error the caller's policy catches, or answers that mostly failed
(``eval.failure``: no number from failure). A scored result names how it was scored (its
judge, grading and reading: ``Scoring``) and goes to ``RUN_DIR/eval/<metric>.json``; every
metric's status, with the share of its answers that failed, goes to ``eval/all.json``
(``EvalSummary``). The callers differ only in which errors a metric may fail with without
stopping them (``catch``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from jubensha.eval.failure import MAX_FAILED, AnswerTally, tallied
from jubensha.eval.judge import EVAL_CALLS, EvalError, EvalSession
from jubensha.eval.registry import MetricContext, MetricSpec
from jubensha.eval.report import MetricResult, ResultTable, Scoring
from jubensha.llm.base import Embedder, Model, ModelError
from jubensha.llm.calls import read_calls
from jubensha.outdir import write_whole
from jubensha.runlog.folder import RunLog
from jubensha.scripts.io import ScriptError
from jubensha.scripts.model import Script

SUMMARY = "all"
"""``eval/all.json``: what happened to each metric."""
EXPECTED_ERRORS: tuple[type[Exception], ...] = (EvalError, ModelError, ScriptError, KeyError,
                                                ValueError)
"""What a metric may fail with on a run it applies to (``jubensha eval all``: any other
error is a bug and stops the command)."""


class MetricStatus(BaseModel):
    metric: str
    status: Literal["scored", "skipped", "failed"]
    note: str = ""
    answers: int = Field(0, description="Answers the metric read (judge verdicts, post-game "
                         "answers, ballots, ratings).")
    failed_answers: int = Field(0, description="Of those, the answers that failed.")

    def failure_share(self) -> str:
        """``3/30`` answers failed; "" when the metric read no answer."""
        return f"{self.failed_answers}/{self.answers}" if self.answers else ""


class EvalSummary(MetricResult):
    """What ``jubensha eval all`` did with one run: each metric scored, skipped (and why)
    or failed (and how), and the model calls the evaluation made, by purpose."""

    metric: str = "all"
    statuses: list[MetricStatus]
    calls: dict[str, int] = Field(default_factory=dict)
    cached: int = 0
    """Of those calls, how many the run's reply cache answered (no model was asked)."""

    def tables(self) -> list[ResultTable]:
        rows = [[s.metric, s.status, s.failure_share(), s.note] for s in self.statuses]
        calls = ", ".join(f"{purpose or '-'} {n}" for purpose, n in sorted(self.calls.items()))
        return [ResultTable(title=f"Evaluation of {Path(self.run).name}",
                            columns=["metric", "status", "failed_answers", "note"],
                            rows=rows,
                            notes=[f"model calls: {sum(self.calls.values())}"
                                   + (f" ({calls})" if calls else "")
                                   + (f", {self.cached} from the cache" if self.cached else "")])]


def skip_reason(spec: MetricSpec, script: Script, run: RunLog, judge: Model | None,
                embedder: Embedder | None) -> str | None:
    """Why ``all`` does not run ``spec`` on this run, or None."""
    if "judge" in spec.needs and judge is None:
        return "needs --judge MODEL"
    if "embedder" in spec.needs and embedder is None:
        return "needs --embedder"
    return spec.applies(script, run) if spec.applies else None


def preset_of(run: RunLog) -> str | None:
    """The paper preset the game was played with (meta.json's ``options.preset``)."""
    preset = run.meta.options.get("preset") if run.meta else None
    name = preset.get("name") if isinstance(preset, dict) else None
    return name if isinstance(name, str) and name else None


def unjudged(specs: Iterable[MetricSpec], run: RunLog, judge: Model | None) -> str | None:
    """Why ``specs`` may not score this run without a judge model: it was played with a
    paper's preset, and that paper scored one of them with a model judge (no silent
    substitution of a lexical judge under the paper's metric name); None otherwise."""
    preset = preset_of(run)
    judged = [spec for spec in specs if spec.judged_under(preset)]
    if judge is not None or preset is None or not judged:
        return None
    names = ", ".join(spec.name for spec in judged)
    return (f"{run.path}: played with preset {preset}, whose paper scored {names} with a model "
            f"judge ({judged[0].paper_judge}): pass --judge MODEL, or choose other metrics "
            "(--metric)")


def write_result(folder: Path, name: str, result: MetricResult) -> None:
    """Write ``<name>.json`` whole or not at all (a resumed batch takes a result file as
    done)."""
    write_whole(folder / f"{name}.json", result.model_dump_json(indent=2) + "\n")


def discard_result(folder: Path, name: str) -> None:
    """Remove an earlier ``<name>.json``: a re-score that failed leaves no score on disk
    that reads as this evaluation's (``all.json`` says it failed, and why)."""
    (folder / f"{name}.json").unlink(missing_ok=True)


def group_of(run: RunLog) -> str:
    """The run's group in tables over several runs: its language and architectures."""
    if run.meta is None:
        return ""
    architectures = sorted({seat.architecture for seat in run.meta.seats.values()})
    return " ".join([run.meta.language, "/".join(architectures)]).strip()


def scoring_of(result: MetricResult, tally: AnswerTally) -> Scoring:
    """How ``result`` was scored: the judge models it asked (else its own ``judge`` field,
    e.g. factual's "lexical"), its grading rule and its reading."""
    own = getattr(result, "judge", None)
    judge = ", ".join(sorted(tally.judges)) or (own if isinstance(own, str) and own else "none")
    grading = next((value for key in ("grading", "rule")  # whodunit-mcq calls it its rule
                    if isinstance(value := getattr(result, key, None), str)), "")
    reading = getattr(result, "reading", "")
    return Scoring(judge=judge, grading=grading,
                   reading=reading if isinstance(reading, str) else "",
                   answers=tally.asked, failed_answers=tally.failed)


async def score_one(spec: MetricSpec, context: MetricContext, max_failed: float = MAX_FAILED
                    ) -> tuple[MetricResult | None, MetricStatus]:
    """Compute one metric: its result named with how it was scored, or None and a failed
    status when more than ``max_failed`` of its answers failed (``eval.failure``)."""
    with tallied() as tally:
        result = await spec.compute(context)
    status = MetricStatus(metric=spec.name, status="scored", answers=tally.asked,
                          failed_answers=tally.failed)
    if problem := tally.problem(max_failed):
        return None, status.model_copy(update={"status": "failed",
                                               "note": f"{problem}: no score"})
    return result.model_copy(update={"scoring": scoring_of(result, tally)}), status


async def score_metrics(specs: Iterable[MetricSpec], script: Script, run: RunLog,
                        session: EvalSession, *, judge: Model | None,
                        embedder: Embedder | None, samples: int, options: dict[str, Any],
                        catch: tuple[type[Exception], ...], answerer: Model | None = None,
                        group: str | None = None, max_failed: float = MAX_FAILED,
                        seat_client: Callable[[str], Model] | None = None
                        ) -> tuple[list[MetricResult], list[MetricStatus]]:
    """Score ``run`` with each of ``specs`` in order; a metric raising one of ``catch`` is
    failed and the next one runs. The results carry ``group`` when given; their model calls
    go to ``session``; the seats answer with ``seat_client(spec)`` when given
    (``MetricContext.seat_client``)."""
    results: list[MetricResult] = []
    statuses = []
    for spec in specs:
        reason = skip_reason(spec, script, run, judge, embedder)
        if reason:
            statuses.append(MetricStatus(metric=spec.name, status="skipped", note=reason))
            continue
        context = MetricContext(script=script, run=run, judge=judge, embedder=embedder,
                                samples=samples, options=dict(options), calls=session.calls,
                                cache=session.cache, answerer=answerer,
                                seat_client=seat_client)
        try:
            result, status = await score_one(spec, context, max_failed)
        except catch as exc:
            discard_result(session.folder, spec.name)
            statuses.append(MetricStatus(metric=spec.name, status="failed",
                                         note=f"{type(exc).__name__}: {exc}"))
            continue
        statuses.append(status)
        if result is None:
            discard_result(session.folder, spec.name)
            continue
        if group is not None:
            result = result.model_copy(update={"group": group})
        write_result(session.folder, spec.name, result)
        results.append(result)
    return results, statuses


def write_summary(session: EvalSession, run: str, statuses: list[MetricStatus],
                  first_call: int | None = None) -> EvalSummary:
    """Write ``eval/all.json``: the statuses, and the evaluation's model calls by purpose
    (those numbered ``first_call`` on; every one when None)."""
    path = session.folder / EVAL_CALLS
    made = [r for r in read_calls(path) if first_call is None or r.index >= first_call] \
        if path.is_file() else []
    summary = EvalSummary(run=run, statuses=statuses,
                          calls=dict(Counter(r.purpose for r in made)),
                          cached=sum(r.origin == "cache" for r in made))
    write_result(session.folder, SUMMARY, summary)
    return summary
