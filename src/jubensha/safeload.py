"""Reading YAML and JSON that nobody vouches for (scripts, procedures, batch specs, price
tables, importers' source files) without letting a file crash or hang the process.

Limits are checked before anything deep happens: the text's size, then its flow nesting
(``[`` and ``{``, which the C YAML loader follows until it segfaults, and JSON until
Python's recursion limit), then, once parsed, the number of nodes the document expands to
(a YAML alias bomb is small on disk and enormous once its aliases are followed), huge
integers and lone surrogates that cannot be written back out. Every problem is one
``DocumentError`` whose message names the problem, never the whole offending value.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml

MAX_BYTES = 50_000_000
MAX_LOG_BYTES = 1_000_000_000
"""A log (run events, model calls, a cassette) at most this large: a long game's call log
is tens of MB."""
MAX_DEPTH = 100
MAX_NODES = 2_000_000
MAX_EXPANDED_CHARS = MAX_BYTES
"""Characters of text a document may hold once its aliases are followed: what a file of
``MAX_BYTES`` holds without aliases."""
MAX_SHOWN = 80
"""Characters of an offending value an error message may quote."""

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
T = TypeVar("T")


class DocumentError(ValueError):
    """A document that cannot be read safely; the message says why (and where, if known)."""


def parse_document(text: str, *, json_syntax: bool = False) -> Any:
    """The data of a YAML (or, with ``json_syntax``, JSON) document, within the limits."""
    if len(text) > MAX_BYTES:
        raise DocumentError(f"the file is larger than {MAX_BYTES // 1_000_000} MB")
    depth = flow_depth(text)
    if depth > MAX_DEPTH:
        raise DocumentError(f"brackets nested {depth} deep (at most {MAX_DEPTH})")
    try:
        data = json.loads(text) if json_syntax else yaml.load(text, Loader=_Loader)
    except json.JSONDecodeError as exc:
        raise DocumentError(f"invalid JSON at line {exc.lineno}, column {exc.colno}: "
                            f"{exc.msg}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise DocumentError(f"invalid YAML{where}: "
                            f"{one_line(str(getattr(exc, 'problem', None) or exc), MAX_SHOWN)}"
                            ) from None
    except RecursionError:
        raise DocumentError(f"nested too deeply (at most {MAX_DEPTH} levels)") from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise DocumentError(shorten(str(exc))) from None
    check_data(data)
    return data


def read_document(path: Path, *, own: bool = False) -> Any:
    """The data of a YAML or JSON file (JSON by its ``.json`` suffix), within the limits;
    a file that cannot be read is a ``DocumentError`` too, and so is a symbolic link that
    leads outside the file's folder (``inside_folder``): a shared folder's ``spec.yaml``
    linked to ``/etc/shadow`` or a key file is not read, so no error can quote it.
    ``own``: the user's own file (their settings, which dotfile managers link), followed
    wherever it leads."""
    data = read_bounded(path) if own else read_bounded(inside_folder(path), links=False)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"not UTF-8 text (byte {exc.start})") from None
    return parse_document(text, json_syntax=path.suffix.lower() == ".json")


def inside_folder(path: Path) -> Path:
    """``path`` with its links followed, when it stays inside the folder that holds it (a
    link to a file beside it is fine); a link that leads out is a ``DocumentError`` that
    names neither the target nor anything in it."""
    path = Path(path)
    try:
        if not path.is_symlink():
            return path
        folder = path.absolute().parent.resolve()
        target = path.resolve()
    except (OSError, RuntimeError, ValueError):  # a loop of links, a name too long...
        raise DocumentError("a symbolic link that cannot be followed; not read") from None
    if not target.is_relative_to(folder):
        raise DocumentError("a symbolic link that leads outside its folder; only files "
                            "inside the folder are read") from None
    return target


def read_bounded(path: Path, max_bytes: int = MAX_BYTES, *, links: bool = True) -> bytes:
    """The bytes of a regular file, its kind and size checked before a byte is read: a
    FIFO, a device or a folder is refused (reading a FIFO waits forever), and so is a file
    over ``max_bytes`` (a sparse file claims gigabytes it does not hold on disk); with
    ``links=False`` a symbolic link too. Every problem is a one-line ``DocumentError``."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | (
        0 if links else getattr(os, "O_NOFOLLOW", 0))
    try:
        handle = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not links:
            raise DocumentError("a symbolic link; only regular files are read") from None
        why = "no such file" if exc.errno == errno.ENOENT else exc.strerror or exc
        raise DocumentError(f"cannot read: {why}") from None
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            raise DocumentError(f"not a regular file ({_kind(info.st_mode)})")
        if info.st_size > max_bytes:
            raise DocumentError(f"the file is larger than {_size(max_bytes)}")
        data = _read_all(handle, max_bytes + 1)
    except OSError as exc:
        raise DocumentError(f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(handle)
    if len(data) > max_bytes:  # grew while being read
        raise DocumentError(f"the file is larger than {_size(max_bytes)}")
    return data


def _read_all(handle: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(handle, min(left, 1 << 24))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _kind(mode: int) -> str:
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"))
    return next((name for test, name in kinds if test(mode)), "not a plain file")


def _size(count: int) -> str:
    return f"{count // 1_000_000:,} MB" if count >= 1_000_000 else f"{count:,} bytes"


def is_path(path: Path, kind: Literal["any", "file", "folder"] = "any") -> bool:
    """Whether ``path`` names an existing file or folder; a name the system cannot even look
    up (too long, say, as a fuzzed script name is) is simply not one, not an ``OSError``."""
    try:
        return {"any": path.exists, "file": path.is_file, "folder": path.is_dir}[kind]()
    except OSError:
        return False


def flow_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` in ``text``, counted without parsing (brackets
    inside quoted text count too, which only ever overestimates)."""
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}" and depth:
            depth -= 1
    return deepest


def check_data(data: Any) -> None:
    """Walk the parsed data once, without recursion: nodes and characters as expanded
    (shared nodes, i.e. YAML aliases, counted each time they are reached: one 5 MB string
    referenced 400 times is 2 GB of text to whatever reads it), depth, and strings that
    cannot be encoded (lone surrogates)."""
    sizes: dict[int, tuple[int, int]] = {}
    stack: list[tuple[Any, int, bool]] = [(data, 0, False)]
    _expanded(_weight(data, sizes))
    while stack:
        node, depth, done = stack.pop()
        if not isinstance(node, dict | list):
            if isinstance(node, str):
                _check_text(node)
            continue
        if depth > MAX_DEPTH:
            raise DocumentError(f"nested more than {MAX_DEPTH} levels deep")
        children = list(node.keys()) + list(node.values()) if isinstance(node, dict) else node
        if done:
            weights = [_weight(child, sizes) for child in children]
            sizes[id(node)] = (1 + sum(n for n, _ in weights), sum(c for _, c in weights))
            _expanded(sizes[id(node)])
            continue
        if id(node) in sizes:
            continue
        stack.append((node, depth, True))
        stack.extend((child, depth + 1, False) for child in children)


def _weight(node: Any, sizes: dict[int, tuple[int, int]]) -> tuple[int, int]:
    """(values, characters) of ``node`` as expanded; a container's once it is walked."""
    if isinstance(node, dict | list):
        return sizes.get(id(node), (1, 0))
    return 1, len(node) if isinstance(node, str) else 0


def _expanded(weight: tuple[int, int]) -> None:
    values, characters = weight
    if values > MAX_NODES:
        raise DocumentError(f"the document expands to more than {MAX_NODES:,} values "
                            "(aliases repeated too often)")
    if characters > MAX_EXPANDED_CHARS:
        raise DocumentError(f"the document expands to more than {MAX_EXPANDED_CHARS:,} "
                            "characters of text (aliases repeated too often)")


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise DocumentError(f"text holds an invalid character ({exc.reason}): "
                            f"{shorten(text)!r}") from None


_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029\ud800-\udfff]")


def one_line(text: str, limit: int = 300) -> str:
    """``text`` fit for one line of an error message: line breaks, control characters and
    lone surrogates escaped (a field named ``"a\\rb"`` must not start a new line, nor one
    named ``"\\ud800"`` make printing fail), cut to ``limit`` characters."""
    return shorten(_UNPRINTABLE.sub(lambda m: repr(m.group())[1:-1], text), limit)


_FIELD_NAME = re.compile(r"[^\W\d][\w .:/@+-]{0,59}")


def shown_key(key: str) -> str:
    """A key as an error may quote it: a name (``murderes``, ``人物``, ``openai:gpt-4o``)
    as it is, anything else (a line of ``/etc/shadow`` read as a YAML key, say) not at
    all: an error never shows text of a file that is not a name."""
    return key if _FIELD_NAME.fullmatch(key) else "(a key that is no field name, not shown)"


def shown_loc(error: Any) -> tuple[Any, ...]:
    """A pydantic error's location as it may be shown: an unknown key only when it is a
    name (``shown_key``), never a line of some other file read as a key."""
    loc = tuple(error["loc"])
    if error["type"] == "extra_forbidden" and loc:
        return (*loc[:-1], shown_key(str(loc[-1])))
    return loc


def shorten(text: str, limit: int = MAX_SHOWN) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


class LineError(ValueError):
    """A line of a JSON Lines log that is not a record; ``number`` counts from 1."""

    def __init__(self, number: int, problem: str) -> None:
        super().__init__(f"line {number}: {problem}")
        self.number, self.problem = number, problem


def parse_jsonl(data: bytes, parse: Callable[[str], T]) -> tuple[list[T], bool]:
    """The records of a JSON Lines log (each line given to ``parse``) and whether its last
    line was cut off while it was being written (even inside a character), which is
    skipped: what a killed process leaves. Any other bad line is a ``LineError``."""
    lines = data.split(b"\n")
    while lines and not lines[-1].strip():
        lines.pop()
    records: list[T] = []
    for number, raw in enumerate(lines, 1):
        last = number == len(lines)
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            if last:
                return records, True
            raise LineError(number, "not UTF-8 text") from None
        if not line.strip():
            continue
        try:
            records.append(parse(line))
        except ValueError as exc:  # pydantic's ValidationError is one too
            if last and _cut_off(line):
                return records, True
            raise LineError(number, first_line(exc)) from None
    return records, False


def _cut_off(line: str) -> bool:
    """Whether a line that failed to parse is not even whole JSON (it was being written)."""
    try:
        json.loads(line)
    except json.JSONDecodeError:
        return True
    except (RecursionError, ValueError):  # whole, but too deep or a number too long
        return False
    return False


def first_line(exc: Exception) -> str:
    """An error's first line (pydantic's messages run to many), or its type's name."""
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
