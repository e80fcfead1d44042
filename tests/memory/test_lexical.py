"""BM25 over English and Chinese texts, growing as texts arrive."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest

from jubensha.memory.lexical import BM25Index
from jubensha.memory.text import TokenizerOptions

ENGLISH = [
    "The gardener trimmed the roses all afternoon.",
    "Dinner was served at eight in the dining room.",
    "A bloody knife was hidden under the piano in the music room.",
    "The maid heard footsteps on the stairs at midnight.",
]
CHINESE = [
    "园丁整个下午都在修剪玫瑰。",
    "晚饭八点在餐厅开始。",
    "一把带血的刀藏在琴房的钢琴下面。",
    "女仆半夜听到楼梯上有脚步声。",
]


def _index(texts: list[str], **options: str) -> BM25Index:
    index = BM25Index(TokenizerOptions(**options))
    index.add(texts)
    return index


def test_english_relevant_text_ranks_first() -> None:
    hits = _index(ENGLISH).search("where was the knife hidden?", 3)
    assert hits[0][0] == 2
    assert all(score > 0 for _, score in hits)


@pytest.mark.parametrize("zh_mode", ["jieba", "chars"])
def test_chinese_relevant_text_ranks_first(zh_mode: str) -> None:
    assert _index(CHINESE, zh_mode=zh_mode).search("钢琴下面的刀", 3)[0][0] == 2


def test_only_texts_sharing_a_token_are_returned() -> None:
    assert [i for i, _ in _index(ENGLISH).search("roses", 5)] == [0]


def test_empty_index() -> None:
    index = BM25Index()
    assert index.search("knife", 5) == []
    assert len(index.scores("knife")) == 0


def test_query_without_known_tokens() -> None:
    index = _index(ENGLISH)
    assert index.search("xylophone!", 5) == []
    assert index.search("", 5) == []
    assert not index.scores("...").any()


def test_texts_without_tokens_score_zero() -> None:
    index = _index(["...", "  "])
    assert index.search("knife", 5) == []
    index.add(["the knife"])
    assert [i for i, _ in index.search("knife", 5)] == [2]


def test_adds_rebuild_once_at_the_next_query_and_tokenise_each_text_once() -> None:
    class Counting(TokenizerOptions):
        seen: ClassVar[list[str]] = []

        def tokenize(self, text: str) -> list[str]:
            self.seen.append(text)
            return super().tokenize(text)

    index = BM25Index(Counting())
    index.add(ENGLISH[:2])
    index.search("knife", 1)
    index.search("piano", 1)
    assert index.rebuilds == 1
    index.add([ENGLISH[2]])
    index.add([ENGLISH[3]])
    assert index.rebuilds == 1
    assert index.search("knife", 1)[0][0] == 2
    assert index.rebuilds == 2
    documents = [t for t in Counting.seen if t in ENGLISH]
    assert documents == ENGLISH


def test_incremental_scores_equal_a_fresh_index() -> None:
    grown = _index(ENGLISH[:2])
    grown.search("knife", 1)
    grown.add(ENGLISH[2:])
    fresh = _index(ENGLISH)
    query = "knife in the music room at midnight"
    np.testing.assert_allclose(grown.scores(query), fresh.scores(query), rtol=1e-6)
