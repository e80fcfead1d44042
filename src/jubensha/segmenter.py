"""jieba, the Chinese word segmenter, loaded once and quietly for every module that cuts
Chinese into words (BM25, ROUGE-L, the importers' name finder).

Loading it says nothing on stderr: jieba logs its dictionary loading ("Building prefix
dict…") on its own stderr handler, and its source holds regular expressions with invalid
escape sequences, which Python 3.12 and later report as ``SyntaxWarning`` lines the first
time they are compiled. Neither is a message for the person at the terminal."""

from __future__ import annotations

import importlib
import logging
import warnings
from functools import cache
from types import ModuleType


@cache
def jieba_module(name: str = "jieba") -> ModuleType:
    """``jieba`` (or one of its modules, e.g. ``jieba.posseg``) with its dictionary loaded,
    without a word on stderr."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        jieba = importlib.import_module("jieba")
        jieba.setLogLevel(logging.WARNING)
        module = importlib.import_module(name)
    jieba.initialize()
    return module
