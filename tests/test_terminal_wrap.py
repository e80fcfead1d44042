"""Chinese at the terminal is wrapped by its own rules: a line breaks between characters
(Chinese has no spaces), never begins with closing punctuation ("。", "，", "）") nor ends
with opening ("（", "“"), fits the terminal's width in cells (a Chinese character is two),
and a list item goes on under its first word, so "■ 死者" is followed by "- 沈墨山：…", not
by a lone "-". Nothing is lost or reordered."""

from __future__ import annotations

import asyncio
import io

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from jubensha.agents.human import ConsoleIO, HumanAgent
from jubensha.engine.agent import CharacterSheet, SeatContext
from jubensha.scripts import find_script
from jubensha.terminal import CLOSING, OPENING, print_text, wrap

PIECES = st.sampled_from(["沈", "墨", "山", "焙", "房", "。", "，", "（", "）", "“", "”", "、",
                          " ", "Tom", "1936", "- ", "19:30", "：", "……"])


def lines_of(text: str, width: int) -> list[str]:
    return [" " * indent + text[start:end].rstrip() for start, end, indent in wrap(text, width)]


def cut_hard(text: str, width: int) -> list[bool]:
    """Whether each line was cut inside a run with no break it may take ("（Tom- 。" at 8
    cells): such a line is filled to the edge, the spaces it ends with counted."""
    return [cell_len(" " * indent + text[start:end]) >= width - 1
            for start, end, indent in wrap(text, width)]


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, min_size=1, max_size=120).map("".join), st.integers(8, 80))
def test_chinese_lines_fit_break_by_the_rules_and_keep_every_character(text: str,
                                                                       width: int) -> None:
    lines, hard = lines_of(text, width), cut_hard(text, width)
    assert "".join(line.replace(" ", "") for line in lines) == text.replace(" ", "")
    for number, line in enumerate(lines):
        body = line.strip()
        assert cell_len(line) <= width or " " not in body and len(body) == 1, line
        if number and body and lines[number - 1].strip() and not hard[number - 1]:
            assert body[0] not in CLOSING, (lines[number - 1], line)
            assert lines[number - 1].rstrip()[-1] not in OPENING, (lines[number - 1], line)


def test_a_list_item_goes_on_under_its_first_word() -> None:
    text = "- 沈墨山：听松茶庄庄主，六十一岁，焙火名师，性子刚硬，说一不二。五月十三日凌晨三点被发现"
    lines = lines_of(text, 30)
    assert lines[0].startswith("- 沈墨山") and all(line.startswith("  ") for line in lines[1:])
    assert not any(line.strip() in ("-", "") for line in lines)


def test_a_chinese_sheet_at_a_narrow_terminal_reads_by_chinese_rules() -> None:
    script = find_script("tingsong-tea-estate")
    screen = io.StringIO()
    console = Console(file=screen, width=60, color_system=None)
    agent = HumanAgent(io=ConsoleIO(console, lambda prompt: ""))
    sheet = CharacterSheet.for_seat(script, script.names[0])
    asyncio.run(agent.start(SeatContext(sheet=sheet)))
    lines = screen.getvalue().splitlines()
    assert "-" not in [line.strip() for line in lines]
    assert not [line for line in lines if line.strip() and line.strip()[0] in CLOSING]
    assert all(cell_len(line) <= 60 for line in lines)
    victim = next(number for number, line in enumerate(lines) if line.startswith("■ 死者"))
    assert lines[victim + 1].startswith(f"- {script.victims[0].name}")


def test_styles_survive_the_wrapping_and_english_is_left_to_rich() -> None:
    screen = io.StringIO()
    console = Console(file=screen, width=20, force_terminal=True, color_system="standard")
    print_text(console, Text("沈墨山", style="bold") + Text("：说一不二。五月十三日凌晨三点被发现"), "zh")
    shown = screen.getvalue()
    assert "\x1b[1m沈墨山" in shown and len(shown.splitlines()) == 3
    screen = io.StringIO()
    print_text(Console(file=screen, width=20, color_system=None),
               "Agnes Pike: I was in the kitchen all evening.", "en")
    assert screen.getvalue().splitlines()[0] == "Agnes Pike: I was in"
