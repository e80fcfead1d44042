"""The readers of what a model server sends, fuzzed with hypothesis: a completion body, a
stream of server-sent events and a reply's reasoning blocks, however garbled, end in a
reply or in a ``ValueError`` (retried, then a recorded model error), never in another
exception; no reply that comes out holds a reasoning tag. ``--long``
(``JUBENSHA_LONG_TESTS=1``) draws 5,000 of each instead of 200; ``JUBENSHA_COUNTS=FILE``
appends the counts to FILE (docs/reliability.md)."""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from jubensha.llm.completion import read_completion
from jubensha.llm.reasoning import TAGS, split_reasoning, visible_draft
from jubensha.llm.sse import read_stream

LONG = os.environ.get("JUBENSHA_LONG_TESTS") == "1"
EXAMPLES = 5000 if LONG else 200
TAG = re.compile(rf"</?({'|'.join(TAGS)})\s*>", re.IGNORECASE)
COUNTS: Counter[str] = Counter()

PIECES = st.sampled_from(["<think>", "</think>", "<reasoning>", "</REASONING>", "<thinking >",
                          "<thi", "</", "<", ">", "Good evening.", "I am the killer.", "\n",
                          " ", "{", "}", "\x00", "\ud7ff", "汤姆"])
TEXTS = st.one_of(st.text(max_size=60), st.lists(PIECES, max_size=12).map("".join))
JSON = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(),
                              TEXTS), lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=20)
KEYS = st.sampled_from(["choices", "message", "delta", "content", "reasoning_content",
                        "reasoning", "usage", "finish_reason", "model", "error",
                        "prompt_tokens", "completion_tokens", "prompt_tokens_details"])
SHAPED = st.recursive(st.one_of(TEXTS, st.integers(-5, 10**6), st.none()),
                      lambda inner: st.one_of(st.lists(inner, max_size=3),
                                              st.dictionaries(KEYS, inner, max_size=5)),
                      max_leaves=25)
BODIES = st.one_of(JSON, SHAPED)
LINES = st.lists(st.one_of(
    BODIES.map(lambda value: "data: " + json.dumps(value)),
    st.sampled_from(["data: [DONE]", ": keep-alive", "", "event: x", "data: {", "data:"]),
    st.text(max_size=30)), max_size=12)
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None,
                    derandomize=not LONG, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module", autouse=True)
def counts() -> Iterator[None]:
    yield
    target = os.environ.get("JUBENSHA_COUNTS")
    if target:
        with Path(target).open("a", encoding="utf-8") as out:
            out.write(json.dumps({"suite": "model replies", **COUNTS}) + "\n")


def no_tag(text: str) -> None:
    assert not TAG.search(text), text


@SETTINGS
@given(BODIES)
@example({"choices": {"0": {}}})  # found by the long run: KeyError, then TypeError
@example({"choices": 1})
@example({"choices": [{"message": {"content": "x"}, "finish_reason": [1]}],
          "usage": {"prompt_tokens": [1], "completion_tokens": float("nan")}})
def test_a_completion_body_is_a_reply_or_a_value_error(body: Any) -> None:
    try:
        found = read_completion(body)
    except ValueError:
        COUNTS["completion refused"] += 1
        return
    COUNTS["completion read"] += 1
    if found is not None:
        no_tag(found.text)


async def _lines(lines: list[str]) -> AsyncIterator[str]:
    for line in lines:
        yield line


@SETTINGS
@given(LINES)
@example(['data: {"choices": 1}'])  # found by the long run: TypeError
@example(['data: {"choices": [{"delta": {"content": "x"}}], "usage": {"prompt_tokens": "9"}}'])
def test_a_stream_is_a_reply_or_a_value_error(lines: list[str]) -> None:
    shown: list[str] = []
    try:
        found = asyncio.run(read_stream(_lines(lines), shown.append))
    except ValueError:
        COUNTS["stream refused"] += 1
        return
    COUNTS["stream read"] += 1
    no_tag(found.text)


@SETTINGS
@given(TEXTS)
def test_no_reasoning_tag_survives_and_plain_text_is_untouched(text: str) -> None:
    COUNTS["reasoning split"] += 1
    said, thought = split_reasoning(text)
    no_tag(said)
    if not TAG.search(text):
        assert (said, thought) == (text, "")
    for end in range(0, len(text) + 1, max(1, len(text) // 8)):
        draft = visible_draft(text[:end])
        no_tag(draft)
        assert not re.search(r"<(/?)(t|th|thi|thin|think|r|re|rea|reas)$", draft, re.IGNORECASE)
