"""A tiny deterministic embedder: one axis per keyword, counting its occurrences.

Its vectors are known in advance, so cosine scores and rankings can be worked out by hand,
and it records every batch it is asked to embed.
"""

from __future__ import annotations

import pytest

KEYWORDS = ("knife", "poison", "garden", "letter", "刀", "毒", "花园", "信")


class KeywordEmbedder:
    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    async def embed(self, texts: list[str]) -> list[list[float]]:
        self.batches.append(list(texts))
        return [[float(text.lower().count(word)) for word in KEYWORDS] for text in texts]

    @property
    def texts(self) -> list[str]:
        return [text for batch in self.batches for text in batch]


@pytest.fixture
def embedder() -> KeywordEmbedder:
    return KeywordEmbedder()
