"""Internal.

A reasoning model's private thoughts, kept apart from what it says. Qwen3, DeepSeek-R1 and
the servers that run them write their reasoning inline (``<think>…</think>``, some
``<reasoning>`` or ``<thinking>``) or in a field of its own (``reasoning_content``,
``reasoning``). What the model says reaches the table: speech, drafts streamed to pages,
the transcript. Its reasoning reaches none of them; the run's call log keeps it as the
call's ``reasoning``, for the run's owner.

Every reply passes here once (``llm.calls.SeatModel``), and every streamed draft
(``llm.base.stream_sink``), whichever client answered. A leaf module: standard library only.
"""

from __future__ import annotations

import re

TAGS = ("think", "thinking", "reasoning")
_NAMES = "|".join(TAGS)
_BLOCK = re.compile(rf"<({_NAMES})\s*>(.*?)</\1\s*>", re.IGNORECASE | re.DOTALL)
_OPEN = re.compile(rf"<({_NAMES})\s*>", re.IGNORECASE)
_CLOSE = re.compile(rf"</({_NAMES})\s*>", re.IGNORECASE)
_PARTIAL_TAG = re.compile(r"<(/?)([a-z]{0,9})\s*$", re.IGNORECASE)


def split_reasoning(text: str) -> tuple[str, str]:
    """``text`` as said, and the reasoning taken out of it (``""`` when none). Whole
    blocks go wherever they are; an opening tag never closed (a reply cut mid-thought)
    takes the rest of the reply; a closing tag with no opening one (templates that put
    ``<think>`` in the prompt) takes everything before it. A reply with none of these is
    returned unchanged."""
    if "<" not in text:
        return text, ""
    thoughts: list[str] = []

    def take(match: re.Match[str]) -> str:
        thoughts.append(match.group(2).strip())
        return ""

    said = _BLOCK.sub(take, text)
    closing = list(_CLOSE.finditer(said))
    if closing:
        last = closing[-1]
        thoughts.insert(0, _CLOSE.sub("", said[:last.start()]).strip())
        said = said[last.end():]
    opening = _OPEN.search(said)
    if opening:
        thoughts.append(said[opening.end():].strip())
        said = said[:opening.start()]
    if not thoughts:
        return text, ""
    return said.strip(), "\n\n".join(part for part in thoughts if part)


def visible_draft(text: str) -> str:
    """What a streamed reply may show so far: ``split_reasoning``'s text, less a tag still
    being written at its end (``<thi`` may become ``<think>``)."""
    said, _ = split_reasoning(text)
    while (partial := _PARTIAL_TAG.search(said)) and any(
            tag.startswith(partial.group(2).lower()) for tag in TAGS):
        said = said[:partial.start()].rstrip()  # "<thi<" may end in two
    return said


def joined(*parts: str | None) -> str | None:
    """Reasoning from several places (a reply's own field, its inline blocks) as one text;
    None when there is none."""
    text = "\n\n".join(part.strip() for part in parts if part and part.strip())
    return text or None
