"""Internal.

What every architecture uses to play: model calls (``Caller``: requests, free text, a
line of speech, structured replies with bounded retries), the reply schemas several of
them ask for, and the text helpers that build a prompt within its budgets and tidy a
reply. docs/architecture.md describes it.
"""

from jubensha.agents.toolkit.calls import Caller, chat, nonempty, speak
from jubensha.agents.toolkit.schemas import (
    RatingReply,
    questions_schema,
    target_schema,
    turn_schema,
)
from jubensha.agents.toolkit.text import (
    clean_speech,
    clip,
    clip_tokens,
    event_line,
    first_tokens,
    goals,
    recent,
    timeline_lines,
    whole_sentences,
    window,
    within,
)

__all__ = [
    "Caller",
    "RatingReply",
    "chat",
    "clean_speech",
    "clip",
    "clip_tokens",
    "event_line",
    "first_tokens",
    "goals",
    "nonempty",
    "questions_schema",
    "recent",
    "speak",
    "target_schema",
    "timeline_lines",
    "turn_schema",
    "whole_sentences",
    "window",
    "within",
]
