"""MemoryStore: what an agent can ask of its memory."""

from __future__ import annotations

import json

import pytest

from jubensha.memory.hybrid import reciprocal_rank_fusion
from jubensha.memory.store import MemoryConfig, MemoryRecord, MemoryStore
from jubensha.memory.text import TokenizerOptions, count_tokens

DIALOGUE = [
    ("Wang", "I was in the garden picking roses all evening."),
    ("Li", "I found a letter under the door of the study."),
    ("Zhao", "The knife in the kitchen was missing after dinner."),
    ("Wang", "Somebody bought poison at the village shop last week."),
    ("Li", "The butler locked the front door at eleven."),
]


def _store(embedder=None, **config) -> MemoryStore:
    store = MemoryStore(MemoryConfig(**config), embedder=embedder)
    for turn, (speaker, text) in enumerate(DIALOGUE):
        store.add(text, speaker=speaker, turn=turn, kind="speech")
    return store


class TestRetrieve:
    async def test_lexical_finds_the_relevant_record(self) -> None:
        hits = await _store().retrieve("who took the knife from the kitchen?")
        assert hits[0].id == 2
        assert hits[0].record.speaker == "Zhao"
        assert [h.rank for h in hits] == list(range(1, len(hits) + 1))

    async def test_chinese(self) -> None:
        store = MemoryStore()
        for text in ["园丁整个下午都在花园修剪玫瑰。", "书房的门下有一封信。",
                     "厨房里的刀在晚饭后不见了。"]:
            store.add(text)
        assert (await store.retrieve("刀不见了"))[0].id == 2

    async def test_chinese_names_need_keep_words_in_jieba_mode(self) -> None:
        texts = ["张三在书房里看到了李四。", "王五在花园。"]
        plain = MemoryStore()
        named = MemoryStore(MemoryConfig(tokenizer=TokenizerOptions(keep_words=("张三",))))
        for text in texts:
            plain.add(text)
            named.add(text)
        assert await plain.retrieve("张三") == []
        assert [h.id for h in await named.retrieve("张三")] == [0]

    async def test_k_defaults_to_five(self) -> None:
        store = MemoryStore()
        for i in range(8):
            store.add(f"the door was locked at {i}")
        assert len(await store.retrieve("door")) == 5
        assert len(await store.retrieve("door", k=2)) == 2
        assert await store.retrieve("door", k=0) == []

    async def test_dense(self, embedder) -> None:
        hits = await _store(embedder).retrieve("the poison", mode="dense", k=1)
        assert hits[0].id == 3
        assert hits[0].score == pytest.approx(1.0)

    async def test_hybrid_fuses_the_two_rankings(self, embedder) -> None:
        store = _store(embedder, lexical_weight=2.0, rrf_k=10)
        query = "the letter and the knife"
        lexical = await store.retrieve(query, k=10, mode="lexical")
        dense = await store.retrieve(query, k=10, mode="dense")
        expected = reciprocal_rank_fusion([[h.id for h in lexical], [h.id for h in dense]],
                                          [2.0, 1.0], k=10)
        hybrid = await store.retrieve(query, k=10, mode="hybrid")
        assert [h.id for h in hybrid] == expected.ids.tolist()
        assert [h.score for h in hybrid] == pytest.approx(expected.scores.tolist())

    async def test_dense_without_embedder_is_a_clear_error(self) -> None:
        with pytest.raises(ValueError, match="'dense' needs an embedder"):
            await _store().retrieve("knife", mode="dense")

    async def test_unknown_mode_is_a_clear_error(self) -> None:
        with pytest.raises(ValueError, match="unknown memory retrieval mode 'bm25'"):
            await _store().retrieve("knife", mode="bm25")

    async def test_where_filters_on_fields_and_meta(self, embedder) -> None:
        store = _store(embedder)
        store.add("A torn letter was found in the garden.", source="clue", location="garden")
        for mode in ("lexical", "dense", "hybrid"):
            hits = await store.retrieve("letter", mode=mode, where={"source": "clue"})
            assert [h.id for h in hits] == [5]
        hits = await store.retrieve("door", where={"speaker": ["Li", "Zhao"]}, k=10)
        assert {h.record.speaker for h in hits} == {"Li"}
        assert [h.id for h in await store.retrieve("letter", where={"location": "garden"})] == [5]
        assert await store.retrieve("letter", where=lambda r: (r.turn or 0) > 10) == []

    async def test_identical_records_keep_adding_order(self, embedder) -> None:
        store = MemoryStore(embedder=embedder)
        for _ in range(4):
            store.add("the knife in the garden")
        for mode in ("lexical", "dense", "hybrid"):
            assert [h.id for h in await store.retrieve("knife", mode=mode)] == [0, 1, 2, 3]


class TestEmpty:
    @pytest.mark.parametrize("mode", ["lexical", "dense", "hybrid"])
    async def test_empty_store(self, embedder, mode: str) -> None:
        store = MemoryStore(embedder=embedder)
        assert await store.retrieve("knife", mode=mode) == []
        assert await store.retrieve_budget("knife", 100, mode=mode) == []

    @pytest.mark.parametrize("mode", ["lexical", "dense", "hybrid"])
    async def test_empty_query(self, embedder, mode: str) -> None:
        store = _store(embedder)
        assert await store.retrieve("", mode=mode) == []
        assert await store.retrieve("   ", mode=mode) == []
        assert embedder.batches == []


class TestBudget:
    async def test_stops_at_the_budget(self) -> None:
        store = MemoryStore()
        for n in (1, 6, 2, 3):
            store.add(f"the knife {'was here ' * n}")
        ranked = await store.retrieve("knife", k=4)
        budget = ranked[0].tokens + ranked[1].tokens + ranked[2].tokens - 1
        hits = await store.retrieve_budget("knife", budget, order="rank")
        assert [h.id for h in hits] == [h.id for h in ranked[:2]]
        assert sum(h.tokens for h in hits) <= budget

    async def test_stop_versus_skip(self, embedder) -> None:
        store = MemoryStore(MemoryConfig(mode="dense"), embedder=embedder)
        store.add("knife knife knife")                      # cosine 1, 4 tokens
        store.add("knife letter " + "word " * 29)           # cosine 0.71, 40 tokens
        store.add("knife letter letter")                    # cosine 0.45, 4 tokens
        assert [h.tokens for h in await store.retrieve("knife", k=3)] == [4, 40, 4]
        stop = await store.retrieve_budget("knife", 20, fill="stop")
        skip = await store.retrieve_budget("knife", 20, fill="skip")
        assert [h.id for h in stop] == [0]
        assert [(h.id, h.rank) for h in skip] == [(0, 1), (2, 3)]

    async def test_original_or_rank_order(self) -> None:
        store = MemoryStore()
        store.add("a letter")
        store.add("the letter, the letter and the letter")
        original = await store.retrieve_budget("letter", 100)
        ranked = await store.retrieve_budget("letter", 100, order="rank")
        assert [h.id for h in original] == [0, 1]
        assert [h.id for h in ranked] == [1, 0]
        assert [h.rank for h in ranked] == [1, 2]

    async def test_player_star_setting_on_a_real_script(self, datasets, embedder) -> None:
        folder = next(iter(sorted((datasets / "wellplay" / "english").glob("*/json"))))
        store = MemoryStore(embedder=embedder)
        for path in sorted(folder.glob("*.json")):
            if path.name != "script_info.json":
                for text in json.loads(path.read_text("utf-8"))["script"]:
                    store.add_document(text, speaker=path.stem)
        assert all(h.tokens <= 50 for h in await store.retrieve("the murderer", k=50))
        hits = await store.retrieve_budget("who had the knife?", 4000, mode="hybrid")
        assert 0 < sum(h.tokens for h in hits) <= 4000
        assert [h.id for h in hits] == sorted(h.id for h in hits)


class TestAdding:
    def test_add_document_chunks_with_metadata(self) -> None:
        store = MemoryStore(MemoryConfig(chunk_tokens=8))
        text = "The knife was in the garden. The letter was burnt. He ran away."
        ids = store.add_document(text, speaker="Li", act=1)
        records = [store.records[i] for i in ids]
        assert len(ids) > 1
        assert all(count_tokens(r.text) <= 8 for r in records)
        assert all(r.source == "script" and r.speaker == "Li" for r in records)
        assert [r.meta for r in records] == [{"act": 1, "chunk": i} for i in range(len(ids))]

    def test_add_record(self) -> None:
        store = MemoryStore()
        record = MemoryRecord(text="A clue card: the key.", source="clue", turn=4)
        assert store.add_record(record) == 0
        assert store.records == (record,)
        assert len(store) == 1

    async def test_adding_after_queries_touches_only_new_records(self, embedder) -> None:
        store = _store(embedder, lexical_weight=2.0)
        await store.retrieve("knife", mode="hybrid")
        await store.retrieve("door", mode="hybrid")
        embedded, rebuilds = len(embedder.texts), store.lexical.rebuilds
        store.add("The gardener saw a stranger with a knife.", speaker="Qian")
        store.add("The poison bottle was empty.", speaker="Qian")
        hits = await store.retrieve("stranger with a knife", mode="hybrid", k=1)
        assert hits[0].record.speaker == "Qian"
        new = embedder.texts[embedded:]
        assert new == ["The gardener saw a stranger with a knife.",
                       "The poison bottle was empty.", "stranger with a knife"]
        assert store.lexical.rebuilds == rebuilds + 1
