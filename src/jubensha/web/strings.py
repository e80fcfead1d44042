"""The words of the web pages in English and Chinese, kept in ``strings.yaml`` beside this
module so that both languages can be read and compared side by side."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

import yaml


@lru_cache(maxsize=1)
def _table() -> dict[str, dict[str, str]]:
    source = resources.files("jubensha.web").joinpath("templates/strings.yaml")
    return yaml.safe_load(source.read_text(encoding="utf-8"))


def words(lang: str) -> dict[str, str]:
    """Every string of the pages in ``lang`` (English where a string is missing)."""
    table = _table()
    return {**table["en"], **table.get(lang, {})}


def text(lang: str, key: str, **values: Any) -> str:
    """One string, with ``{name}`` placeholders filled."""
    return words(lang)[key].format(**values)
