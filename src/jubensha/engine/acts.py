"""Internal.

Which acts a script has to be played, and the rule that every one of them is played
before anyone is asked who killed whom.

An act is something to play when the script gives it content: a public text, a character's
act sheet or a clue card. A release that counts acts it has no text for (WellPlay lists
three acts for scripts whose characters each have one text) is played as the acts it has.
Every victim belongs to the last act: a later act can change what is known about an earlier
death (a second body found in the morning, dead before the first), so no vote or accusation
is asked before the last act has started.
"""

from __future__ import annotations

from jubensha.scripts.model import Script


class ActNotPlayed(RuntimeError):
    """A vote or accusation asked before the script's last act was started: a procedure
    (or a stage kind) that skipped an act. The game stops; its result would mislead."""


def playable_acts(script: Script) -> list[int]:
    """The numbers of the acts with content, in order; act 1 always."""
    numbers = {act.number for act in script.acts if act.public_text}
    numbers |= {sheet.act for character in script.characters for sheet in character.acts}
    numbers |= {clue.act for clue in script.clues}
    return sorted(numbers | {1})


def last_act(script: Script) -> int:
    return playable_acts(script)[-1]
