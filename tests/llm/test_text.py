"""Token estimates, fitting prompts into a context window, and what counts as Chinese."""

from __future__ import annotations

import re

from jubensha.llm.base import Message
from jubensha.llm.text import HAN, estimate_tokens, fit_messages, messages_language
from jubensha.memory.text import detect_language, han_share, tokenize
from jubensha.scripts.naming import names_meant


def test_estimates_err_high_and_charge_more_for_chinese() -> None:
    english = "The victim was found in the study; the door was locked."
    assert estimate_tokens(english) >= len(english) / 4
    assert estimate_tokens("书房的门是锁着的") > estimate_tokens("the door was locked")
    assert estimate_tokens("") == 0


def test_short_prompts_are_left_alone() -> None:
    messages = [Message(role="system", content="You are Mary."),
                Message(role="user", content="Hi")]
    assert fit_messages(messages, 1000) == (messages, [])


def test_long_user_messages_lose_their_middle_first() -> None:
    system = Message(role="system", content="You are Mary. " * 20)
    history = "START " + "blah " * 4000 + "Who was in the study at ten?"
    messages = [system, Message(role="user", content=history)]
    fitted, notes = fit_messages(messages, 1000)
    assert fitted[0].text == system.text
    assert fitted[1].text.startswith("START")
    assert fitted[1].text.endswith("Who was in the study at ten?")
    assert "characters left out" in fitted[1].text
    assert sum(estimate_tokens(m.text) + 8 for m in fitted) <= 1000
    assert len(notes) == 1 and "message 1 (user)" in notes[0]
    assert "characters left out" in fitted[1].text


def test_system_is_cut_only_when_the_rest_is_not_enough() -> None:
    messages = [Message(role="system", content="rules " * 3000),
                Message(role="user", content="short question?")]
    fitted, notes = fit_messages(messages, 500)
    assert fitted[1].text == "short question?"
    assert "left out" in fitted[0].text and "(system)" in notes[0]


def test_chinese_prompts_get_a_chinese_marker() -> None:
    messages = [Message(role="user", content="线索" * 3000)]
    fitted, _ = fit_messages(messages, 300)
    assert "省略" in fitted[0].text
    assert messages_language(messages) == "zh"


RARE = "𠮷"  # U+20BB7, extension B: a surname character outside the BMP
HAN_SAMPLES = ["书", "㐀", "﨑", RARE, "\U00030000"]  # unified, ext A, compatibility, ext B, ext G
NOT_HAN = ["あ", "ア", "한", "。", "，", "a", "1", "☯"]


def test_han_is_every_ideograph_block_and_nothing_else() -> None:
    han = re.compile(f"[{HAN}]")
    assert all(han.fullmatch(c) for c in HAN_SAMPLES)
    assert not any(han.fullmatch(c) for c in NOT_HAN)


def test_modules_built_on_han_agree_on_a_rare_character() -> None:
    """Extension B counts as Chinese wherever text is measured or split, not only in
    some modules (the definitions used to drift)."""
    name = f"{RARE}田"
    assert messages_language([Message(role="user", content=name)]) == "zh"
    assert han_share(name) == 1.0 and detect_language(name) == "zh"
    assert tokenize(name, zh_mode="chars") == [RARE, "田"]
    assert names_meant(RARE, [name, "李四"]) == [name]
