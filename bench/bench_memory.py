"""Memory retrieval speed on a realistic memory, as figures and ratios from one run.

The memory is 2,000 chunks of at most 50 tokens (PLAYER*'s segment size) cut from the
WellPlay scripts in ../shared/datasets (English and Chinese alternating), or from the
bundled scripts when the datasets are absent. Dense vectors come from a fast hashing
embedder, so the figures measure the memory code, not a model.

    python bench/bench_memory.py [--records 2000] [--queries 200] [--datasets PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
import zlib
from collections.abc import Awaitable, Callable
from itertools import zip_longest
from pathlib import Path

import numpy as np

from jubensha.memory.dense import EmbeddingCache
from jubensha.memory.lexical import BM25Index
from jubensha.memory.store import MemoryConfig, MemoryStore, RetrievalMode
from jubensha.memory.text import chunk, tokenize
from jubensha.scripts.bundled import bundled_scripts, find_script

DATASETS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


class HashEmbedder:
    """Character n-gram hashing into 256 dimensions: cheap, deterministic, bilingual."""

    async def embed(self, texts: list[str]) -> list[list[float]]:
        rows = np.zeros((len(texts), 256), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in tokenize(text, zh_mode="chars"):
                rows[row, zlib.crc32(token.encode()) % 256] += 1.0
        return rows.tolist()


def dataset_texts(root: Path) -> list[list[str]]:
    """The WellPlay character scripts, one list per language."""
    texts: list[list[str]] = []
    for lang in ("english", "chinese"):
        paths = sorted((root / "wellplay" / lang).glob("*/json/*.json"))
        texts.append([text for path in paths if path.name != "script_info.json"
                      for text in json.loads(path.read_text("utf-8")).get("script", [])])
    return texts


def bundled_texts() -> list[list[str]]:
    texts = []
    for name in bundled_scripts():
        script = find_script(name)
        texts.append(script.background)
        for character in script.characters:
            texts.append(character.story)
            texts.extend(sheet.text for sheet in character.acts)
        texts.extend(clue.text for clue in script.clues)
    return [texts]


def memory_chunks(root: Path, limit: int) -> list[str]:
    """Up to ``limit`` 50-token chunks, alternating between the languages available."""
    sources = dataset_texts(root) if root.is_dir() else bundled_texts()
    per_source = [[piece for text in texts if text for piece in chunk(text, 50)]
                  for texts in sources]
    mixed = [piece for group in zip_longest(*per_source) for piece in group if piece]
    return mixed[:limit]


def build(chunks: list[str], embedder: HashEmbedder | None) -> MemoryStore:
    store = MemoryStore(MemoryConfig(), embedder=embedder)
    for i, text in enumerate(chunks):
        store.add(text, source="script", turn=i)
    return store


async def timed(action: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    await action()
    return time.perf_counter() - start


async def throughput(store: MemoryStore, queries: list[str], mode: RetrievalMode) -> float:
    """Queries per second from the median query time (robust to other load on the machine)."""
    await store.retrieve(queries[0], mode=mode)  # index and embed everything first
    times = [await timed(lambda q=query: store.retrieve(q, k=5, mode=mode)) for query in queries]
    return 1 / statistics.median(times)


async def incremental_vs_rebuild(chunks: list[str], extra: list[str],
                                 mode: RetrievalMode) -> tuple[float, float]:
    """Median seconds of (add one record, query) on a warm store, and of a full rebuild."""
    store = build(chunks, HashEmbedder())
    await store.retrieve(extra[0], mode=mode)

    async def add_and_query(text: str) -> None:
        store.add(text, source="dialogue")
        await store.retrieve(text, mode=mode)

    per_add = statistics.median([await timed(lambda t=text: add_and_query(t)) for text in extra])
    rebuilds = [await timed(lambda: build(chunks + extra[:1], HashEmbedder())
                            .retrieve(extra[0], mode=mode)) for _ in range(3)]
    return per_add, statistics.median(rebuilds)


async def lexical_parts(chunks: list[str]) -> tuple[float, float]:
    """Seconds to tokenise every chunk, and to rebuild the bm25s matrix from cached tokens."""
    start = time.perf_counter()
    for text in chunks:
        tokenize(text)
    tokenise = time.perf_counter() - start
    index = BM25Index()
    index.add(chunks)
    index.search("x", 1)
    index.add(["one more"])
    start = time.perf_counter()
    index.search("x", 1)
    return tokenise, time.perf_counter() - start


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--datasets", type=Path, default=DATASETS)
    args = parser.parse_args()

    chunks = memory_chunks(args.datasets, args.records + 20)
    memory, extra = chunks[:args.records], chunks[args.records:]
    if len(extra) < 20:
        raise SystemExit(f"only {len(chunks)} chunks available; need {args.records + 20}")
    step = max(1, len(memory) // args.queries)
    queries = [" ".join(text.split()[:8]) if " " in text else text[:12]
               for text in memory[::step][:args.queries]]
    tokenize("预热")  # load jieba outside the timings
    print(f"memory: {len(memory)} chunks of <=50 tokens, {len(queries)} queries, k=5")

    lexical = await throughput(build(memory, None), queries, "lexical")
    dense = await throughput(build(memory, HashEmbedder()), queries, "dense")
    hybrid = await throughput(build(memory, HashEmbedder()), queries, "hybrid")
    print(f"lexical: {lexical:8.1f} queries/s")
    print(f"dense:   {dense:8.1f} queries/s (hash embedder)")
    print(f"hybrid:  {hybrid:8.1f} queries/s (hash embedder); lexical/hybrid = "
          f"{lexical / hybrid:.2f}x")

    tokenise, matrix = await lexical_parts(memory)
    print(f"lexical index parts: tokenising all {tokenise * 1000:.1f} ms, bm25s matrix "
          f"rebuild from cached tokens {matrix * 1000:.1f} ms")
    for mode in ("lexical", "hybrid"):
        per_add, rebuild = await incremental_vs_rebuild(memory, extra, mode)
        print(f"{mode}: add one record + query {per_add * 1000:.1f} ms, full rebuild + query "
              f"{rebuild * 1000:.1f} ms; rebuild/incremental = {rebuild / per_add:.1f}x")

    cache = EmbeddingCache(HashEmbedder())
    await cache.vectors(memory)
    again = await timed(lambda: cache.vectors(memory))
    print(f"embedding cache: {len(memory)} texts looked up again in {again * 1000:.1f} ms; "
          f"{cache.embedded} distinct texts embedded, each once")
    print(f"memory: hybrid {hybrid:.0f} queries/s over {len(memory)} chunks (hash embedder)")


if __name__ == "__main__":
    asyncio.run(main())
