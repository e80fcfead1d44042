"""Internal.

Reading a streamed chat completion: server-sent events, one JSON chunk per ``data:`` line,
until ``data: [DONE]`` or the end of the body. Each chunk's delta adds to the text (handed
to a sink as it grows) or to the reasoning (``reasoning_content`` or ``reasoning``, never
handed on); the last chunk may carry the usage. A chunk that is no JSON object, or one
that reports an error, is a ``ValueError``: retried like any garbled reply.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from jubensha.llm.base import TextSink
from jubensha.llm.completion import Completion, completion, count, reasoning_field

MAX_STREAM_CHARS = 400_000
"""Text and reasoning a stream may add up to before it is cut off (a server that ignores
``max_tokens``); the reply itself is cut to a twentieth of this for the table."""


class _Reply:
    def __init__(self) -> None:
        self.text: list[str] = []
        self.thought: list[str] = []
        self.size = 0
        self.finish: str | None = None
        self.usage: dict[str, Any] = {}
        self.model: str | None = None

    def add(self, chunk: dict[str, Any]) -> bool:
        """Take one chunk; whether its text grew."""
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        if isinstance(chunk.get("model"), str) and chunk["model"]:
            self.model = chunk["model"][:200]
        grew = False
        choices = chunk.get("choices") or []
        if not isinstance(choices, list):
            raise ValueError(f"a streamed chunk's choices are not a list: {str(choices)[:80]!r}")  # noqa: TRY004
        for choice in choices:
            if not isinstance(choice, dict):
                continue
            found = choice.get("delta")
            delta: dict[str, Any] = found if isinstance(found, dict) else {}
            content = delta.get("content")
            if isinstance(content, str) and content:
                self.text.append(content)
                self.size += len(content)
                grew = True
            thought = reasoning_field(delta)
            if thought:
                self.thought.append(thought)
                self.size += len(thought)
            if isinstance(choice.get("finish_reason"), str):
                self.finish = choice["finish_reason"][:40]
        return grew

    def completion(self) -> Completion:
        details = self.usage.get("prompt_tokens_details")
        cached = details.get("cached_tokens") if isinstance(details, dict) else None
        return completion("".join(self.text), "".join(self.thought) or None, self.finish,
                          count(self.usage.get("prompt_tokens")),
                          count(self.usage.get("completion_tokens")),
                          count(cached) if isinstance(cached, int | float) else None,
                          self.model)


async def read_stream(lines: AsyncIterator[str], sink: TextSink) -> Completion:
    """The completion a stream of server-sent event lines carries (see the module)."""
    reply = _Reply()
    async for line in lines:
        if not line.startswith("data:"):
            continue  # comments, event names, ids, blank separators
        data = line[5:].strip()
        if data == "[DONE]":
            break
        try:
            chunk = json.loads(data)
        except RecursionError:
            raise ValueError("a streamed chunk is nested too deeply to read") from None
        if not isinstance(chunk, dict):
            raise ValueError(f"a streamed chunk is not a JSON object: {data[:80]!r}")  # noqa: TRY004
        if chunk.get("error"):
            raise ValueError(f"the server reported an error mid-stream: {str(chunk['error'])[:200]}")
        if reply.add(chunk):
            sink("".join(reply.text))
        if reply.size > MAX_STREAM_CHARS:
            reply.finish = "length"
            break
    return reply.completion()
