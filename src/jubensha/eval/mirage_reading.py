"""Internal.

What the MIRAGE metrics read from a run and its script: their shared options, the
culprits they count, the public game as MIRAGE's ``name: [action]: content`` lines, a
character's script in the paper's six parts, and the solution as prose for a judge. The
WhodunitBench metrics read the game the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from jubensha.engine.events import (
    Accused,
    ClueRevealed,
    Event,
    Investigated,
    Spoke,
)
from jubensha.eval.judge import EvalError, JudgeFailure
from jubensha.eval.registry import MetricContext
from jubensha.eval.vote_metrics import culprits
from jubensha.eval.votes import Ties
from jubensha.llm.calls import declare
from jubensha.prompts import render
from jubensha.runlog.folder import RunLog
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


def mean(values: Iterable[float | None]) -> float | None:
    found = [v for v in values if v is not None]
    return sum(found) / len(found) if found else None


def reading_notes(reading: Reading) -> list[str]:
    if reading == "ours":
        return []
    return [("release reading: the last stage's ratings, ties in script order, the "
             "release's ROUGE-L over its six part texts (an empty part scores 0)")]


def failure_notes(failures: Sequence[JudgeFailure]) -> list[str]:
    return [f"{len(failures)} judgement(s) failed and are left out: "
            + "; ".join(f"{f.seat or '-'} {f.item}: {f.error[:120]}" for f in failures[:5])
            ] if failures else []


def has_speech(script: Script, run: RunLog) -> str | None:
    return None if any(isinstance(e, Spoke) for e in run.events) else "nobody spoke"
