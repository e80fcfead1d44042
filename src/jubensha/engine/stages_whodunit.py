"""Internal.

The WhodunitBench stage kinds: discussion, reasoning and the open vote.

Source: the WhodunitBench supplementary material, section 1 (the four phases and each
phase's observation and action space) and figure 9 (the action prompts). Initialisation is
the built-in ``act``, ``clues`` and ``introduction`` kinds. Discussion: each seat shares
and analyses its clues, then questions one chosen role. Reasoning: each seat states the
killer's method and motive as ``Modus operandi: ... Motive: ...`` and sees the others'
statements (so it can refine its own). Voting: seats vote in turn and in public ("the
observation space consists of other roles' voting"), each as "I think the killer is: X".

What the stages parse is kept in ``table.state.extra["whodunit"]`` (copied into the result):
``reasoning`` per seat (method, motive, whether the format was followed) for the CMD score.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal

from pydantic import Field

from jubensha.engine.decisions import CastVote, Speak, Speech, Vote
from jubensha.engine.events import Spoke, VoteCast
from jubensha.engine.registry import StageSpec, register_stage
from jubensha.engine.stages import (
    ask_and_answer,
    check_choice,
    check_speech,
    nobody_label,
    vote_per_victim,
)
from jubensha.engine.table import Check, Table, VoteRecord
from jubensha.engine.voting import ballot_candidates
from jubensha.prompts import render

_METHOD = r"(?:modus\s+operandi|method|作案手法|手法)"
_MOTIVE = r"(?:motive|作案动机|动机)"
_LABEL = re.compile(rf"\**\s*({_METHOD}|{_MOTIVE})\s*\**\s*[:：]\s*\**", re.IGNORECASE)


def whodunit_state(table: Table) -> dict[str, Any]:
    return table.state.extra.setdefault("whodunit", {"reasoning": {}})


def host_line(table: Table, name: str, **values: Any) -> str:
    return render("whodunit", name, table.language, **values)


def parse_reasoning(text: str) -> dict[str, str] | None:
    """``{"method": ..., "motive": ...}`` from a "Modus operandi: ... Motive: ..." statement
    (English or Chinese labels, either order); None when a label is missing."""
    matches = list(_LABEL.finditer(text))
    parts: dict[str, str] = {}
    for match, after in zip(matches, [*matches[1:], None], strict=False):
        key = "motive" if re.fullmatch(_MOTIVE, match.group(1), re.IGNORECASE) else "method"
        body = text[match.end(): after.start() if after else len(text)].strip()
        parts.setdefault(key, body)
    if not parts.get("method") or not parts.get("motive"):
        return None
    return parts


# -- discussion ----------------------------------------------------------------------------
class DiscussionSpec(StageSpec):
    """Each seat in turn shares and analyses its clues, then asks one chosen seat one
    question, which that seat answers; everything is public."""

    kind: Literal["discussion"] = "discussion"
    rounds: int = Field(1, ge=1)
    questions: int = Field(1, ge=1, le=10, description="Questions to the chosen seat.")

    def scaled(self, *, rounds: int | None = None,
               questions: int | None = None) -> DiscussionSpec:
        update = {k: v for k, v in (("rounds", rounds), ("questions", questions)) if v}
        return self.model_copy(update=update)


@register_stage(DiscussionSpec)
async def run_discussion(spec: DiscussionSpec, table: Table) -> None:
    fallback = table.host_text("fallback_speech")
    for number in range(1, spec.rounds + 1):
        table.round = number
        await table.announce(host_line(table, "discussion", round=number, rounds=spec.rounds))
        for seat in table.seats:
            prompt = host_line(table, "share", to=seat, candidates=table.others(seat))
            await table.announce(prompt, to=seat)
            action = await table.ask(seat, Speak(kind="clue_share", prompt=prompt),
                                     fallback=lambda: Speech(text=fallback),
                                     check=check_speech(fallback))
            assert isinstance(action, Speech)
            await table.emit(Spoke(speaker=seat, kind="clue_share", text=action.text))
            await ask_and_answer(table, seat, table.others(seat), spec.questions)
    table.round = None


# -- reasoning -----------------------------------------------------------------------------
class ReasoningSpec(StageSpec):
    """Each seat in turn states the killer's modus operandi and motive in the fixed format;
    a statement that does not follow it is kept but recorded as a failure."""

    kind: Literal["reasoning"] = "reasoning"


def check_reasoning(fallback: str) -> Check:
    def check(action: Speech) -> tuple[Speech, str | None]:
        fixed, problem = check_speech(fallback)(action)
        if problem is None and parse_reasoning(fixed.text) is None:
            problem = "not in the format 'Modus operandi: ... Motive: ...'"
        return fixed, problem

    return check


@register_stage(ReasoningSpec)
async def run_reasoning(spec: ReasoningSpec, table: Table) -> None:
    state = whodunit_state(table)
    fallback = table.host_text("fallback_speech")
    for seat in table.seats:
        prompt = host_line(table, "reason", to=seat)
        await table.announce(prompt, to=seat)
        action = await table.ask(seat, Speak(kind="reasoning", prompt=prompt),
                                 fallback=lambda: Speech(text=fallback),
                                 check=check_reasoning(fallback))
        assert isinstance(action, Speech)
        await table.emit(Spoke(speaker=seat, kind="reasoning", text=action.text))
        parsed = parse_reasoning(action.text)
        state["reasoning"][seat] = {**(parsed or {"method": "", "motive": ""}),
                                    "formatted": parsed is not None}


# -- open vote -----------------------------------------------------------------------------
class OpenVoteSpec(StageSpec):
    """Seats vote one after another and everyone hears each vote ("I think the killer is:
    X"); the procedure's voting rules count the ballots."""

    kind: Literal["open_vote"] = "open_vote"
    decides: ClassVar[bool] = True


async def open_ballots(table: Table, victim: str | None, among: list[str] | None
                       ) -> dict[str, str | None]:
    rules = table.voting
    ballots: dict[str, str | None] = {}
    for voter in table.seats:
        candidates = ballot_candidates(voter, table.seats, table.script, rules, victim, among)
        if not candidates:
            continue
        check: Check = check_choice(candidates, Vote)
        action = await table.ask(voter, CastVote(candidates=candidates, victim=victim),
                                 fallback=lambda: Vote(target=None), check=check)
        assert isinstance(action, Vote)
        ballots[voter] = action.target
        await table.emit(Spoke(speaker=voter, kind="accusation",
                               text=host_line(table, "ballot", target=action.target)))
        await table.emit(VoteCast(voter=voter, target=action.target, victim=victim,
                                  reason=action.reason, audience=[]))
    table.state.votes.append(VoteRecord(victim=victim, round=table.round or 1, ballots=ballots))
    return ballots


@register_stage(OpenVoteSpec)
async def run_open_vote(spec: OpenVoteSpec, table: Table) -> None:
    await vote_per_victim(
        table, lambda victim: table.announce(host_line(table, "vote", victim=victim,
                                                        nobody=nobody_label(table))),
        open_ballots)
