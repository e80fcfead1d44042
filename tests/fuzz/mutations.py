"""Hypothesis strategies that turn a seed (``{relative path: bytes}``) into a hostile
example: its data structure mutated (a value replaced by a nasty one, a key dropped or
renamed, a list wrapped or emptied), its bytes cut, spliced or made invalid UTF-8, a file
removed, made a folder, or replaced by a link out of the example's folder; or each file
generated from scratch in its format."""

from __future__ import annotations

import copy
import io
import json
from dataclasses import dataclass
from typing import Any

import yaml
from hypothesis import strategies as st
from openpyxl import Workbook, load_workbook

SECRET_NAME = "secret.txt"
"""A file beside (outside) every example's folder; links point at it, and no loader may
copy or read it into its output."""


@dataclass(frozen=True)
class Link:
    """A symbolic link to ``target`` (a path outside the example's folder)."""
    target: str


@dataclass(frozen=True)
class Folder:
    """A folder where a file was expected."""


Entry = bytes | Link | Folder | None
"""A file's content, a link, a folder, or None (the file is missing)."""

NASTY_TEXT = ["", " ", "\n", "[/]", "[bold red]x", "\x00", "\ud800", "../../secret.txt",
              "/etc/passwd", "~/.ssh/id_rsa", "img/../../secret.txt", "9" * 5000,
              "中文的名字", "a\r\nb", "\t\t", "𝔘𝔫𝔦", "\u202e", "x" * 70_000, "%s{0}", "null",
              "A", "a,b", "['a', 'b']", "{'k': 1}", "1-step", "Stage 1", "NaN"]
texts = st.sampled_from(NASTY_TEXT) | st.text(max_size=24)
scalars = (st.none() | st.booleans() | texts
           | st.integers(min_value=-(2 ** 70), max_value=2 ** 70)
           | st.sampled_from([0, 1, -1, 10 ** 4000])
           | st.floats(allow_nan=True, allow_infinity=True))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(texts, inner, max_size=4), max_leaves=12)
BOMB = ('a: &a ["x","x","x","x","x","x","x","x","x"]\n' + "\n".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]"
    for i in range(9))).encode()
BLOBS = [b"", b"\xff\xfe\x00", b"\xe4\xb8", b"[" * 50_000, b"{" * 3000 + b"}" * 3000,
         b"\x00" * 64, b"!!python/object/apply:os.system ['echo hi']", BOMB,
         b"PK\x03\x04" + b"\x00" * 40, b"\xef\xbb\xbf", b"a: *unknown", b"- - - -",
         b"9" * 5000, b"id: " + b"9" * 5000]


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in ``node`` a value sits (dict keys and list positions), depth first."""
    found = []
    items = (node.items() if isinstance(node, dict) else enumerate(node)
             if isinstance(node, list) else ())
    for key, child in items:
        found.append((*prefix, key))
        found += paths(child, (*prefix, key))
    return found


def _parent(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        data = data[key]
    return data


@st.composite
def mutated_data(draw: st.DrawFn, data: Any) -> Any:
    """``data`` with one to three structural changes."""
    data = copy.deepcopy(data)
    for _ in range(draw(st.integers(1, 3))):
        places = paths(data)
        if not places:
            return draw(values)
        path = draw(st.sampled_from(places))
        parent, key = _parent(data, path), path[-1]
        action = draw(st.sampled_from(["replace", "replace", "delete", "wrap", "rename",
                                       "repeat", "empty"]))
        if action == "replace":
            parent[key] = draw(values)
        elif action == "delete":
            del parent[key]
        elif action == "wrap":
            parent[key] = draw(st.sampled_from([[parent[key]], {"x": parent[key]}]))
        elif action == "rename" and isinstance(parent, dict):
            parent[draw(texts)] = parent.pop(key)
        elif action == "repeat" and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        elif action == "empty":
            parent[key] = type(parent[key])() if isinstance(parent[key], list | dict | str) \
                else None
    return data


def encode(data: Any, suffix: str, ascii_only: bool) -> bytes:
    """``data`` written in the file's format (JSON where YAML cannot hold it)."""
    if suffix in (".yaml", ".yml"):
        try:
            return yaml.safe_dump(data, allow_unicode=not ascii_only,
                                  sort_keys=False).encode("utf-8")
        except (yaml.YAMLError, UnicodeEncodeError, ValueError):
            pass
    try:
        text = json.dumps(data, ensure_ascii=ascii_only)
        return text.encode("utf-8")
    except (UnicodeEncodeError, ValueError):
        return json.dumps(data, ensure_ascii=True, default=str).encode()


def decode(content: bytes, suffix: str) -> Any:
    text = content.decode("utf-8-sig")
    if suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text) if suffix == ".json" else yaml.safe_load(text)


def xlsx_rows(content: bytes) -> list[list[Any]]:
    book = load_workbook(io.BytesIO(content), read_only=True)
    return [list(row) for row in book.worksheets[0].iter_rows(values_only=True)]


def xlsx(rows: list[Any]) -> bytes:
    book = Workbook()
    for row in rows:
        cells = row if isinstance(row, list) else [row]
        book.active.append([c if isinstance(c, int | float | str | bool) or c is None
                            else json.dumps(c, default=str)[:1000] for c in cells])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def _clean_cells(rows: Any) -> Any:
    """Cells a workbook can hold: no control characters, at most 32,767 characters."""
    if isinstance(rows, list):
        return [_clean_cells(r) for r in rows]
    if isinstance(rows, str):
        return "".join(c for c in rows if c >= " " or c in "\t\n")[:32_000].encode(
            "utf-8", "replace").decode("utf-8")
    if isinstance(rows, int) and abs(rows) > 2 ** 53:
        return str(rows)[:100]
    return rows


@st.composite
def structured(draw: st.DrawFn, name: str, content: bytes) -> bytes:
    """The file with its parsed data mutated (or generated), written in its format."""
    suffix = "." + name.rsplit(".", 1)[-1]
    generate = draw(st.integers(0, 5)) == 0
    if suffix == ".xlsx":
        rows = draw(st.lists(st.lists(values, max_size=8), max_size=6)) if generate \
            else draw(mutated_data(xlsx_rows(content)))
        return xlsx(_clean_cells(rows if isinstance(rows, list) else [rows]))
    if suffix in (".csv", ".txt"):
        lines = content.decode("utf-8", "replace").splitlines()
        changed = draw(mutated_data(lines)) if lines else draw(values)
        parts = changed if isinstance(changed, list) else [changed]
        return "\n".join(str(p) for p in parts).encode("utf-8", "surrogatepass")
    data = draw(values) if generate else draw(mutated_data(decode(content, suffix)))
    ascii_only = draw(st.booleans())
    if suffix == ".jsonl":
        rows = data if isinstance(data, list) else [data]
        return b"".join(encode(row, ".json", ascii_only) + b"\n" for row in rows)
    return encode(data, suffix, ascii_only)


@st.composite
def spliced(draw: st.DrawFn, content: bytes) -> bytes:
    """The bytes cut, spliced with hostile bytes, or overwritten."""
    at = draw(st.integers(0, len(content)))
    action = draw(st.sampled_from(["cut", "insert", "overwrite", "replace"]))
    blob = draw(st.sampled_from(BLOBS) | st.binary(max_size=16))
    if action == "cut":
        return content[:at]
    if action == "insert":
        return content[:at] + blob + content[at:]
    if action == "overwrite":
        return content[:at] + blob + content[at + len(blob):]
    return blob


@st.composite
def entry(draw: st.DrawFn, name: str, content: bytes) -> Entry:
    kind = draw(st.sampled_from(["structured"] * 6 + ["bytes"] * 3
                                + ["missing", "folder", "link"]))
    if kind == "missing":
        return None
    if kind == "folder":
        return Folder()
    if kind == "link":
        depth = name.count("/") + 1
        return Link(draw(st.sampled_from(["../" * depth + SECRET_NAME, "/etc/passwd"])))
    if kind == "bytes" or name.endswith(".png"):
        return draw(spliced(content))
    try:
        return draw(structured(name, content))
    except (ValueError, yaml.YAMLError, OSError, KeyError, TypeError):
        return draw(spliced(content))  # a seed that is not data in its own format


@st.composite
def examples(draw: st.DrawFn, seed: dict[str, bytes]) -> dict[str, Entry]:
    """The seed with one to three of its files changed."""
    files: dict[str, Entry] = dict(seed)
    for _ in range(draw(st.integers(1, 3))):
        name = draw(st.sampled_from(sorted(seed)))
        files[name] = draw(entry(name, seed[name]))
    return files
