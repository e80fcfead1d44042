"""Dense retrieval with the keyword test embedder: cosine, batching and caching."""

from __future__ import annotations

import math

import pytest

from jubensha.memory.dense import DenseIndex, EmbeddingCache

TEXTS = [
    "a knife and a letter",      # knife 1, letter 1
    "poison in the garden",      # poison 1, garden 1
    "the knife, the knife",      # knife 2
    "a 信 hidden in the 花园",    # 信 1, 花园 1
]


async def test_cosine_scores_and_ranking(embedder) -> None:
    index = DenseIndex(embedder)
    index.add(TEXTS)
    scores = await index.scores("knife")
    assert scores.tolist() == pytest.approx([1 / math.sqrt(2), 0.0, 1.0, 0.0])
    assert [i for i, _ in await index.search("knife", 2)] == [2, 0]


async def test_ties_keep_adding_order(embedder) -> None:
    index = DenseIndex(embedder)
    index.add(["the garden", "no keyword here", "garden path", "in the garden"])
    assert [i for i, _ in await index.search("garden", 4)] == [0, 2, 3, 1]


async def test_chinese_texts(embedder) -> None:
    index = DenseIndex(embedder)
    index.add(TEXTS)
    assert (await index.search("花园里的信", 1))[0][0] == 3


async def test_new_texts_are_embedded_in_batches(embedder) -> None:
    index = DenseIndex(embedder, batch_size=32)
    index.add(f"letter {i}" for i in range(70))
    await index.embed_pending()
    assert [len(batch) for batch in embedder.batches] == [32, 32, 6]


async def test_nothing_is_embedded_twice(embedder) -> None:
    cache = EmbeddingCache(embedder)
    first, second = DenseIndex(cache), DenseIndex(cache)
    first.add(TEXTS + TEXTS[:1])
    await first.search("knife", 1)
    second.add(TEXTS[1:])
    await second.search("knife", 1)
    await first.search("knife", 1)
    assert sorted(embedder.texts) == sorted([*TEXTS, "knife"])
    assert cache.embedded == len(TEXTS) + 1


async def test_adding_after_a_query_embeds_only_the_new_texts(embedder) -> None:
    index = DenseIndex(embedder)
    index.add(TEXTS[:2])
    await index.search("garden", 1)
    index.add(TEXTS[2:])
    assert (await index.search("knife", 1))[0][0] == 2
    assert embedder.batches[-2:] == [TEXTS[2:], ["knife"]]


async def test_many_adds_grow_the_matrix(embedder) -> None:
    index = DenseIndex(embedder)
    for i in range(40):
        index.add([f"{'knife ' * (i % 3)}letter {i}"])
        await index.embed_pending()
    scores = await index.scores("letter")
    assert len(scores) == 40
    assert scores[1] == pytest.approx(1 / math.sqrt(2))


async def test_zero_vectors_score_zero(embedder) -> None:
    index = DenseIndex(embedder)
    index.add(["no keyword at all"])
    assert (await index.scores("knife")).tolist() == [0.0]
    assert (await index.scores("nothing either")).tolist() == [0.0]


async def test_empty_index(embedder) -> None:
    index = DenseIndex(embedder)
    assert await index.search("knife", 3) == []
    assert embedder.batches == []


class _Broken:
    def __init__(self, vectors: list[list[list[float]]]) -> None:
        self.vectors = vectors

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return self.vectors.pop(0)


async def test_wrong_vector_count_is_a_clear_error() -> None:
    cache = EmbeddingCache(_Broken([[[1.0]]]))
    with pytest.raises(ValueError, match="returned 1 vectors for 2 texts"):
        await cache.vectors(["a", "b"])


async def test_changing_dimension_is_a_clear_error() -> None:
    cache = EmbeddingCache(_Broken([[[1.0, 0.0]], [[1.0, 0.0, 0.0]]]))
    await cache.vectors(["a"])
    with pytest.raises(ValueError, match="length 3, earlier ones had length 2"):
        await cache.vectors(["b"])
