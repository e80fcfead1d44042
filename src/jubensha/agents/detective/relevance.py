"""Internal.

How much a text has to do with the crime: its closeness to the crime's evidence.

The evidence is what the table knows of the death: the clues revealed so far, and before
any, the background's sentences about the victims and the victims' descriptions. A text
scores its best cosine similarity to one of them, rescaled so that ``threshold`` and below
count 0 and an identical text 1. With no embedder the scores are BM25 matches against the
evidence, as a share of the best. Vectors are kept per text for the process: public texts
(clues, speeches) come back for every seat and every game of a batch.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from jubensha.llm import Embedder
from jubensha.memory.lexical import BM25Index
from jubensha.memory.text import TokenizerOptions

_VECTORS: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_KEEP = 20_000


async def vectors(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Unit vectors of ``texts`` (rows), each embedded once per process and embedder."""
    kind = type(embedder).__name__
    missing = list(dict.fromkeys(t for t in texts if (kind, t) not in _VECTORS))
    if missing:
        for text, vector in zip(missing, await embedder.embed(missing), strict=True):
            row = np.asarray(vector, dtype=np.float32)
            _VECTORS[(kind, text)] = row / (np.linalg.norm(row) or 1.0)
        while len(_VECTORS) > _KEEP:
            _VECTORS.popitem(last=False)
    return np.stack([_VECTORS[(kind, t)] for t in texts]) if texts else np.zeros((0, 1))


class Relevance:
    """Scores texts by their closeness to the crime's evidence (see the module)."""

    def __init__(self, embedder: Embedder | None, tokenizer: TokenizerOptions,
                 threshold: float) -> None:
        self.embedder = embedder
        self.tokenizer = tokenizer
        self.threshold = threshold
        self.evidence: list[str] = []

    def set_evidence(self, texts: Sequence[str]) -> None:
        self.evidence = [t for t in dict.fromkeys(texts) if t.strip()]

    async def scores(self, texts: Sequence[str]) -> list[float]:
        if not texts or not self.evidence:
            return [0.0] * len(texts)
        if self.embedder is None:
            return self._lexical(texts)
        found = await vectors(self.embedder, [*texts, *self.evidence])
        similarity = (found[:len(texts)] @ found[len(texts):].T).max(axis=1)
        scaled = np.clip((similarity - self.threshold) / (1 - self.threshold), 0, None)
        return [float(x) for x in scaled]

    def _lexical(self, texts: Sequence[str]) -> list[float]:
        index = BM25Index(self.tokenizer)
        index.add(texts)
        scores = index.scores(" ".join(self.evidence))
        top = float(scores.max()) if len(scores) else 0.0
        return [float(x) / top if top > 0 else 0.0 for x in scores]
