"""Internal.

Cheap text measurements shared by the clients: rough token counts and language sniffing.

Clients that cannot tokenise (the fake, budgets before a call, the local model's context
guard) need an estimate that errs on the high side; Chinese costs far more tokens per
character than English in the byte-level vocabularies of small models.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from jubensha.llm.base import Message
from jubensha.prompts import render

HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
"""Chinese (Han) characters, as the body of a regex class: extension A, the unified block,
the compatibility ideographs, and extensions B to G beyond the BMP (rare characters of
names, such as 𠮷). The one definition every module's pattern builds on."""
_CJK = re.compile(f"[{HAN}\u3000-\u303f\uff00-\uffef]")

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


MESSAGE_OVERHEAD_TOKENS = 8
"""Chat-template tokens around each message (role markers, separators)."""


KEEP_CHARACTERS = 400
"""A shortened message keeps at least this much of its start and end while others can give."""


def fit_messages(messages: list[Message], budget: int,
                 scale: float = 1.0) -> tuple[list[Message], list[str]]:
    """Cut the middle of the longest messages until the estimate fits ``budget`` tokens.

    Non-system messages are shortened first (longest first), then system messages, each
    down to ``KEEP_CHARACTERS``; only if that is not enough are they cut further. A cut
    keeps a message's start and, at twice the length, its end (where the question
    usually is) around a marker. ``scale`` corrects the estimate when a tokenizer counted
    more tokens than estimated. Returns the messages and one note per cut.
    """
    def cost(message: Message) -> float:
        return estimate_tokens(message.text) * scale + MESSAGE_OVERHEAD_TOKENS

    fitted = [Message(role=m.role, content=m.text) for m in messages]
    total = sum(cost(m) for m in fitted)
    if total <= budget:
        return list(messages), []
    lang = messages_language(messages)
    order = sorted(range(len(fitted)),
                   key=lambda i: (fitted[i].role == "system", -len(fitted[i].text)))
    originals = [len(m.text) for m in fitted]
    for keep in (KEEP_CHARACTERS, 0):
        for index in order:
            excess = total - budget
            text = fitted[index].text
            if excess <= 0 or len(text) <= keep:
                continue
            before = cost(fitted[index])
            tokens = before - MESSAGE_OVERHEAD_TOKENS
            cut = min(len(text) - keep, int(excess * len(text) / tokens) + 64)
            fitted[index] = Message(role=fitted[index].role,
                                    content=_cut_middle(text, cut, lang))
            total += cost(fitted[index]) - before
    notes = [f"truncated message {i} ({m.role}): kept {len(m.text)} of {originals[i]} "
             f"characters to fit {budget} prompt tokens"
             for i, m in enumerate(fitted) if m.text != messages[i].text]
    return fitted, notes


def _cut_middle(text: str, cut: int, lang: str) -> str:
    kept = len(text) - cut
    head = kept // 3
    tail = kept - head
    marker = render("llm", "truncated", lang, omitted=cut)
    return f"{text[:head]}\n{marker}\n{text[len(text) - tail:] if tail else ''}".strip()
