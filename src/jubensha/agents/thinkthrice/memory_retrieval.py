"""Internal.

Memory Retrieval (MR): every observation goes into the seat's own store; prompts get
the top k records most similar to what is being said now.

The paper embeds observations with the OpenAI API and searches them with Faiss; here the
store retrieves by BM25 (jieba for Chinese), by embeddings or by both (``retrieval``).
Records are the events as the seat saw them, one line each ("Tom asks Nora: ..."). Only
lexical retrieval is free: dense and hybrid modes embed every record and query. Each seat
keeps its own vectors: a cache shared by the seats of an embedder (most lines are public,
so each would be embedded once per game) would hold every seat's private lines where any
seat could read them (docs/isolation.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from jubensha.agents.toolkit import clip
from jubensha.engine import ActStarted, Event, GameEnded
from jubensha.llm import Embedder
from jubensha.memory.dense import EmbeddingCache
from jubensha.memory.store import MemoryConfig, MemoryRecord, MemoryStore, RetrievalMode
from jubensha.memory.text import TokenizerOptions
from jubensha.prompts import render


class EpisodicMemory:
    """One seat's observations, recalled by similarity to a query."""

    def __init__(self, lang: str, names: Sequence[str], k: int, mode: RetrievalMode,
                 embedder: Embedder | None, record_chars: int) -> None:
        config = MemoryConfig(mode=mode, k=k, tokenizer=TokenizerOptions(keep_words=tuple(names)))
        self.lang = lang
        self.record_chars = record_chars
        vectors = EmbeddingCache(embedder) if embedder is not None and mode != "lexical" else None
        self.store = MemoryStore(config, vectors)

    def line(self, event: Event) -> str:
        """How the seat remembers ``event`` (empty for events with nothing to remember)."""
        if isinstance(event, ActStarted) and not event.public_text or isinstance(event, GameEnded):
            return ""
        return render("thinkthrice", "line", self.lang, **event.model_dump())

    def remember(self, event: Event) -> None:
        text = self.line(event)
        if text:
            speaker = getattr(event, "speaker", None)
            self.store.add(text, source=event.type, speaker=speaker, turn=event.index)

    async def recall(self, query: str, exclude: Sequence[int] = (),
                     speaker: str | None = None) -> list[str]:
        """The top k remembered lines for ``query``, best first, each clipped; ``exclude``
        drops the events being answered (they are already in the prompt), ``speaker``
        keeps only what that seat said."""
        skip = set(exclude)

        def wanted(record: MemoryRecord) -> bool:
            return record.turn not in skip and (speaker is None or record.speaker == speaker)

        hits = await self.store.retrieve(query, where=wanted)
        return [clip(hit.record.text, self.record_chars) for hit in hits]
