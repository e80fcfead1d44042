"""Internal.

The MPIRD-LLMA / MIRAGE metrics: LLM-Score, ROUGE-L script reconstruction, the
probabilities of doubt and belief, and the public release's indices TII, CIC, ICI, SCI
and Victory.

Sources: the MPIRD-LLMA paper, section 2.3, figure 3 and prompt tables 20-21; its public
release (lime728/MIRAGE, ``ScriptEnvs/BaseEnv.py``): a judge call per seat and ability
(``llms_eval``), a reconstruction per seat and script part compared by ROUGE-L with that
part (``rouge_eval``), per character doubt and belief probabilities
``sum(score) / (2 * ratings)`` (``end_stage``), and its summary (``save_result``):
ICI = mean over seats of (reasoning + communication + observation + thinking) / 80,
SCI = mean over seats of (role-play / 20 + ROUGE-L) / 2, the trust index per character
from the two probabilities, CIC from the clues investigated, and the accused ranked by
votes x seats + doubt - trust for Victory. ``docs/evaluation.md`` lists every choice;
option ``reading: release`` gives the numbers of the release's code where it departs from
these (the last stage's ratings, ties in script order, its ROUGE-L over its six part texts).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from jubensha.engine.events import (
    Accused,
    ActStarted,
    ClueRevealed,
    Event,
    Investigated,
    Rated,
    Spoke,
)
from jubensha.eval.judge import EvalError, JudgeFailure, ask, clip, judge_of, judge_request
from jubensha.eval.registry import MetricContext, metric, options
from jubensha.eval.report import MetricResult, ResultTable, number
from jubensha.eval.text import release_rouge, rouge_l
from jubensha.eval.vote_metrics import culprits, final_ballots, has_solution
from jubensha.eval.votes import Ties, Vote, culprit_rank, tally
from jubensha.llm.calls import declare
from jubensha.prompts import render
from jubensha.runlog.folder import RunLog
from jubensha.scripts.importers.mirage_release import RELEASE_PART_KEY
from jubensha.scripts.model import Character, Script

Reading = Literal["ours", "release"]
Ability = Literal["role_play", "reasoning", "communication", "observation", "thinking"]
ABILITIES: tuple[Ability, ...] = ("role_play", "reasoning", "communication", "observation",
                                  "thinking")
ICI_ABILITIES: tuple[Ability, ...] = ABILITIES[1:]
"""The interactivity abilities; role-play goes to SCI instead (public release)."""
MAX_ABILITY = 20
PARTS = ("story", "script", "relationships", "performance", "purpose", "ability")
"""The six parts of a MIRAGE character (paper, section 2.2), in its order."""

JUDGE_SCORE = declare("judge.mirage.score", "truth")
JUDGE_RECONSTRUCT = declare("judge.mirage.reconstruct", "scripts")  # the whole game log



@options("mirage")
class MirageOptions(BaseModel):
    """``options["mirage"]``: choices shared by the MIRAGE metrics (docs/evaluation.md)."""

    model_config = ConfigDict(extra="forbid")

    score_calls: Literal["per_ability", "single"] = Field(
        "per_ability", description="per_ability: one judge call per ability (public "
        "release); single: one call rating all five (MPIRD-LLMA table 20).")
    reconstruction: Literal["auto", "judge", "extractive"] = Field(
        "auto", description="judge: a judge reconstructs the script (paper); extractive: "
        "the seat's own statements stand for it (offline); auto: judge when one is given.")
    per_part: bool = Field(True, description="Reconstruct and compare each script part "
                                             "(public release), else the whole script.")
    history_tokens: int = Field(6000, ge=200, description="Game history shown to a judge.")
    script_tokens: int = Field(3000, ge=200, description="A seat's script shown to a judge.")
    vote_weight: float | None = Field(None, ge=0, description="Score of one vote in the "
                                      "Victory ranking; default: the number of seats.")
    ties: Ties = Field("optimistic", description="Ties in the Victory ranking (ours; the "
                       "release reading breaks them in script order).")
    attempts: int = Field(3, ge=1, description="Structured attempts per judge call.")
    reading: Reading = Field(
        "ours", description="ours: every stage's ratings, ties by `ties`, ROUGE-L by "
        "character over the non-empty parts; release: as the MIRAGE release's code computes "
        "them (docs/evaluation.md lists each difference).")
    culprits: Literal["truth", "release"] = Field(
        "truth", description="truth: the culprit the importer read in the truth text; "
        "release: the list the MIRAGE release's code hard-codes (imported MIRAGE scripts).")


def options_of(context: MetricContext) -> MirageOptions:
    return MirageOptions.model_validate(context.options.get("mirage", {}))


def guilty_of(script: Script, victim: str | None, options: MirageOptions) -> set[str]:
    """Whom the metrics count as the culprit: the truth's, or the release's list (an
    EvalError when the script carries none: it was not imported from the release)."""
    if options.culprits == "truth":
        return culprits(script, victim)
    found = next((d.value for d in script.metadata.derivations
                  if d.fact == "culprits_release"), None)
    if found is None:
        raise EvalError(f"{script.id}: no culprit list of the MIRAGE release "
                        "(--culprits release needs a script imported from it)")
    return set(found)


# -- reading a run ---------------------------------------------------------------------------
class Line(BaseModel):
    """One public action in MIRAGE's ``name: [action]: content`` form."""

    actor: str
    action: str
    target: str | None = None
    text: str


def history_lines(events: Iterable[Event]) -> list[Line]:
    """The public game as lines: speeches, investigations with the clue found (each
    clue once, with the search that found it), and accusations."""
    lines: list[Line] = []
    searched: dict[str, Investigated] = {}
    for event in events:
        if event.audience != "public":
            continue
        if isinstance(event, Spoke):
            lines.append(Line(actor=event.speaker, action=event.kind, target=event.to,
                              text=event.text))
        elif isinstance(event, Investigated):
            for clue_id in event.clue_ids:
                searched[clue_id] = event
            if not event.clue_ids:
                lines.append(Line(actor=event.seat, action="investigate",
                                  target=event.location, text=""))
        elif isinstance(event, ClueRevealed) and event.clue_id in searched:
            search = searched.pop(event.clue_id)
            lines.append(Line(actor=search.seat, action="investigate", target=search.location,
                              text=event.caption or event.text))
        elif isinstance(event, Accused):
            lines.append(Line(actor=event.accuser, action="accusation", target=event.accused,
                              text=event.reason))
    return lines


def render_lines(lines: Sequence[Line], lang: str) -> str:
    return render("eval", "mirage_history", lang, lines=[line.model_dump() for line in lines])


def seats_of(context: MetricContext) -> list[str]:
    """The seats played, in the run's order (the script's characters without a meta)."""
    meta = context.run.meta
    if meta is not None and meta.seats:
        return list(meta.order or meta.seats)
    return context.script.names


def script_parts(character: Character) -> dict[str, str]:
    """A character's private script in MIRAGE's six parts (empty parts left out)."""
    acts = [a.text for a in character.acts if a.text and a.text != character.story]
    relations = [" ".join(x for x in (r.other + ":", ", ".join(r.labels), r.description) if x)
                 for r in character.relationships]
    goals = [goal for sheet in character.acts for goal in sheet.goals]
    parts = {
        "story": character.story,
        "script": "\n".join([*acts, *(f"{t.time or ''} {t.text}".strip()
                                      for t in character.timeline)]),
        "relationships": "\n".join([*relations,
                                    str(character.extra.get("relationship_text", ""))]),
        "performance": "\n".join([character.performance,
                                  *(a.performance for a in character.acts)]),
        "purpose": "\n".join([character.mission, *character.final_goals, *goals]),
        "ability": "\n".join(character.rules),
    }
    return {name: text.strip() for name, text in parts.items() if text.strip()}


def truth_text(script: Script) -> str:
    """The solution as prose for a judge: the narrative, else the written solution, else
    who killed whom, how and why."""
    truth = script.truth
    if truth is None:
        return ""
    if truth.narrative.strip() or truth.solution.strip():
        return truth.narrative.strip() or truth.solution.strip()
    return render("eval", "mirage_truth", script.language, murderers=truth.murderers,
                  kills=[k.model_dump() for k in truth.kills], method=truth.method,
                  motive=truth.motive)


def held_clues(script: Script, seat: str) -> list[str]:
    return [clue.caption or clue.text for clue in script.clues if clue.holder == seat]


# -- doubt and belief ------------------------------------------------------------------------
class TrustCount(BaseModel):
    """Ratings of one seat's statements (received) or by one rater (given)."""

    ratings: int = 0
    trust: int = 0
    doubt: int = 0

    def add(self, rating: Rated) -> None:
        self.ratings += 1
        self.trust += rating.trust
        self.doubt += rating.doubt

    @property
    def p_doubt(self) -> float | None:
        """``sum(doubt) / (2 * ratings)``: the public release's doubt probability."""
        return self.doubt / (2 * self.ratings) if self.ratings else None

    @property
    def p_belief(self) -> float | None:
        return self.trust / (2 * self.ratings) if self.ratings else None

    @property
    def tii(self) -> float | None:
        """``P_belief / (P_belief + P_doubt)``; None without ratings or when both are 0."""
        if not self.ratings or self.trust + self.doubt == 0:
            return None
        return self.trust / (self.trust + self.doubt)


def mean(values: Iterable[float | None]) -> float | None:
    found = [v for v in values if v is not None]
    return sum(found) / len(found) if found else None


class DoubtBelief(MetricResult):
    metric: str = "mirage-trust"
    received: dict[str, TrustCount]
    """Per seat, the ratings of its statements."""
    given: dict[str, TrustCount]
    """Per rater, the ratings it gave (which model trusts: arena tables)."""
    sides: dict[str, TrustCount]
    """``culprits`` and ``civilians``: the ratings their statements received, pooled."""
    murderers: list[str]
    reading: Reading = "ours"

    @property
    def tii(self) -> float | None:
        """Mean over the rated seats of their TII (public release, ``save_result``)."""
        return mean(count.tii for count in self.received.values())

    def tables(self) -> list[ResultTable]:
        def row(name: str, count: TrustCount) -> list[str]:
            return [name, str(count.ratings), number(count.p_doubt), number(count.p_belief),
                    number(count.tii)]

        columns = ["", "ratings", "P(doubt)", "P(belief)", "TII"]
        return [
            ResultTable(title="Probabilities of doubt and belief (MPIRD-LLMA figure 3)",
                        columns=["side", *columns[1:]],
                        rows=[row(side, count) for side, count in self.sides.items()],
                        notes=[(f"culprits: {', '.join(self.murderers)}; P = sum of the "
                               "0-2 scores / (2 x ratings)"), *reading_notes(self.reading)]),
            ResultTable(title="Trust and doubt received per seat",
                        columns=["seat", *columns[1:]],
                        rows=[*(row(seat, c) for seat, c in self.received.items()),
                              ["TII (mean of seats)", "", "", "", number(self.tii)]]),
            ResultTable(title="Trust and doubt given per rater", columns=["rater", *columns[1:]],
                        rows=[row(seat, c) for seat, c in self.given.items()]),
        ]


def doubt_belief(run: RunLog, script: Script, seats: Sequence[str],
                 options: MirageOptions | None = None) -> DoubtBelief:
    received = {seat: TrustCount() for seat in seats}
    given = {seat: TrustCount() for seat in seats}
    sides = {"culprits": TrustCount(), "civilians": TrustCount()}
    options = options or MirageOptions()
    murderers = guilty_of(script, None, options)
    for event in counted_ratings(run.events, options.reading):
        received.setdefault(event.speaker, TrustCount()).add(event)
        given.setdefault(event.rater, TrustCount()).add(event)
        sides["culprits" if event.speaker in murderers else "civilians"].add(event)
    return DoubtBelief(run=str(run.path), received=received, given=given, sides=sides,
                       murderers=sorted(murderers), reading=options.reading)


def counted_ratings(events: Iterable[Event], reading: Reading) -> list[Rated]:
    """The ratings that the trust indices and the Victory ranking count: every one of the
    game (ours), or those of its last stage (release: each stage's ``init_stage`` zeroes
    the candidates' counts, so the earlier stages' ratings are lost)."""
    kept: list[Rated] = []
    act = 1
    for event in events:
        if isinstance(event, Rated):
            kept.append(event)
        elif reading == "release" and isinstance(event, ActStarted) and event.act > act:
            kept, act = [], event.act
    return kept


def has_ratings(script: Script, run: RunLog) -> str | None:
    """Ratings to read, and culprits to tell from civilians."""
    if (unsolved := has_solution(script, run)) is not None:
        return unsolved
    if any(isinstance(e, Rated) for e in run.events):
        return None
    return "no trust/doubt ratings in the run (MIRAGE procedure only)"


@metric("mirage-trust", "Probabilities of doubt and belief for culprits and civilians, and "
        "the Trust Inclination Index, from the trust/doubt ratings",
        "MPIRD-LLMA section 2.3 and figure 3; MIRAGE public release (TII)",
        applies=has_ratings)
async def doubt_belief_metric(context: MetricContext) -> DoubtBelief:
    return doubt_belief(context.run, context.script, seats_of(context), options_of(context))


# -- clue investigation ----------------------------------------------------------------------
class ClueInvestigation(MetricResult):
    metric: str = "mirage-cic"
    clues: int
    """Clues the Investigate action could find (those with a location)."""
    found: dict[str, list[str]]
    """Per seat, the ids of the clues its searches revealed."""
    searches: dict[str, int]
    """Per seat, its Investigate actions (the public release counts these)."""

    @property
    def cic(self) -> float | None:
        found = {clue for ids in self.found.values() for clue in ids}
        return len(found) / self.clues if self.clues else None

    def tables(self) -> list[ResultTable]:
        rows = [[seat, str(self.searches.get(seat, 0)), str(len(ids)),
                 number(len(ids) / self.clues if self.clues else None)]
                for seat, ids in self.found.items()]
        rows.append(["all", str(sum(self.searches.values())),
                     str(len({c for ids in self.found.values() for c in ids})),
                     number(self.cic)])
        return [ResultTable(title="Clue Investigation Capability (CIC)",
                            columns=["seat", "searches", "clues found", "CIC"], rows=rows,
                            notes=[(f"CIC = distinct clues found by searching / {self.clues} "
                                   "clues with a location")])]


def clue_investigation(run: RunLog, script: Script, seats: Sequence[str]) -> ClueInvestigation:
    located = {clue.id for clue in script.clues if clue.location}
    found: dict[str, list[str]] = {seat: [] for seat in seats}
    searches: dict[str, int] = defaultdict(int)
    for event in run.events:
        if isinstance(event, Investigated):
            searches[event.seat] += 1
            found.setdefault(event.seat, []).extend(
                c for c in event.clue_ids if c in located and c not in found[event.seat])
    return ClueInvestigation(run=str(run.path), clues=len(located), found=found,
                             searches=dict(searches))


def has_places(script: Script, run: RunLog) -> str | None:
    return None if script.locations else "the script has no clue to investigate (no location)"


@metric("mirage-cic", "Clue Investigation Capability: clues found by investigating / all "
        "clues that can be investigated", "MIRAGE public release (CIC)", applies=has_places)
async def clue_investigation_metric(context: MetricContext) -> ClueInvestigation:
    return clue_investigation(context.run, context.script, seats_of(context))


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


def reading_notes(reading: Reading) -> list[str]:
    if reading == "ours":
        return []
    return [("release reading: the last stage's ratings, ties in script order, the "
             "release's ROUGE-L over its six part texts (an empty part scores 0)")]


def failure_notes(failures: Sequence[JudgeFailure]) -> list[str]:
    return [f"{len(failures)} judgement(s) failed and are left out: "
            + "; ".join(f"{f.seat or '-'} {f.item}: {f.error[:120]}" for f in failures[:5])
            ] if failures else []


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
        values = {
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
            reasons[item] = judged.value.reason
            for ability in group:
                scores[ability] = getattr(judged.value, ability)
        result.seats[seat] = SeatScores(scores=scores, reasons=reasons)
    return result


def has_speech(script: Script, run: RunLog) -> str | None:
    return None if any(isinstance(e, Spoke) for e in run.events) else "nobody spoke"


@metric("mirage-llm-score", "A judge rates each seat's role-play, reasoning, communication "
        "and cooperation, observation and thinking (0-20 each; LLM-Score = their sum)",
        "MPIRD-LLMA section 2.3, table 20; MIRAGE public release (llms_eval)",
        needs=("judge",), applies=has_speech)
async def llm_score_metric(context: MetricContext) -> LLMScore:
    return await llm_scores(context)


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


@metric("mirage-rouge", "ROUGE-L F between each character's script and its reconstruction "
        "by a judge from the history and the seat's actions (extractive without a judge)",
        "MPIRD-LLMA section 2.3, table 21; MIRAGE public release (rouge_eval)",
        optional=("judge",), applies=has_speech)
async def reconstruction_metric(context: MetricContext) -> Reconstruction:
    return await reconstructions(context)


# -- the indices -----------------------------------------------------------------------------
class Victory(BaseModel):
    """Per victim, the combined score of every seat and the culprit's rank in it, read
    three ways (docs/evaluation.md): the paper's Victory (the culprit ranked first, beside
    the chance of a random guess), the release README's MRR, and the code's bare rank."""

    scores: dict[str, dict[str, float]]
    ranks: dict[str, int | None]
    chance: dict[str, float] = Field(default_factory=dict)
    """Per victim, the probability that a uniform random pick of the pool is a culprit."""

    @property
    def mrr(self) -> float | None:
        return mean(1 / r if r else 0.0 for r in self.ranks.values()) if self.ranks else None

    @property
    def rate(self) -> float | None:
        """The paper's Victory: the share of victims whose culprit ranks first."""
        return mean(1.0 if r == 1 else 0.0 for r in self.ranks.values()) if self.ranks else None

    @property
    def chance_rate(self) -> float | None:
        """The paper's random-guess baseline beside it (table 2, right of Victory)."""
        return mean(self.chance.values()) if self.chance else None


def victory(run: RunLog, script: Script, seats: Sequence[str], options: MirageOptions
            ) -> Victory:
    """Rank of the true culprit when every seat is scored ``votes x weight + doubt - trust``
    (the reference's final ranking over all characters) from each victim's final ballots."""
    weight = options.vote_weight if options.vote_weight is not None else float(len(seats))
    suspicion: dict[str, float] = defaultdict(float)
    for event in counted_ratings(run.events, options.reading):
        suspicion[event.speaker] += event.doubt - event.trust
    release = options.reading == "release"
    if release:  # the release ranks its candidates in script order
        seats = [*(n for n in script.names if n in seats), *(s for s in seats
                                                             if s not in script.names)]
    scores: dict[str, dict[str, float]] = {}
    ranks: dict[str, int | None] = {}
    chance: dict[str, float] = {}
    for victim, ballots in final_ballots(run).items():
        votes = tally(Vote(voter=b.voter, target=b.target) for b in ballots)
        guilty = guilty_of(script, victim, options)  # {"nobody here"}: an offstage death
        pool = [*seats, *sorted(guilty - set(seats))]
        combined = {seat: weight * votes.get(seat, 0) + suspicion[seat] for seat in pool}
        key = victim or "-"
        scores[key] = combined
        ranks[key] = culprit_rank(combined, guilty, pool, "order" if release else options.ties)
        chance[key] = len(guilty & set(pool)) / len(pool) if pool else 0.0
    return Victory(scores=scores, ranks=ranks, chance=chance)


class MirageIndices(MetricResult):
    metric: str = "mirage"
    victory: Victory
    trust: DoubtBelief
    clues: ClueInvestigation
    scores: LLMScore | None = None
    reconstruction: Reconstruction | None = None
    notes: list[str] = Field(default_factory=list)
    reading: Reading = "ours"

    @property
    def ici(self) -> float | None:
        return mean(s.ici for s in self.scores.seats.values()) if self.scores else None

    @property
    def sci(self) -> float | None:
        """Mean over seats of (role-play / 20 + ROUGE-L) / 2 (seats with both)."""
        if self.scores is None or self.reconstruction is None:
            return None
        values = []
        for seat, scores in self.scores.seats.items():
            play = scores.scores.get("role_play")
            rebuilt = self.reconstruction.seats.get(seat)
            rouge = rebuilt.rouge if rebuilt else None
            if play is not None and rouge is not None:
                values.append((play / MAX_ABILITY + rouge) / 2)
        return mean(values)

    def tables(self) -> list[ResultTable]:
        def pct(value: float | None) -> str:
            return number(None if value is None else 100 * value, 2)

        won = self.victory
        return [ResultTable(
            title="MIRAGE indices (x100)",
            columns=["Victory (paper)", "random guess", "Victory (MRR)", "TII", "CIC", "ICI",
                     "SCI"],
            rows=[[pct(won.rate), pct(won.chance_rate), pct(won.mrr), pct(self.trust.tii),
                   pct(self.clues.cic), pct(self.ici), pct(self.sci)]],
            notes=[*self.notes, ("Victory (paper): culprit ranked first; random guess: the "
                   "chance of picking a culprit at random; MRR: the release README's reading"),
                   *reading_notes(self.reading)])]


@metric("mirage", "The MIRAGE indices: Victory (MRR of the culprit), TII, CIC, ICI and SCI "
        "(ICI and SCI with a judge)", "MIRAGE public release (save_result, end_stage)",
        optional=("judge",))
async def mirage_metric(context: MetricContext) -> MirageIndices:
    options = options_of(context)
    seats = seats_of(context)
    notes = []
    scores = rebuilt = None
    if context.judge is not None:
        scores = await llm_scores(context, seats)
        rebuilt = await reconstructions(context, seats)
        notes += failure_notes(scores.failures + rebuilt.failures)
    else:
        notes.append("ICI and SCI need a judge (--judge MODEL)")
    trust = doubt_belief(context.run, context.script, seats, options)
    if trust.tii is None:
        notes.append("TII: no trust/doubt ratings in the run")
    clues = clue_investigation(context.run, context.script, seats)
    if clues.cic is None:
        notes.append("CIC: the script has no clue to investigate")
    won = victory(context.run, context.script, seats, options)
    if (unsolved := has_solution(context.script, context.run)) is not None:
        won = won.model_copy(update={"ranks": {}})
        notes.append(f"Victory: {unsolved}")
    elif not won.ranks:
        notes.append("Victory: no vote in the run")
    return MirageIndices(run=str(context.run.path), victory=won, trust=trust, clues=clues,
                         scores=scores, reconstruction=rebuilt, notes=notes,
                         reading=options.reading)
