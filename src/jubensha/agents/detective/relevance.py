"""Internal.

How much a text has to do with the crime: its closeness to the crime's evidence.

The evidence is what the table knows of the death: the clues revealed so far, and before
any, the background's sentences about the victims and the victims' descriptions. A text
scores its best cosine similarity to one of them, rescaled so that ``threshold`` and below
count 0 and an identical text 1. With no embedder the scores are BM25 matches against the
evidence, as a share of the best. Vectors are kept per text for this seat alone: a cache
shared by seats or games would hold other seats' private texts where any seat could read
them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from jubensha.llm import Embedder
from jubensha.memory.dense import EmbeddingCache
from jubensha.memory.lexical import BM25Index
from jubensha.memory.text import TokenizerOptions


class Relevance:
    """Scores texts by their closeness to the crime's evidence (see the module)."""

    def __init__(self, embedder: Embedder | None, tokenizer: TokenizerOptions,
                 threshold: float) -> None:
        self.cache = EmbeddingCache(embedder) if embedder is not None else None
        self.tokenizer = tokenizer
        self.threshold = threshold
        self.evidence: list[str] = []

    def set_evidence(self, texts: Sequence[str]) -> None:
        self.evidence = [t for t in dict.fromkeys(texts) if t.strip()]

    async def scores(self, texts: Sequence[str]) -> list[float]:
        if not texts or not self.evidence:
            return [0.0] * len(texts)
        if self.cache is None:
            return self._lexical(texts)
        found = await self.cache.vectors([*texts, *self.evidence])
        similarity = (found[:len(texts)] @ found[len(texts):].T).max(axis=1)
        scaled = np.clip((similarity - self.threshold) / (1 - self.threshold), 0, None)
        return [float(x) for x in scaled]

    def _lexical(self, texts: Sequence[str]) -> list[float]:
        index = BM25Index(self.tokenizer)
        index.add(texts)
        scores = index.scores(" ".join(self.evidence))
        top = float(scores.max()) if len(scores) else 0.0
        return [float(x) / top if top > 0 else 0.0 for x in scores]
