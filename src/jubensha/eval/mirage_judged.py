"""Internal.

The two MIRAGE metrics a judge computes: LLM-Score (a judge rates each seat's five
abilities, MPIRD-LLMA table 20; the release's ``llms_eval``) and the script reconstruction
compared by ROUGE-L with the character's script (table 21; ``rouge_eval``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, cast

from pydantic import BaseModel, Field, create_model

from jubensha.eval.judge import EvalError, JudgeFailure, ask, clip, judge_of, judge_request
from jubensha.eval.mirage_reading import (
    ABILITIES,
    ICI_ABILITIES,
    JUDGE_RECONSTRUCT,
    JUDGE_SCORE,
    MAX_ABILITY,
    PARTS,
    Ability,
    Reading,
    failure_notes,
    held_clues,
    history_lines,
    mean,
    options_of,
    reading_notes,
    render_lines,
    script_parts,
    seats_of,
    truth_text,
)
from jubensha.eval.registry import MetricContext
from jubensha.eval.report import MetricResult, ResultTable, number
from jubensha.eval.text import release_rouge, rouge_l
from jubensha.scripts.importers.mirage_release import RELEASE_PART_KEY
from jubensha.scripts.model import Script


# -- LLM-Score -------------------------------------------------------------------------------
class SeatScores(BaseModel):
    """A seat's ability scores (0-20 each; None where the judge gave no valid score)."""

    scores: dict[Ability, int | None]
    reasons: dict[str, str] = Field(default_factory=dict)

    @property
    def total(self) -> int | None:
        """LLM-Score: the sum of the five abilities (0-100); None if one is missing."""
        values = [self.scores.get(a) for a in ABILITIES]
        return None if any(v is None for v in values) else sum(v or 0 for v in values)

    @property
    def ici(self) -> float | None:
        """(reasoning + communication + observation + thinking) / 80."""
        values = [self.scores.get(a) for a in ICI_ABILITIES]
        if any(v is None for v in values):
            return None
        return sum(v or 0 for v in values) / (MAX_ABILITY * len(ICI_ABILITIES))


class LLMScore(MetricResult):
    metric: str = "mirage-llm-score"
    seats: dict[str, SeatScores]
    failures: list[JudgeFailure] = Field(default_factory=list)

    @property
    def llm_score(self) -> float | None:
        return mean(s.total for s in self.seats.values())

    def tables(self) -> list[ResultTable]:
        rows = [[seat, *(str(s.scores.get(a)) if s.scores.get(a) is not None else "–"
                         for a in ABILITIES), str(s.total) if s.total is not None else "–"]
                for seat, s in self.seats.items()]
        rows.append(["mean", *(number(mean(s.scores.get(a) for s in self.seats.values()), 1)
                               for a in ABILITIES), number(self.llm_score, 1)])
        return [ResultTable(title="LLM-Score (judge, 0-20 per ability)",
                            columns=["seat", "role-play", "reasoning", "communication",
                                     "observation", "thinking", "LLM-Score"],
                            rows=rows, notes=failure_notes(self.failures))]


def score_schema(abilities: Sequence[Ability]) -> type[BaseModel]:
    """``reason`` then one 0-20 integer per ability (out-of-range values do not validate)."""
    fields: dict[str, Any] = {"reason": (str, Field(description="Step-by-step assessment."))}
    for ability in abilities:
        fields[ability] = (int, Field(ge=0, le=MAX_ABILITY))
    return create_model("AbilityScores", **fields)


async def llm_scores(context: MetricContext, seats: Sequence[str] | None = None) -> LLMScore:
    """Every seat rated by the judge on the five abilities."""
    options = options_of(context)
    judge = judge_of(context, "mirage-llm-score")
    script, lang = context.script, context.script.language
    lines = history_lines(context.run.events)
    history = clip(render_lines(lines, lang), options.history_tokens)
    groups: list[tuple[Ability, ...]] = ([(a,) for a in ABILITIES]
                                         if options.score_calls == "per_ability" else [ABILITIES])
    result = LLMScore(run=str(context.run.path), seats={})
    for seat in seats or seats_of(context):
        character = script.character(seat)
        values: dict[str, Any] = {
            "player": seat, "history": history, "names": script.names,
            "actions": render_lines([x for x in lines if x.actor == seat], lang),
            "script": clip("\n\n".join(script_parts(character).values()),
                           options.script_tokens),
            "clues": held_clues(script, seat), "truth": truth_text(script)}
        scores: dict[Ability, int | None] = dict.fromkeys(ABILITIES)
        reasons: dict[str, str] = {}
        for group in groups:
            item = "+".join(group) if len(group) > 1 else group[0]
            request = judge_request("mirage_score", lang, purpose=JUDGE_SCORE,
                                    seat=seat, abilities=list(group), **values)
            judged = await ask(judge, request, score_schema(group), item=item,
                               attempts=options.attempts, lang=lang)
            if judged.value is None:
                assert judged.failure is not None
                result.failures.append(judged.failure)
                continue
            reasons[item] = cast(Any, judged.value).reason  # a schema made at run time
            for ability in group:
                scores[ability] = getattr(judged.value, ability)
        result.seats[seat] = SeatScores(scores=scores, reasons=reasons)
    return result


# -- ROUGE-L reconstruction ------------------------------------------------------------------
class PartScore(BaseModel):
    reconstruction: str
    precision: float
    recall: float
    fmeasure: float


class SeatReconstruction(BaseModel):
    parts: dict[str, PartScore]

    @property
    def rouge(self) -> float | None:
        """The mean ROUGE-L F over the parts reconstructed."""
        return mean(p.fmeasure for p in self.parts.values())


class Reconstruction(MetricResult):
    metric: str = "mirage-rouge"
    method: Literal["judge", "extractive"]
    seats: dict[str, SeatReconstruction]
    failures: list[JudgeFailure] = Field(default_factory=list)
    reading: Reading = "ours"

    @property
    def rouge(self) -> float | None:
        return mean(s.rouge for s in self.seats.values())

    def tables(self) -> list[ResultTable]:
        rows = [[seat, str(len(s.parts)), number(mean(p.precision for p in s.parts.values())),
                 number(mean(p.recall for p in s.parts.values())), number(s.rouge)]
                for seat, s in self.seats.items()]
        rows.append(["mean", "", "", "", number(self.rouge)])
        how = ("a judge reconstructed each script part from the history and the seat's "
               "actions" if self.method == "judge" else
               "extractive: the seat's own statements stand for the reconstruction (no judge)")
        return [ResultTable(title="ROUGE-L of the reconstructed script",
                            columns=["seat", "parts", "precision", "recall", "ROUGE-L F"],
                            rows=rows, notes=[how, *failure_notes(self.failures),
                                              *reading_notes(self.reading)])]


class ScriptText(BaseModel):
    reasoning: str = Field(description="How the script was inferred.")
    script: str = Field(min_length=1, description="The reconstructed script text.")


def reconstruction_method(context: MetricContext) -> Literal["judge", "extractive"]:
    chosen = options_of(context).reconstruction
    if chosen == "auto":
        return "judge" if context.judge is not None else "extractive"
    return chosen


async def reconstructions(context: MetricContext, seats: Sequence[str] | None = None
                          ) -> Reconstruction:
    """Each seat's script reconstructed (per part by default) and compared by ROUGE-L F."""
    options = options_of(context)
    method = reconstruction_method(context)
    script, lang = context.script, context.script.language
    lines = history_lines(context.run.events)
    history = clip(render_lines(lines, lang), options.history_tokens)
    result = Reconstruction(run=str(context.run.path), method=method, seats={},
                            reading=options.reading)
    judge = judge_of(context, "mirage-rouge") if method == "judge" else None
    for seat in seats or seats_of(context):
        own = [x for x in lines if x.actor == seat]
        parts = reference_parts(script, seat, options.reading)
        if not options.per_part:
            parts = {"whole": "\n\n".join(text for text in parts.values() if text)}
        scored: dict[str, PartScore] = {}
        for part, reference in parts.items():
            if not reference:  # the release reading scores an empty part 0
                scored[part] = PartScore(reconstruction="", precision=0.0, recall=0.0,
                                         fmeasure=0.0)
                continue
            if judge is None:
                text = "\n".join(x.text for x in own if x.text)
            else:
                request = judge_request(
                    "mirage_reconstruct", lang, purpose=JUDGE_RECONSTRUCT, seat=seat,
                    player=seat, history=history, actions=render_lines(own, lang),
                    names=script.names, part=part)
                judged = await ask(judge, request, ScriptText, item=part,
                                   attempts=options.attempts, lang=lang)
                if judged.value is None:
                    assert judged.failure is not None
                    result.failures.append(judged.failure)
                    continue
                text = judged.value.script
            prf = (release_rouge(text, reference) if options.reading == "release"
                   else rouge_l(text, reference))
            scored[part] = PartScore(reconstruction=text, precision=prf.precision,
                                     recall=prf.recall, fmeasure=prf.fmeasure)
        result.seats[seat] = SeatReconstruction(parts=scored)
    return result


def reference_parts(script: Script, seat: str, reading: Reading) -> dict[str, str]:
    """The texts a seat's reconstructions are compared with. Ours: the character's
    non-empty parts. Release: all six parts, empty ones included (they score 0), as the
    release held them at the end of the game: the texts the importer recorded from a MIRAGE
    release script (``metadata.extra``), else ours."""
    character = script.character(seat)
    ours = script_parts(character)
    if reading == "ours":
        return ours
    recorded = script.metadata.extra.get(RELEASE_PART_KEY, {})
    texts = recorded.get(character.name) if isinstance(recorded, dict) else None
    if texts is None:
        return {part: ours.get(part, "") for part in PARTS}
    if not isinstance(texts, dict) or not all(isinstance(t, str) for t in texts.values()):
        raise EvalError(f"{script.id}: metadata.extra.{RELEASE_PART_KEY}.{character.name}: "
                        "not a mapping of part names to texts")
    return {part: texts.get(part, "") for part in PARTS}
