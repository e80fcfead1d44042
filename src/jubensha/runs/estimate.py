"""How many model calls a game will make, counted before it is played.

A game's calls follow from its procedure, its architectures and its table, hardly from what
the model says; playing it once against the instant scripted fake (in a temporary folder,
about a second) counts them. ``play`` and ``runs batch`` say the count, and the time it
takes at the model's measured speed, before a job that can run for hours on the local
model.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from jubensha.jobs import takes_time
from jubensha.llm.calls import is_note, read_calls
from jubensha.llm.fake import ScriptedModel
from jubensha.runs.play import NO_MODEL, PlayConfig, SeatPlan, guard_seats, play_game
from jubensha.runs.spec_schema import PlannedGame


async def batch_calls(games: list[PlannedGame]) -> int:
    """The model calls of ``games``: one scripted game per script, procedure and seating
    (their seeds and models hardly change the count), times the games that share it."""
    groups: dict[str, list[PlannedGame]] = {}
    for game in games:
        seating = json.dumps({n: p.architecture for n, p in game.plans.items()},
                             sort_keys=True)
        groups.setdefault(f"{game.script.id}|{game.settings.procedure}|{seating}",
                          []).append(game)
    total = 0
    for members in groups.values():
        first = members[0]
        calls = await count_game_calls(PlayConfig(
            script=first.script, procedure=first.procedure, plans=first.plans,
            seed=first.settings.seed, language=first.settings.language))
        total += calls * len(members)
    return total


def worth_estimating(plans: dict[str, SeatPlan]) -> bool:
    """Whether a seat's model takes real time per call (not the fake, not a replay)."""
    return any(takes_time(plan.model) for plan in plans.values())


async def count_game_calls(config: PlayConfig) -> int:
    """The model calls of this game played against the scripted fake, without the speech
    guard (the fake's replies, sentences of their prompts, would all be rewritten; a real
    model's seldom are). Only the script, procedure, seats, seed and language count: a
    cassette, a resumed log or the model options would change nothing but the replies.
    Notes in the call log (a detective's plan and ledger) are no calls, and neither is a
    reply one seat had from another's identical request (the game's cache)."""
    plans = guard_seats(config.plans, False)
    dry = PlayConfig(script=config.script, procedure=config.procedure, plans=plans,
                     seed=config.seed, language=config.language, embedder="scripted")
    fake = ScriptedModel(seed=config.seed)
    models = {plan.model: fake for plan in plans.values() if plan.model != NO_MODEL}
    with tempfile.TemporaryDirectory(prefix="jubensha-estimate-") as folder:
        out = Path(folder) / "game"
        await play_game(dry, out, models=models)
        calls = out / "calls.jsonl"
        if not calls.is_file():
            return 0
        return sum(not is_note(record.model) and record.origin != "cache"
                   for record in read_calls(calls))
