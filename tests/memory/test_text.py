"""Bilingual text tools: what retrieval, budgets and metrics may rely on."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jubensha.memory.text import (
    TokenizerOptions,
    chunk,
    count_tokens,
    detect_language,
    split_sentences,
    tokenize,
)


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


class TestLanguage:
    def test_english_and_chinese(self) -> None:
        assert detect_language("The butler was in the library at ten.") == "en"
        assert detect_language("管家十点在书房里。") == "zh"

    def test_a_chinese_name_in_english_stays_english(self) -> None:
        assert detect_language("Officer Li met 张三 in the garden after dinner.") == "en"

    def test_an_english_word_in_chinese_stays_chinese(self) -> None:
        assert detect_language("他说OK，然后离开了房间。") == "zh"

    def test_text_without_letters_is_english(self) -> None:
        assert detect_language("21:10 — 3.5!") == "en"


class TestTokenize:
    def test_english_is_lower_cased_words_without_punctuation(self) -> None:
        assert tokenize("The Butler's knife, at 3.5 metres!") == [
            "the", "butler", "knife", "at", "3.5", "metres"]

    def test_chinese_words_with_jieba_keep_every_character(self) -> None:
        text = "张三在书房里看到了李四"
        tokens = tokenize(text)
        assert "书房" in tokens
        assert "".join(tokens) == text

    def test_names_kept_whole_in_jieba_mode(self) -> None:
        assert "张三" not in tokenize("张三在书房里")
        tokens = tokenize("张三在书房里，李四在花园。", keep_words=("张三", "李四", "Officer Li"))
        assert tokens[:2] == ["张三", "在"]
        assert "李四" in tokens

    def test_chinese_characters_mode(self) -> None:
        assert tokenize("花园里的信", zh_mode="chars") == ["花", "园", "里", "的", "信"]

    @pytest.mark.parametrize("text", ["He left at 21:10.", "他21:10离开了。",
                                      "他２１：１０离开了。"])
    def test_clock_time_is_one_token(self, text: str) -> None:
        assert "21:10" in tokenize(text)

    def test_mixed_text_keeps_both_languages(self) -> None:
        tokens = tokenize("Officer Li 在花园 found the letter")
        assert {"officer", "li", "found", "letter"} <= set(tokens)
        assert "花园" in tokens

    def test_stopwords_are_removed_only_on_request(self) -> None:
        assert "the" in tokenize("the knife")
        assert tokenize("the knife", stopwords=True) == ["knife"]
        assert "一些" not in tokenize("一些毒药", stopwords=True)

    def test_options_object_tokenises_the_same(self) -> None:
        options = TokenizerOptions(stopwords=True, keep_words=("张三",))
        text = "The poison 张三在花园里"
        assert options.tokenize(text) == tokenize(text, stopwords=True, keep_words=("张三",))

    def test_jieba_loads_quietly(self) -> None:
        code = "from jubensha.memory.text import tokenize; print(tokenize('张三在书房'))"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True)
        assert done.stderr == ""
        assert "书房" in done.stdout


class TestSentences:
    def test_english_rules(self) -> None:
        text = ('Mr. Smith left at 21:10. He was 1.8 m tall! "Run!" she cried. '
                "Was it J. K. Rowling? At 9 p.m. he came back. I said no. So\nA new line")
        assert split_sentences(text) == [
            "Mr. Smith left at 21:10.", "He was 1.8 m tall!", '"Run!" she cried.',
            "Was it J. K. Rowling?", "At 9 p.m. he came back.", "I said no.", "So",
            "A new line"]

    def test_chinese_rules(self) -> None:
        text = "“你好。”他说。我不知道……然后呢？好吧；再见！21:10他走了"
        assert split_sentences(text) == [
            "“你好。”", "他说。", "我不知道……", "然后呢？", "好吧；", "再见！", "21:10他走了"]

    def test_blank_text_has_no_sentences(self) -> None:
        assert split_sentences("  \n ") == []


class TestCountTokens:
    def test_each_chinese_character_and_mark_counts_one(self) -> None:
        assert count_tokens("张三在书房。") == 6

    def test_english_words_count_about_one_point_three(self) -> None:
        assert count_tokens("knife") == 1
        assert count_tokens("one two three four five six seven eight nine ten") == 13

    def test_empty_is_zero(self) -> None:
        assert count_tokens("") == 0

    @given(st.text(), st.text())
    def test_adding_text_never_lowers_the_count(self, left: str, right: str) -> None:
        assert count_tokens(left + right) >= count_tokens(left)


_PIECES = st.sampled_from([
    "The", "butler", "saw", "21:10", "3.5", "Mr.", "knife,", "garden.", "Really?", "no!",
    "张", "三", "在", "书房", "里", "。", "，", "！", "……", "“", "”", "\n", " ", "  ",
])


class TestChunk:
    @settings(max_examples=150, deadline=None)
    @given(st.lists(_PIECES, max_size=120).map("".join), st.integers(1, 40))
    def test_chunks_fit_and_lose_nothing(self, text: str, limit: int) -> None:
        chunks = chunk(text, limit)
        assert all(count_tokens(c) <= limit for c in chunks)
        assert all(c.strip() == c and c for c in chunks)
        assert _squash("".join(chunks)) == _squash(text)

    def test_whole_sentences_are_kept_together(self) -> None:
        text = "The knife was in the garden. The letter was burnt. 他走了。"
        assert chunk(text, 50) == [text]
        assert chunk(text, 10) == ["The knife was in the garden.", "The letter was burnt. 他走了。"]

    def test_a_long_sentence_is_cut_at_clauses_first(self) -> None:
        text = "他先去了花园，然后回到书房，最后在厨房找到了刀。"
        assert chunk(text, 10) == ["他先去了花园，", "然后回到书房，", "最后在厨房找到了刀。"]

    def test_limit_must_be_positive(self) -> None:
        with pytest.raises(ValueError, match="max_tokens"):
            chunk("text", 0)

    @pytest.mark.parametrize("lang", ["english", "chinese"])
    def test_real_scripts(self, datasets, lang: str) -> None:
        folder = datasets / "wellplay" / lang
        files = sorted(p for p in folder.glob("*/json/*.json") if p.name != "script_info.json")
        text = "\n".join(json.loads(files[0].read_text("utf-8"))["script"])
        chunks = chunk(text, 50)
        assert max(count_tokens(c) for c in chunks) <= 50
        assert _squash("".join(chunks)) == _squash(text)
