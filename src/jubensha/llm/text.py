"""Cheap text measurements shared by the clients: rough token counts and language sniffing.

Clients that cannot tokenise (the fake, budgets before a call, the local model's context
guard) need an estimate that errs on the high side; Chinese costs far more tokens per
character than English in the byte-level vocabularies of small models.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from jubensha.llm.base import Message

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")

ASCII_CHARS_PER_TOKEN = 3.5
"""English runs at ~4 characters per token; 3.5 keeps the estimate on the safe side."""
TOKENS_PER_CJK_CHAR = 2.0
"""SmolLM2's tokenizer spends ~1.7 tokens per Chinese character (measured); round up."""


def contains_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


def estimate_tokens(text: str) -> int:
    """An upper-leaning token estimate for any tokenizer: CJK characters cost more."""
    cjk = len(_CJK.findall(text))
    other = len(text) - cjk
    return int(other / ASCII_CHARS_PER_TOKEN + cjk * TOKENS_PER_CJK_CHAR) + (1 if text else 0)


def messages_language(messages: Iterable[Message]) -> str:
    """``"zh"`` when any message contains Chinese, else ``"en"`` (picks prompt templates)."""
    return "zh" if any(contains_cjk(m.text) for m in messages) else "en"
