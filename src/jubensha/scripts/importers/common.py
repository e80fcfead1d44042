"""Helpers every importer shares: reading source files, errors that name file and field,
ids, languages, names that are spelled differently, numbered lists, timelines, options.

Real datasets are inconsistent in small ways (middle dots ``·``/``•`` in the same name, a
typo in a clue key, a trailing comma in a hand-edited JSON file); the helpers here absorb
those and nothing else, so that a genuinely malformed file still fails with a clear error.
"""

from __future__ import annotations

import ast
import os
import re
import unicodedata
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from jubensha.llm.text import HAN
from jubensha.safeload import DocumentError, parse_document, read_bounded
from jubensha.scripts.io import ScriptError
from jubensha.scripts.model import Language, TimelineEntry
from jubensha.scripts.validation import Problem

MAX_SOURCE_BYTES = 10_000_000
"""A dataset's source file (a story, a clue table, a script's JSON) at most this large; the
largest in the public releases is about 0.4 MB."""
CJK = re.compile(f"[{HAN}]")
LATIN = re.compile(r"[A-Za-z]")


def fail(source: Path | str, field: str, message: str) -> ScriptError:
    """A one-problem ScriptError to raise: ``source: field: message``."""
    return ScriptError(str(source), [Problem(severity="error", field=field, message=message)])


_SOURCE: ContextVar[Path | None] = ContextVar("import_source", default=None)
"""The file or folder the person named, while an importer reads it (``reading_from``)."""


@contextmanager
def reading_from(source: Path) -> Iterator[None]:
    """While importing ``source``, every file read must be reached without following a
    link, except the links above ``source`` (the person's own way to it)."""
    token = _SOURCE.set(Path(os.path.abspath(source)))
    try:
        yield
    finally:
        _SOURCE.reset(token)


def linked_part(path: Path, source: Path | None = None) -> Path | None:
    """The first component of ``path`` that is a symbolic link, not counting ``source``
    (default: the one being imported) and the folders above it; None when there is none."""
    source = source if source is not None else _SOURCE.get()
    absolute = Path(os.path.abspath(path))
    if source is None:
        return absolute if absolute.is_symlink() else None
    allowed = {Path(os.path.abspath(source)), *Path(os.path.abspath(source)).parents}
    return next((part for part in (absolute, *absolute.parents)
                 if part not in allowed and part.is_symlink()), None)


def read_text(path: Path) -> str:
    """A source file's text; a file reached through a symbolic link is refused (a dataset
    folder must not carry a file from elsewhere on the machine into the script, and on to
    a model endpoint), and so is one that is no regular file (a FIFO would hang the
    import) or larger than ``MAX_SOURCE_BYTES``, both seen before a byte is read."""
    link = linked_part(path)
    if link is not None:
        raise fail(path, "(file)", "reached through a symbolic link"
                   + ("" if link == Path(os.path.abspath(path)) else f" ({link.name})")
                   + ": importers read only regular files inside the dataset")
    try:
        return read_bounded(path, MAX_SOURCE_BYTES).decode("utf-8-sig")
    except DocumentError as exc:
        raise fail(path, "(file)", str(exc)) from None
    except UnicodeDecodeError as exc:
        raise fail(path, "(file)", f"not UTF-8 text (byte {exc.start})") from None


def read_json(path: Path, *, trailing_commas: bool = False) -> tuple[Any, str | None]:
    """The parsed JSON of ``path`` and, when ``trailing_commas`` allowed a repair, a note.

    Only trailing commas before ``]``/``}`` are forgiven (a common slip in hand-edited
    label files); any other syntax error, a truncated file included, is a ScriptError
    that names the line and column.
    """
    text = read_text(path)
    try:
        return parse_document(text, json_syntax=True), None
    except DocumentError as exc:
        error = exc
    if trailing_commas:
        try:
            data = parse_document(re.sub(r",(\s*[\]}])", r"\1", text), json_syntax=True)
        except DocumentError:
            pass
        else:
            return data, f"{path.name}: a trailing comma ignored ({error})"
    raise fail(path, "(file)", str(error))


def expect(value: Any, kind: type | tuple[type, ...], source: Path | str, field: str) -> Any:
    """``value`` if it has the expected type, else a ScriptError naming the field."""
    if isinstance(value, kind):
        return value
    kinds = kind if isinstance(kind, tuple) else (kind,)
    wanted = " or ".join(_TYPE_NAMES.get(k, k.__name__) for k in kinds)
    found = _TYPE_NAMES.get(type(value), type(value).__name__)
    raise fail(source, field, f"expected {wanted}, found {found}")


_TYPE_NAMES = {dict: "an object", list: "a list", str: "a string", int: "a number",
               float: "a number", bool: "true/false", type(None): "null"}


def text_of(value: Any, source: Path | str, field: str) -> str:
    """A text field that may be missing or null (empty), a string, or a number."""
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        expect(value, str, source, field)
    return str(value)


def text_list(value: Any, source: Path | str, field: str) -> list[str]:
    """A list of texts that a dataset may store as a list, a string, or the string repr of
    a Python list (WellPlay does this); the repr is read with ``ast.literal_eval``, never
    ``eval``, and kept as plain text when it is not a list literal."""
    if value is None:
        return []
    if isinstance(value, str):
        parsed = _literal_list(value)
        return parsed if parsed is not None else ([value] if value.strip() else [])
    items = expect(value, list, source, field)
    out: list[str] = []
    for i, item in enumerate(items):
        if isinstance(item, list):
            out.extend(text_of(x, source, f"{field}[{i}]") for x in item)
            continue
        text = text_of(item, source, f"{field}[{i}]")
        parsed = _literal_list(text)
        out.extend(parsed if parsed is not None else [unescape_doubled(text)])
    return out


_DOUBLED_ESCAPES = {"\\n": "\n", "\\t": "\t", '\\"': '"', "\\'": "'"}


def unescape_doubled(text: str) -> str:
    """Undo escaping applied twice: WellPlay's Chinese files store a JSON list whose text
    still holds ``\\n`` as two characters. Only texts with more escaped than real line
    breaks are touched, so a script that mentions a backslash keeps it."""
    if text.count("\\n") <= text.count("\n"):
        return text
    for escaped, plain in _DOUBLED_ESCAPES.items():
        text = text.replace(escaped, plain)
    return text


def _literal_list(text: str) -> list[str] | None:
    stripped = text.strip()
    if not (stripped.startswith("[") and stripped.endswith("]")):
        return None
    try:
        value = ast.literal_eval(stripped)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if isinstance(value, list) and all(isinstance(x, (str, int, float)) for x in value):
        return [str(x) for x in value]
    return None


def slugify(text: str) -> str:
    """A stable id part: lower case, Unicode letters and digits kept (Chinese included),
    every other run of characters one dash."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"[^\w]+", "-", text)
    return re.sub(r"-{2,}", "-", text).strip("-_") or "x"


def unique_ids(ids: Iterable[str]) -> list[str]:
    """The ids with ``-2``, ``-3``... appended where one repeats, order kept."""
    seen: dict[str, int] = {}
    out = []
    for base in ids:
        seen[base] = seen.get(base, 0) + 1
        out.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    return out


_LANGUAGE_HINTS = {"english": "en", "en": "en", "chinese": "zh", "zh": "zh", "cn": "zh"}


def language_of(path: Path, *texts: str) -> Language:
    """The language named by a folder on the path (``english``, ``Zh``...), else the one
    the texts are mostly written in."""
    for part in reversed(path.parts):
        hint = _LANGUAGE_HINTS.get(part.lower())
        if hint:
            return hint  # type: ignore[return-value]
    sample = "".join(texts)[:20000]
    cjk, latin = len(CJK.findall(sample)), len(LATIN.findall(sample))
    return "zh" if cjk * 3 >= latin and cjk else "en"


# --- names -------------------------------------------------------------------------------

_DOTS = str.maketrans({"•": "·", "・": "·", "‧": "·", "∙": "·", "．": "·"})
_TITLES = {"dr.": "doctor", "dr": "doctor"}


def name_key(name: str) -> str:
    """A comparison key: width, middle dots, brackets, markdown bold, case and the title
    ``Dr.``/``Doctor`` do not distinguish two spellings of one name."""
    text = unicodedata.normalize("NFKC", name).translate(_DOTS)
    text = re.sub(r"[【】\[\]*\"“”'‘’]", "", text)
    words = [_TITLES.get(w, w) for w in text.casefold().split()]
    return " ".join(words)


def one_edit_apart(a: str, b: str) -> bool:
    """True when one insertion, deletion or substitution turns ``a`` into ``b``."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    return a[i:] == b[i + 1:] or (len(a) == len(b) and a[i + 1:] == b[i + 1:])


def near_miss(a: str, b: str) -> bool:
    """Two spellings of one name that differ by a typo or a truncated word: Latin names
    word by word (``Manager Xi``/``Manager Xiu``, ``Yu Zhu Chengmu``/``Yu Zu Chengmu``,
    ``Lenxing Ye``/``Lengxing Ye``), Chinese names in one character (大娇扬/大骄扬)."""
    a, b = name_key(a), name_key(b)
    if a == b:
        return False
    if CJK.search(a) or CJK.search(b):
        return len(a) == len(b) >= 3 and sum(x != y for x, y in zip(a, b)) == 1
    wa, wb = a.split(), b.split()
    if len(wa) != len(wb) or len(wa) < 2:
        return False
    differing = [(x, y) for x, y in zip(wa, wb) if x != y]
    if len(differing) != 1:
        return False
    x, y = differing[0]
    shorter = min(len(x), len(y))
    return shorter >= 2 and (x.startswith(y) or y.startswith(x)
                             or ((shorter >= 4 or len(wa) >= 3) and one_edit_apart(x, y)))


class Names:
    """Resolves the spellings a dataset uses to the names of the characters."""

    def __init__(self, names: Iterable[str]):
        self.names = list(names)
        self._keys = {name_key(n): n for n in self.names}

    def add_alias(self, alias: str, name: str) -> None:
        self._keys.setdefault(name_key(alias), name)

    def exact(self, spelling: str) -> str | None:
        return self._keys.get(name_key(spelling))

    def resolve(self, spelling: str, *, chinese: bool = False) -> str | None:
        """The character meant by ``spelling``: exact (after ``name_key``), else the one
        character it is a near miss of, else None. Chinese near misses only where the
        spelling must be a character (``chinese=True``): elsewhere 老布莱克 is not a typo
        of 小布莱克 but his father."""
        found = self.exact(spelling)
        if found is not None or (CJK.search(spelling) and not chinese):
            return found
        matches = {name for key, name in self._keys.items() if near_miss(key, spelling)}
        return matches.pop() if len(matches) == 1 else None


def split_parenthetical(name: str) -> tuple[str, list[str]]:
    """``Han Chengwu (Han the Attendant or Han the Crew Member)`` → the main name and the
    alternatives in the brackets (split on ``or``/``/``/``、``/``,``)."""
    match = re.fullmatch(r"\s*(.+?)\s*[(（]([^()（）]+)[)）]\s*", name)
    if not match:
        return name.strip(), []
    alternatives = re.split(r"\s+or\s+|\s*[/、,，;；]\s*|\s*或\s*", match.group(2))
    return match.group(1), [a.strip() for a in alternatives if a.strip()]


# --- numbered lists and timelines ----------------------------------------------------------

_ITEM = re.compile(r"(?:^|(?<=\s)|(?<=[。；;！!？?]))(?:\d{1,2}[、.．)）](?!\d)|[(（]\d{1,2}[)）]|"
                   r"[①②③④⑤⑥⑦⑧⑨⑩⑪⑫⑬⑭⑮])\s*")


def split_items(text: str) -> list[str]:
    """The items of a numbered list (``1、``, ``2.``, ``(3)``, ``④``), numbers removed; the
    whole text as one item when it is not numbered."""
    text = text.strip()
    if not text:
        return []
    starts = [m for m in _ITEM.finditer(text)]
    if len(starts) < 2:
        return [text]
    items = [text[: starts[0].start()].strip()] if starts[0].start() > 0 else []
    for m, nxt in zip(starts, [*starts[1:], None]):
        items.append(text[m.end(): nxt.start() if nxt else len(text)].strip())
    return [item for item in items if item]


_TIME = (r"(?:\d{1,2}[:：]\d{2}(?:\s*[-~～至到]\s*\d{1,2}[:：]\d{2})?"
         r"|(?:凌晨|早上|上午|中午|下午|傍晚|晚上|夜里|深夜)?(?:\d{1,2}|[一二两三四五六七八九十]{1,3})"
         r"[点時时](?:\d{1,2}分|[一二三四五六七八九十]{1,3}分|半|整)?"
         r"|\d{1,2}\s*(?:a\.?m\.?|p\.?m\.?))")
_TIME_AT_START = re.compile(rf"^\s*[【\[(（]?\s*({_TIME})\s*[】\])）]?\s*[:：,，、\-—]?\s*",
                            re.IGNORECASE)
_TIME_BREAK = re.compile(rf"(?<=[。；;！!？?\n])\s*(?=[【\[(（]?\s*{_TIME})", re.IGNORECASE)


def parse_timeline(text: str) -> list[TimelineEntry]:
    """Timeline text as entries: one per line (or per sentence that starts with a time);
    ``time`` is the leading time when there is one."""
    entries = []
    for line in re.split(r"\n+", text):
        for part in _TIME_BREAK.split(line):
            part = part.strip()
            if not part:
                continue
            match = _TIME_AT_START.match(part)
            rest = part[match.end():].strip() if match else part
            if match and rest:
                entries.append(TimelineEntry(time=match.group(1), text=rest))
            else:
                entries.append(TimelineEntry(text=part))
    return entries


# --- multiple-choice options embedded in a question --------------------------------------

_WIDE = str.maketrans({**{chr(0xFF21 + i): chr(0x41 + i) for i in range(26)},
                       **{chr(0xFF41 + i): chr(0x61 + i) for i in range(26)},
                       "．": ".", "：": ":", "）": ")"})
_MARKER = re.compile(r"(?:(?<=^)|(?<=[\s?？。，,:：;；)\]】”\"'’!！]))([A-Ea-e])\s*[.、):]")


def parse_options(text: object) -> tuple[str, dict[str, str]]:
    """Split ``"Question? a. 2:30 b. 2:45"`` into the question and ``{"a": "2:30", ...}``.

    Markers are a letter followed by ``.``, ``、``, ``)`` or ``:`` (half or full width,
    upper or lower case) at a word boundary; the options are the longest run of markers
    lettered a, b, c... in order (the last such run when two are equally long), so a stray
    "a." inside the question does not start the options. No run of two: no options.
    """
    if not isinstance(text, str):  # a question given as a number or a list upstream
        text = "" if text is None else str(text)
    probe = text.translate(_WIDE)
    markers = [(m.start(), m.end(), m.group(1).lower()) for m in _MARKER.finditer(probe)]
    best: list[tuple[int, int, str]] = []
    for i, first in enumerate(markers):
        if first[2] != "a":
            continue
        chain = [first]
        for marker in markers[i + 1:]:
            if marker[2] == chr(ord(chain[-1][2]) + 1):
                chain.append(marker)
        if len(chain) >= 2 and len(chain) >= len(best):
            best = chain
    if not best:
        return text.strip(), {}
    options = {}
    for (_, end, letter), nxt in zip(best, [*best[1:], None]):
        options[letter] = text[end: nxt[0] if nxt else len(text)].strip()
    return text[: best[0][0]].strip(), options


def answer_letters(answer: Any) -> list[str]:
    """Option letters of an answer written as letters (``"b"``, ``"A,C"``, ``"ab"``,
    ``"a和b"``), order kept; an answer in words (``"cannot be determined"``) has none."""
    text = str(answer or "").translate(_WIDE).lower()
    if not re.fullmatch(r"[\sa-e,，、;；/&+和及.]*", text):
        return []
    return list(dict.fromkeys(re.findall(r"[a-e]", text)))
