"""BM25 over tokenised texts (bm25s), growing as records arrive.

bm25s precomputes every (token, document) score, and those depend on the corpus-wide IDF
and mean length, so a new document changes all of them: the sparse score matrix has to be
rebuilt. What is kept across rebuilds is the expensive part, each text's tokens (jieba) and
a stable vocabulary of token ids; records are tokenised once, and the matrix is rebuilt
lazily, at the first query after one or more adds, never per add.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import bm25s
import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from jubensha.memory.hybrid import rank
from jubensha.memory.text import TokenizerOptions


class BM25Params(BaseModel):
    """bm25s scoring settings; the defaults are bm25s's (Lucene variant)."""

    model_config = ConfigDict(frozen=True)

    k1: float = Field(1.5, ge=0)
    b: float = Field(0.75, ge=0, le=1)
    method: Literal["lucene", "robertson", "atire", "bm25l", "bm25+"] = "lucene"


class BM25Index:
    """BM25 over texts added one by one; ids are positions in the order of ``add``."""

    def __init__(self, tokenizer: TokenizerOptions | None = None,
                 params: BM25Params | None = None) -> None:
        self.tokenizer = tokenizer or TokenizerOptions()
        self.params = params or BM25Params()
        self._texts: list[str] = []
        self._token_ids: list[list[int]] = []
        # "" holds id 0 so that bm25s never has to add its empty token to our vocabulary.
        self._vocab: dict[str, int] = {"": 0}
        self._retriever: bm25s.BM25 | None = None
        self._indexed = 0
        self.rebuilds = 0
        """How many times the score matrix was built (for tests and benchmarks)."""

    def __len__(self) -> int:
        return len(self._texts)

    def add(self, texts: Iterable[str]) -> None:
        """Queue texts; they are tokenised and indexed at the next query."""
        self._texts.extend(texts)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every text for ``query`` (zeros when no query token is known)."""
        self._refresh()
        if self._retriever is None:
            return np.zeros(len(self._texts), dtype=np.float32)
        ids = [self._vocab[t] for t in self.tokenizer.tokenize(query) if t in self._vocab]
        if not ids:
            return np.zeros(len(self._texts), dtype=np.float32)
        return self._retriever.get_scores_from_ids(ids)

    def search(self, query: str, k: int,
               candidates: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Top ``k`` ``(id, score)`` with a positive score, ties in id order."""
        return rank(self.scores(query), candidates, positive_only=True).top(k)

    def _refresh(self) -> None:
        if self._indexed == len(self._texts):
            return
        for text in self._texts[len(self._token_ids):]:
            self._token_ids.append([self._vocab.setdefault(t, len(self._vocab))
                                    for t in self.tokenizer.tokenize(text)])
        self._indexed = len(self._texts)
        if not any(self._token_ids):  # nothing to score; bm25s would divide by a zero length
            return
        retriever = bm25s.BM25(k1=self.params.k1, b=self.params.b, method=self.params.method)
        retriever.index((self._token_ids, self._vocab), show_progress=False)
        self._retriever = retriever
        self.rebuilds += 1
