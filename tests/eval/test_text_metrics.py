"""Text similarity formulas on hand-computed English and Chinese fixtures."""

from __future__ import annotations

import math
import random

import pytest

from jubensha.eval.text import (
    ROUGE_TOKENS,
    cosine,
    document_embedding,
    embedding_cosine,
    f_beta,
    lcs_length,
    ngram_jaccard,
    ngrams,
    rouge_l,
    tfidf_cosine,
    tfidf_vectors,
)
from jubensha.memory.text import TokenizerOptions

CHARS = TokenizerOptions(zh_mode="chars")
IDF_ONE_DOC = 1 + math.log(3 / 2)
"""idf of a term found in one of two documents: ln((1 + 2) / (1 + 1)) + 1."""


def _dp_lcs(a: list[str], b: list[str]) -> int:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            table[i + 1][j + 1] = table[i][j] + 1 if x == y else max(table[i][j + 1],
                                                                     table[i + 1][j])
    return table[-1][-1]


def test_bit_parallel_lcs_equals_the_textbook_dynamic_programme() -> None:
    rng = random.Random(7)
    for _ in range(500):
        a = [rng.choice("abcd") for _ in range(rng.randint(0, 12))]
        b = [rng.choice("abcd") for _ in range(rng.randint(0, 12))]
        assert lcs_length(a, b) == _dp_lcs(a, b)


def test_rouge_l_english_by_hand() -> None:
    # LCS of 7 candidate and 6 reference tokens is 6 ("found" is extra).
    score = rouge_l("The cat was found under the bed", "the cat was under the bed")
    assert score.precision == pytest.approx(6 / 7)
    assert score.recall == 1.0
    assert score.fmeasure == pytest.approx(12 / 13)


def test_rouge_l_matches_rouge_score_published_example() -> None:
    # rouge-score README: score(target="The quick brown fox jumps over the lazy dog",
    # prediction="The quick brown dog jumps on the log.") gives rougeL
    # precision 0.625, recall 0.5556, fmeasure 0.5882 (LCS "the quick brown jumps the").
    score = rouge_l("The quick brown dog jumps on the log.",
                    "The quick brown fox jumps over the lazy dog")
    assert (score.precision, score.recall) == pytest.approx((0.625, 5 / 9))
    assert score.fmeasure == pytest.approx(0.5882352941176471)


def test_rouge_l_chinese_counts_characters() -> None:
    # 10 and 7 characters; the LCS is 花园里刀 (4).
    score = rouge_l("警察在花园里发现了刀", "花园里有一把刀")
    assert ROUGE_TOKENS.zh_mode == "chars"
    assert (score.precision, score.recall) == pytest.approx((4 / 10, 4 / 7))
    assert score.fmeasure == pytest.approx(8 / 17)


def test_rouge_l_beta_weights_recall() -> None:
    score = rouge_l("警察在花园里发现了刀", "花园里有一把刀", beta=2.0)
    assert score.fmeasure == pytest.approx(10 / 19)  # 5PR / (4P + R) with P=2/5, R=4/7
    assert f_beta(0.0, 1.0) == 0.0


def test_rouge_l_on_empty_text_is_zero_and_token_lists_are_used_as_given() -> None:
    assert rouge_l("", "something").fmeasure == 0.0
    assert rouge_l(["张三", "杀", "了"], ["张三", "了"]).recall == 1.0


def test_trigram_jaccard_english() -> None:
    # {the cat sat, cat sat on, sat on the, on the mat} vs {.., sat on a, on a mat}: 2 / 6
    assert ngram_jaccard("the cat sat on the mat", "the cat sat on a mat") == pytest.approx(1 / 3)


def test_trigram_jaccard_chinese_characters() -> None:
    # 张三杀 三杀了 shared; 杀了李 了李四 / 杀了王 了王五 not: 2 / 6
    assert ngram_jaccard("张三杀了李四", "张三杀了王五", tokens=CHARS) == pytest.approx(1 / 3)


def test_ngram_jaccard_on_word_lists_and_short_texts() -> None:
    assert ngram_jaccard(["张三", "杀", "了", "李四"], ["张三", "杀", "了", "王五"]) == (
        pytest.approx(1 / 3))
    assert ngrams(["a", "b"], 3) == set()
    assert ngram_jaccard("one two", "one two") == 0.0  # no trigram on either side
    assert ngram_jaccard("a b", "a c", n=1) == pytest.approx(1 / 3)
    with pytest.raises(ValueError):
        ngrams(["a"], 0)


def test_tfidf_cosine_by_hand_english() -> None:
    # "the" and "sat" in both documents (idf 1), "cat"/"dog" in one (idf 1 + ln 1.5):
    # cos = 2 / (2 + idf^2)
    expected = 2 / (2 + IDF_ONE_DOC**2)
    assert tfidf_cosine("the cat sat", "the dog sat") == pytest.approx(expected)


def test_tfidf_cosine_by_hand_chinese() -> None:
    expected = 3 / (3 + IDF_ONE_DOC**2)  # 花 园 有 shared, 刀 / 毒 not
    assert tfidf_cosine("花园有刀", "花园有毒", tokens=CHARS) == pytest.approx(expected)


def test_tfidf_counts_repeats_and_takes_document_frequencies_from_a_corpus() -> None:
    matrix, vocabulary = tfidf_vectors(["a a b", "b"])
    assert vocabulary == ["a", "b"]
    raw = [2 * IDF_ONE_DOC, 1.0]  # tf 2 times idf for "a", tf 1 times idf 1 for "b"
    norm = math.hypot(*raw)
    assert matrix[0].tolist() == pytest.approx([raw[0] / norm, raw[1] / norm])
    # With a third document holding "cat", "cat" is rarer than "sat" is not: idf changes.
    assert tfidf_cosine("cat sat", "cat ran", corpus=["dog sat"]) != pytest.approx(
        tfidf_cosine("cat sat", "cat ran"))
    assert tfidf_cosine("", "anything") == 0.0


class UnitAxisEmbedder:
    """Unit vector per text on the axes (knife, poison): chunking matters for its mean."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    async def embed(self, texts: list[str]) -> list[list[float]]:
        self.batches.append(list(texts))
        out = []
        for text in texts:
            x, y = text.count("knife"), text.count("poison")
            norm = math.hypot(x, y) or 1.0
            out.append([x / norm, y / norm])
        return out


async def test_embedding_cosine_averages_chunk_embeddings() -> None:
    embedder = UnitAxisEmbedder()
    # Each sentence is its own chunk at max_tokens=4: means (1, 0) and (0.5, 0.5).
    score = await embedding_cosine("The knife. The knife.", "The knife. The poison poison.",
                                   embedder, max_tokens=4)
    assert embedder.batches == [["The knife.", "The knife."], ["The knife.", "The poison poison."]]
    assert score == pytest.approx(math.sqrt(0.5))
    # Embedded whole, the second document would be (1, 2)/sqrt(5): cosine 0.447, not 0.707.
    whole = await embedding_cosine("The knife. The knife.", "The knife. The poison poison.",
                                   embedder, max_tokens=1000)
    assert whole == pytest.approx(1 / math.sqrt(5))


async def test_document_embedding_rejects_empty_documents() -> None:
    with pytest.raises(ValueError, match="empty"):
        await document_embedding("   ", UnitAxisEmbedder())
    assert cosine([0, 0], [1, 0]) == 0.0
