"""Internal.

Text similarity formulas that work on Chinese as well as English.

All of them tokenise with ``jubensha.memory.text.tokenize`` (English words and numbers;
Chinese as jieba words or single characters), the same cutting that retrieval uses.
``rouge-score`` cannot be used on Chinese: its tokenizer keeps only ``[a-z0-9]`` and
deletes every Han character. Formulas and defaults are documented in docs/evaluation.md.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel

from jubensha.llm.base import Embedder
from jubensha.memory.text import TokenizerOptions, chunk
from jubensha.segmenter import jieba_module

ROUGE_TOKENS = TokenizerOptions(zh_mode="chars")
"""ROUGE-L counts Chinese per character, the usual convention for Chinese ROUGE."""
WORD_TOKENS = TokenizerOptions(zh_mode="jieba")
"""TF-IDF and n-grams use jieba words, so a Chinese trigram spans words as in English."""


_RELEASE_BREAKS = (  # rouge-chinese 1.0.3, ``Rouge.cut_sent``: a newline after these
    (re.compile("([。！？?])([^”’])"), r"\1\n\2"),
    (re.compile(r"(\.{6})([^”’])"), r"\1\n\2"),
    (re.compile("(…{2})([^”’])"), r"\1\n\2"),
    (re.compile("([。！？?][”’])([^，。！？?])"), r"\1\n\2"),
)


def release_tokens(text: str) -> list[str]:
    """The tokens the MIRAGE release's ROUGE-L counts (``data_loader.cal_rouge_l``, which
    calls ``rouge_chinese.Rouge``): jieba words joined by spaces, cut into "sentences"
    after sentence-final marks and at newlines, each sentence's whitespace collapsed,
    then split on spaces. A sentence of whitespace alone (a blank line; the space after a
    sentence-final mark that is followed by a newline) is kept as one empty token, which
    counts in the lengths and matches another empty token in the LCS. Punctuation and case
    are kept. An all-whitespace text has no token."""
    joined = " ".join(jieba_module().cut(text))
    for pattern, replacement in _RELEASE_BREAKS:
        joined = pattern.sub(replacement, joined)
    sentences = [" ".join(s.split()) for s in joined.rstrip().split("\n") if s]
    return [token for sentence in sentences for token in sentence.split(" ")]


def release_rouge(hypothesis: str, reference: str) -> PRF:
    """The MIRAGE release's ROUGE-L of a reconstruction against a script part: 0 when
    either text is empty, else LCS precision and recall over ``release_tokens`` and
    ``F = 2 P R / (P + R + 1e-8)``, as ``rouge_chinese`` computes it. Where the release
    would raise (a text of whitespace alone) this gives 0."""
    hyp, ref = release_tokens(hypothesis), release_tokens(reference)
    if not hypothesis or not reference or not hyp or not ref:
        return PRF(precision=0.0, recall=0.0, fmeasure=0.0)
    lcs = lcs_length(hyp, ref)
    precision, recall = lcs / len(hyp), lcs / len(ref)
    return PRF(precision=precision, recall=recall,
               fmeasure=2.0 * ((precision * recall) / (precision + recall + 1e-8)))


def rouge_l_release(hypothesis: str, reference: str) -> float:
    """ROUGE-L F exactly as the MIRAGE release's ``cal_rouge_l`` computes it, in English
    and Chinese (docs/evaluation.md)."""
    return release_rouge(hypothesis, reference).fmeasure


class PRF(BaseModel):
    precision: float
    recall: float
    fmeasure: float


def _tokens(text: str | Sequence[str], options: TokenizerOptions) -> list[str]:
    return options.tokenize(text) if isinstance(text, str) else list(text)


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token sequences.

    Bit-parallel (Allison & Dix 1986; Crochemore et al. 2001): one machine-word operation
    per ``len(b) * len(a) / 64`` cells instead of one Python step per cell, so a chat
    history against a whole script (10^4 x 10^4 tokens) takes well under a second.
    """
    if len(a) < len(b):
        a, b = b, a
    masks: dict[str, int] = {}
    for i, token in enumerate(a):
        masks[token] = masks.get(token, 0) | (1 << i)
    full = (1 << len(a)) - 1
    row = full
    for token in b:
        match = row & masks.get(token, 0)
        row = ((row + match) | (row - match)) & full
    return len(a) - row.bit_count()


def f_beta(precision: float, recall: float, beta: float = 1.0) -> float:
    """``(1 + b^2) P R / (b^2 P + R)``; 0 when both are 0. ``beta=1`` is rouge-score's F."""
    if precision == 0 or recall == 0:
        return 0.0
    b2 = beta * beta
    return (1 + b2) * precision * recall / (b2 * precision + recall)


def rouge_l(candidate: str | Sequence[str], reference: str | Sequence[str],
            tokens: TokenizerOptions = ROUGE_TOKENS, beta: float = 1.0) -> PRF:
    """ROUGE-L of ``candidate`` against ``reference``: ``P = LCS / |candidate|``,
    ``R = LCS / |reference|``, ``F = f_beta(P, R)``; all 0 if either side has no token.

    Texts are tokenised with ``tokens``; token lists are used as given.
    """
    cand, ref = _tokens(candidate, tokens), _tokens(reference, tokens)
    if not cand or not ref:
        return PRF(precision=0.0, recall=0.0, fmeasure=0.0)
    lcs = lcs_length(cand, ref)
    precision, recall = lcs / len(cand), lcs / len(ref)
    return PRF(precision=precision, recall=recall, fmeasure=f_beta(precision, recall, beta))


def ngrams(tokens: Sequence[str], n: int) -> set[tuple[str, ...]]:
    """The distinct ``n``-grams of a token sequence (none when it is shorter than ``n``)."""
    if n < 1:
        raise ValueError(f"n-grams need n >= 1, got {n}")
    return {tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)}


def ngram_jaccard(a: str | Sequence[str], b: str | Sequence[str], n: int = 3,
                  tokens: TokenizerOptions = WORD_TOKENS) -> float:
    """``|A ∩ B| / |A ∪ B|`` over the sets of distinct ``n``-grams; 0 when both are empty."""
    left, right = ngrams(_tokens(a, tokens), n), ngrams(_tokens(b, tokens), n)
    union = left | right
    return len(left & right) / len(union) if union else 0.0


def tfidf_vectors(documents: Sequence[str | Sequence[str]],
                  tokens: TokenizerOptions = WORD_TOKENS) -> tuple[np.ndarray, list[str]]:
    """Row-normalised TF-IDF matrix of ``documents`` and its vocabulary.

    scikit-learn's ``TfidfVectorizer`` defaults, written out so no 40 MB dependency is
    needed: raw counts, ``idf = ln((1 + N) / (1 + df)) + 1``, rows scaled to unit L2 norm.
    """
    counts = [Counter(_tokens(doc, tokens)) for doc in documents]
    vocabulary = sorted(set().union(*counts))
    column = {term: j for j, term in enumerate(vocabulary)}
    matrix = np.zeros((len(counts), len(vocabulary)))
    for i, count in enumerate(counts):
        for term, tf in count.items():
            matrix[i, column[term]] = tf
    df = (matrix > 0).sum(axis=0)
    matrix *= np.log((1 + len(counts)) / (1 + df)) + 1
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0), vocabulary


def tfidf_cosine(a: str | Sequence[str], b: str | Sequence[str],
                 tokens: TokenizerOptions = WORD_TOKENS,
                 corpus: Sequence[str | Sequence[str]] = ()) -> float:
    """Cosine of the TF-IDF vectors of ``a`` and ``b``; document frequencies come from
    ``a``, ``b`` and ``corpus`` (by default the two documents alone, as ThinkThrice did)."""
    matrix, _ = tfidf_vectors([a, b, *corpus], tokens)
    return float(matrix[0] @ matrix[1])


def cosine(u: Sequence[float] | np.ndarray, v: Sequence[float] | np.ndarray) -> float:
    """Cosine similarity; 0 when either vector is zero."""
    x, y = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    norm = float(np.linalg.norm(x) * np.linalg.norm(y))
    return float(x @ y) / norm if norm > 0 else 0.0


async def document_embedding(text: str, embedder: Embedder, max_tokens: int = 400) -> np.ndarray:
    """The mean of the embeddings of ``text``'s consecutive chunks of at most ``max_tokens``
    (``memory.text.chunk``: whole sentences, no overlap), as ThinkThrice section 6.3 does
    for documents longer than the embedder's input."""
    pieces = chunk(text, max_tokens)
    if not pieces:
        raise ValueError("cannot embed an empty document")
    vectors = np.asarray(await embedder.embed(pieces), dtype=float)
    if vectors.shape[0] != len(pieces):
        raise ValueError(f"embedder returned {vectors.shape[0]} vectors for {len(pieces)} chunks")
    return vectors.mean(axis=0)


async def embedding_cosine(a: str, b: str, embedder: Embedder, max_tokens: int = 400) -> float:
    """Cosine of the chunk-averaged embeddings of two documents."""
    return cosine(await document_embedding(a, embedder, max_tokens),
                  await document_embedding(b, embedder, max_tokens))
