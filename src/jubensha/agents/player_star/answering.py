"""Internal.

What a PLAYER* seat says: its introduction, its answers (the question-reply prompt of
appendix C.6.2) and any other speech a procedure asks for.

A civilian answers in the first person with as much as it knows (timeline, feelings); a
murderer hides that it killed its victims and may fabricate. The script and the dialogue
in each prompt are retrieved for the question being answered.
"""

from __future__ import annotations

from jubensha.agents.player_star.core import PlayerCore
from jubensha.engine import Speak, Speech


async def introduce(core: PlayerCore, decision: Speak) -> Speech:
    own = core.own(core.memory.script_from_start(core.config.intro_tokens), "start",
                   goals=True)
    user = core.prompt("introduction", goals=core.goals(), prompt=decision.prompt,
                       murderer=core.murderer)
    return Speech(text=await core.speech("introduction", user, own))


async def answer(core: PlayerCore, decision: Speak) -> Speech:
    """Reply to ``decision.question`` (or to the host's prompt when there is none)."""
    question = decision.question
    text = question.text if question is not None else decision.prompt
    asker = question.speaker if question is not None else None
    config = core.config
    own = core.own(await core.memory.script(text, config.script_tokens), "question",
                   goals=True)
    user = core.prompt("answer", asker=asker, question=text,
                       dialogue=await core.memory.dialogue(text, config.dialogue_tokens),
                       goals=core.goals(), murderer=core.murderer,
                       kills=[victim for victim in core.victims if core.killed(victim)])
    return Speech(text=await core.speech("answer", user, own))


async def speak(core: PlayerCore, decision: Speak) -> Speech:
    """A statement, shared clues, reasoning or an accusation speech, from the script and
    dialogue retrieved for the host's request."""
    query = decision.prompt or " ".join(v for v in core.victims if v)
    config = core.config
    own = core.own(await core.memory.script(query, config.script_tokens), "this",
                   goals=True)
    user = core.prompt("speak", kind=decision.kind, prompt=decision.prompt,
                       dialogue=await core.memory.dialogue(query, config.dialogue_tokens),
                       goals=core.goals(), murderer=core.murderer)
    return Speech(text=await core.speech(decision.kind, user, own))
