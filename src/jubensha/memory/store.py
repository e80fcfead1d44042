"""An agent's memory: records with metadata, retrieved by BM25, embeddings or both.

One store per seat holds what that seat may know (its script chunks, the dialogue it
heard, the clues it saw), so retrieval can never leak another seat's information. Records
are only appended; both indexes catch up lazily at the next query, touching only the new
records (see ``lexical`` and ``dense`` for what that costs).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, get_args

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from jubensha.llm.base import Embedder
from jubensha.memory.dense import DenseIndex, EmbeddingCache
from jubensha.memory.hybrid import RRF_K, Ranking, rank, reciprocal_rank_fusion
from jubensha.memory.lexical import BM25Index, BM25Params
from jubensha.memory.text import TokenizerOptions, chunk, count_tokens

RetrievalMode = Literal["lexical", "dense", "hybrid"]
BudgetOrder = Literal["original", "rank"]
BudgetFill = Literal["stop", "skip"]


class MemoryRecord(BaseModel):
    """One remembered piece of text and where it came from."""

    text: str
    source: str = Field("dialogue", description='"script", "dialogue", "clue", "event", ...')
    kind: str = Field("", description='Finer type chosen by the caller, e.g. "qa", "vote".')
    speaker: str | None = None
    turn: int | None = Field(None, description="Turn or event index in the game.")
    meta: dict[str, Any] = Field(default_factory=dict)


class Hit(BaseModel):
    """A retrieved record: its id (order of adding), its score in the mode used, its 1-based
    rank in the full ranking, and its approximate token count."""

    id: int
    record: MemoryRecord
    score: float
    rank: int
    tokens: int


class MemoryConfig(BaseModel):
    """Retrieval settings; ``docs/memory.md`` maps the papers' settings onto them."""

    model_config = ConfigDict(frozen=True)

    mode: RetrievalMode = "lexical"
    k: int = Field(5, ge=0, description="ThinkThrice's Memory Retrieval takes the top 5.")
    tokenizer: TokenizerOptions = Field(default_factory=TokenizerOptions)
    bm25: BM25Params = Field(default_factory=BM25Params)
    rrf_k: int = Field(RRF_K, ge=0)
    lexical_weight: float = Field(1.0, ge=0)
    dense_weight: float = Field(1.0, ge=0)
    embed_batch_size: int = Field(32, ge=1)
    chunk_tokens: int = Field(50, ge=1, description="PLAYER* stores scripts in <=50-token "
                                                    "segments.")
    budget_order: BudgetOrder = "original"
    budget_fill: BudgetFill = "stop"


Where = Mapping[str, Any] | Callable[[MemoryRecord], bool]
"""A filter: a predicate on records, or field/meta names to a value or a collection of
allowed values (``{"source": "dialogue", "speaker": ["Li", "Wang"]}``)."""


class MemoryStore:
    """Append-only records with lexical, dense and hybrid retrieval.

    Dense and hybrid modes need an ``Embedder`` (or an ``EmbeddingCache`` shared with other
    stores). An empty or blank query retrieves nothing in every mode.
    """

    def __init__(self, config: MemoryConfig | None = None,
                 embedder: Embedder | EmbeddingCache | None = None) -> None:
        self.config = config or MemoryConfig()
        self._records: list[MemoryRecord] = []
        self._tokens: list[int] = []
        self.lexical = BM25Index(self.config.tokenizer, self.config.bm25)
        self.dense = (DenseIndex(embedder, self.config.embed_batch_size)
                      if embedder is not None else None)

    def __len__(self) -> int:
        return len(self._records)

    @property
    def records(self) -> tuple[MemoryRecord, ...]:
        return tuple(self._records)

    def add(self, text: str, *, source: str = "dialogue", kind: str = "",
            speaker: str | None = None, turn: int | None = None, **meta: Any) -> int:
        """Remember one text; returns its id."""
        return self.add_record(MemoryRecord(text=text, source=source, kind=kind,
                                            speaker=speaker, turn=turn, meta=meta))

    def add_record(self, record: MemoryRecord) -> int:
        self._records.append(record)
        self._tokens.append(count_tokens(record.text))
        self.lexical.add([record.text])
        if self.dense is not None:
            self.dense.add([record.text])
        return len(self._records) - 1

    def add_document(self, text: str, *, max_tokens: int | None = None, source: str = "script",
                     kind: str = "", speaker: str | None = None, turn: int | None = None,
                     **meta: Any) -> list[int]:
        """Remember a long text as chunks of at most ``max_tokens`` (default
        ``config.chunk_tokens``); each chunk's meta gets its ``chunk`` number."""
        pieces = chunk(text, self.config.chunk_tokens if max_tokens is None else max_tokens)
        return [self.add(piece, source=source, kind=kind, speaker=speaker, turn=turn,
                         **meta, chunk=i) for i, piece in enumerate(pieces)]

    async def retrieve(self, query: str, k: int | None = None,
                       mode: RetrievalMode | None = None, where: Where | None = None) -> list[Hit]:
        """The ``k`` (default ``config.k``) best records for ``query``, best first."""
        limit = self.config.k if k is None else k
        ranking = (await self._ranking(query, mode, where, limit)).top(limit)
        return [self._hit(position, i, score)
                for position, (i, score) in enumerate(ranking, start=1)]

    async def retrieve_budget(self, query: str, max_tokens: int,
                              mode: RetrievalMode | None = None, where: Where | None = None,
                              order: BudgetOrder | None = None,
                              fill: BudgetFill | None = None) -> list[Hit]:
        """The best records whose token counts sum to at most ``max_tokens``.

        Records are taken in rank order. ``fill="stop"`` ends at the first record that no
        longer fits (PLAYER*'s "top chunks until the budget"); ``"skip"`` passes over it and
        keeps looking for smaller ones. ``order="original"`` returns the chosen records in
        the order they were added (how a prompt reads best), ``"rank"`` best first.
        """
        fill = fill or self.config.budget_fill
        hits: list[Hit] = []
        used = 0
        ranking = await self._ranking(query, mode, where)
        for position, (i, score) in enumerate(ranking.top(len(ranking.ids)), start=1):
            if used + self._tokens[i] > max_tokens:
                if fill == "stop":
                    break
                continue
            hits.append(self._hit(position, i, score))
            used += self._tokens[i]
        if (order or self.config.budget_order) == "original":
            hits.sort(key=lambda hit: hit.id)
        return hits

    async def _ranking(self, query: str, mode: RetrievalMode | None,
                       where: Where | None, limit: int | None = None) -> Ranking:
        mode = mode or self.config.mode
        if mode not in get_args(RetrievalMode):
            raise ValueError(f"unknown memory retrieval mode {mode!r}; expected one of "
                             f"{', '.join(get_args(RetrievalMode))}")
        candidates = self._candidates(where)
        if not query.strip() or (candidates is not None and not len(candidates)):
            return rank(np.zeros(0))
        if mode == "lexical":
            return rank(self.lexical.scores(query), candidates, positive_only=True, limit=limit)
        scores = await self._dense_index(mode).scores(query)
        if mode == "dense":
            return rank(scores, candidates, limit=limit)
        dense = rank(scores, candidates)
        lexical = rank(self.lexical.scores(query), candidates, positive_only=True)
        return reciprocal_rank_fusion([lexical.ids, dense.ids],
                                      [self.config.lexical_weight, self.config.dense_weight],
                                      self.config.rrf_k)

    def _dense_index(self, mode: str) -> DenseIndex:
        if self.dense is None:
            raise ValueError(f"memory retrieval mode {mode!r} needs an embedder; "
                             f"this store was created without one")
        return self.dense

    def _candidates(self, where: Where | None) -> np.ndarray | None:
        if where is None:
            return None
        test = where if callable(where) else _matches(where)
        return np.array([i for i, r in enumerate(self._records) if test(r)], dtype=np.int64)

    def _hit(self, position: int, i: int, score: float) -> Hit:
        return Hit(id=i, record=self._records[i], score=score, rank=position,
                   tokens=self._tokens[i])


def _matches(where: Mapping[str, Any]) -> Callable[[MemoryRecord], bool]:
    """A predicate from ``{name: value or collection of values}`` over fields and meta."""
    fields = set(MemoryRecord.model_fields) - {"meta"}

    def allowed(expected: Any, value: Any) -> bool:
        if isinstance(expected, list | tuple | set | frozenset):
            return value in expected
        return value == expected

    def test(record: MemoryRecord) -> bool:
        return all(allowed(expected, getattr(record, name) if name in fields
                           else record.meta.get(name))
                   for name, expected in where.items())

    return test
