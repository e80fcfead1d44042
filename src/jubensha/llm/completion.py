"""Internal.

Reading an OpenAI-shaped chat completion body: what an OpenAI-compatible endpoint returns
and what the embedded llama.cpp server hands back in-process. Read leniently (optional
fields may be missing) but never into a wrong type."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from jubensha.llm.reasoning import joined, split_reasoning


class Completion(NamedTuple):
    text: str
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int | None
    """Prompt tokens served from the server's cache (``prompt_tokens_details.cached_tokens``);
    None: the server did not say."""
    model: str | None = None
    """The model the server says answered (the body's ``model``); None: it did not say."""
    reasoning: str | None = None
    """The model's reasoning: a ``reasoning_content`` (or ``reasoning``) field and any
    ``<think>`` block of the text, never left in ``text``; None: none."""


def completion(text: str, field: str | None, finish_reason: str | None, prompt_tokens: int,
               completion_tokens: int, cached_tokens: int | None,
               model: str | None = None) -> Completion:
    """A completion whose reasoning (its own ``field`` and what the text held) is apart."""
    said, thought = split_reasoning(text)
    return Completion(said, finish_reason, prompt_tokens, completion_tokens, cached_tokens,
                      model, joined(field, thought))


def reasoning_field(message: dict[str, Any]) -> str | None:
    """The reasoning a message (or a streamed delta) carries in a field of its own."""
    for key in ("reasoning_content", "reasoning"):
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def read_completion(data: Any) -> Completion | None:
    """The first choice of a chat completion body; None when it has no choices. A body of
    the wrong shape is a ``ValueError`` (retried as a garbled reply), never another error."""
    if not isinstance(data, dict):  # ValueError, not TypeError: retried as a garbled reply
        raise ValueError(f"the reply is not a JSON object: {str(data)[:80]!r}")  # noqa: TRY004
    choices = data.get("choices") or []
    if not isinstance(choices, list):
        raise ValueError(f"the reply's choices are not a list: {str(choices)[:80]!r}")  # noqa: TRY004
    if not choices:
        return None
    choice = choices[0] if isinstance(choices[0], dict) else {}
    message: dict[str, Any] = (choice["message"] if isinstance(choice.get("message"), dict)
                               else {})
    content = message.get("content") or ""
    if not isinstance(content, str):
        raise ValueError(f"the reply's content is not text: {str(content)[:80]!r}")  # noqa: TRY004
    usage: dict[str, Any] = data["usage"] if isinstance(data.get("usage"), dict) else {}
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    served = data.get("model")
    finish = choice.get("finish_reason")
    return completion(content, reasoning_field(message),
                      finish[:40] if isinstance(finish, str) else None,
                      count(usage.get("prompt_tokens")), count(usage.get("completion_tokens")),
                      count(cached) if isinstance(cached, int | float) else None,
                      served[:200] if isinstance(served, str) and served else None)


MAX_TOKENS = 10**12
"""The largest token count taken from a reply (an index stores 64-bit integers)."""


def count(value: Any) -> int:
    """A token count as the server gave it; anything that is no finite number is 0."""
    if isinstance(value, bool) or not isinstance(value, int | float) or (
            isinstance(value, float) and not math.isfinite(value)):
        return 0
    return min(max(0, int(value)), MAX_TOKENS)
