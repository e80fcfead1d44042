"""What the terminal shows: text a script, a model or a person wrote, never a control
sequence it carries.

A script title, a model's reply or a human seat's input may hold escape sequences that
would move the cursor, rewrite the screen, set the window title or hide text when printed
raw. ``Terminal`` is the project's ``rich`` console: it removes control characters (C0 but
tab and newline, DEL, C1, and the bidirectional overrides that reorder what is shown) from
every piece of text it renders, while its own styling and cursor control, which ``rich``
emits apart from the text, still work. A leaf module: every layer's commands print
through it and stop with ``fail``'s one error line; it also styles the transcript lines
the engine narrates (``print_line``).

What is written into files for people (``transcript.md``, Markdown, CSV and HTML reports)
goes through ``plain_text``: ``cat transcript.md`` must not set the window title, clear
the screen or plant a hyperlink either, so whole escape sequences (CSI, OSC, DCS and the
like, 7- and 8-bit) are removed, not only their control characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Protocol

import typer
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Text

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


_SEQUENCE = re.compile(
    "(?:\x1b[]P^_X]|[\x90\x98\x9d-\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\\\|\x9c)?"  # OSC, DCS...
    "|(?:\x1b\\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI
    "|\x1b[ -/]*[0-~]?")  # any other escape


def printable(text: str) -> str:
    """``text`` without the control characters a terminal would act on."""
    return _CONTROL.sub("", text)


def plain_text(text: str) -> str:
    """``text`` fit for a file people read in a terminal: without escape sequences (their
    parameters and strings too: a title set by OSC leaves no trace) or control characters
    but tab and newline."""
    return printable(_SEQUENCE.sub("", text))


class Terminal(Console):
    """A ``rich`` console whose rendered text holds no control characters (see above)."""

    def render(self, renderable: RenderableType,
               options: ConsoleOptions | None = None) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            if segment.control is None and _CONTROL.search(segment.text):
                yield Segment(printable(segment.text), segment.style)
            else:
                yield segment


_errors = Terminal(stderr=True)


def fail(error: str | Exception, lang: str = "en") -> typer.Exit:
    """Print ``error: message`` on stderr (in Chinese, ``错误：``); the caller raises the
    returned exit (status 2), so that a command reads ``raise fail(...) from None``. An
    exception with a ``key`` of the message catalogue (and its ``values``) is said in
    ``lang``; any other as its message."""
    _errors.print(Text(said(lang, "error"), style="bold red") + Text(reason(error, lang)),
                  soft_wrap=True)
    return typer.Exit(2)


def reason(error: str | Exception, lang: str) -> str:
    """What went wrong, in ``lang`` where the catalogue has its sentence."""
    key = getattr(error, "key", "")
    if lang != "en" and isinstance(key, str) and key:
        try:
            return said(lang, key, **getattr(error, "values", {}))
        except (KeyError, IndexError):
            pass
    return str(error)


def said(lang: str, key: str, **values: object) -> str:
    from jubensha.prompts import message  # only when a line is printed: startup stays light

    return message(lang, key, **values)


class NarratedLine(Protocol):
    """A transcript line as ``engine.narration.describe`` gives it (plain values)."""

    @property
    def style(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def speaker(self) -> str: ...
    @property
    def tag(self) -> str: ...
    @property
    def colon(self) -> str: ...


STYLES = {"stage": "bold magenta", "host": "italic cyan", "speech": "bold", "clue": "yellow",
          "act": "green", "log": "dim", "result": "bold red"}


def rich_line(line: NarratedLine) -> Text:
    if line.style == "stage":
        return Text(f"\n── {line.text} ──", style=STYLES["stage"])
    text = Text()
    if line.style == "log":
        text.append(f"· {line.text}", style=STYLES["log"])
        text.append(f" {line.tag}" if line.tag else "", style="dim italic")
        return text
    if line.speaker:
        text.append(line.speaker, style=STYLES[line.style])
    if line.tag:
        text.append(f" {line.tag}", style="dim")
    if line.speaker or line.tag:
        text.append(line.colon)
    text.append(line.text)
    return text


def print_line(console: Console, line: NarratedLine, lang: str) -> None:
    """Print a transcript line; Chinese is wrapped by its own rules (``print_text``)."""
    print_text(console, rich_line(line), lang)


def print_text(console: Console, text: Text | str, lang: str) -> None:
    """Print ``text`` wrapped to the console's width. Chinese, written without spaces, is
    wrapped by ``wrap``: rich wraps at spaces only, so it would leave "- " alone on a line
    with the name on the next, and the terminal would begin a line with "。"."""
    text = Text(text) if isinstance(text, str) else text
    if not lang.startswith("zh"):
        console.print(text)
        return
    for start, end, indent in wrap(text.plain, console.width):
        line = text[start:end]
        line.rstrip()
        console.print(Text(" " * indent) + line, soft_wrap=True)


OPENING = "([{（【「『《〈“‘〔［｛"
"""Characters a line never ends with (they open what follows)."""
CLOSING = ")]}、。，．,.;；:：?？!！）】」』》〉”’〕］｝…—～·・%％"
"""Characters a line never begins with (they close or follow what precedes)."""
BULLETS = ("- ", "• ", "* ")


def wrap(text: str, width: int) -> list[tuple[int, int, int]]:
    """Lines of ``text`` at most ``width`` cells wide as (start, end, indent): a line is
    ``text[start:end]`` (trailing spaces aside) after ``indent`` spaces. Lines break at
    the text's newlines, after spaces, and between wide (Chinese) characters, but never
    before closing punctuation ("。", "）", "，") nor after opening ("（", "“"); a list item
    ("- ...") goes on under its first word. A word wider than the line is cut."""
    lines: list[tuple[int, int, int]] = []
    offset = 0
    for paragraph in text.split("\n"):
        lines += [(offset + a, offset + b, indent)
                  for a, b, indent in _wrap_paragraph(paragraph, max(width, 8))]
        offset += len(paragraph) + 1
    return lines


def _wrap_paragraph(text: str, width: int) -> list[tuple[int, int, int]]:
    if not text.strip():
        return [(0, len(text), 0)]
    body = text.lstrip(" ")
    hang = len(text) - len(body) + (2 if body.startswith(BULLETS) else 0)
    lines, start, indent = [], 0, 0
    while start < len(text):
        end = _line_end(text, start, width - indent, hang)
        lines.append((start, end, indent))
        start, indent = end, hang
        while start < len(text) and text[start] == " ":
            start += 1
    return lines


def _line_end(text: str, start: int, room: int, hang: int) -> int:
    """Where the line from ``start`` ends: the last break that fits in ``room`` cells."""
    used, fits = 0, None
    for index in range(start, len(text)):
        if index > start and _breakable(text, index, hang):
            fits = index
        used += cell_len(text[index])
        if used > room and text[index] != " ":
            return fits if fits is not None else max(index, start + 1)
    return len(text)


def _breakable(text: str, index: int, hang: int) -> bool:
    """Whether a line may end just before ``text[index]``. A line ends with what precedes
    its trailing spaces, so "（ 1936" may not break after the space either."""
    before, after = text[index - 1], text[index]
    if after in CLOSING or after == " " or index <= hang:
        return False
    last = index - 1
    while last > 0 and text[last] == " ":
        last -= 1
    if text[last] in OPENING:
        return False
    return before == " " or cell_len(before) > 1 or cell_len(after) > 1
