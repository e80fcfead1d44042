"""Cutting Chinese into words says nothing on stderr, even the first time: jieba's
dictionary-loading log and the warnings its source raises when Python first compiles it
(``SyntaxWarning`` from Python 3.12 on) are not messages for the person at the terminal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

FIRST_USE = """
from jubensha.memory.text import tokenize
from jubensha.scripts.importers.persons import words
print(tokenize("沈墨山死在焙房里", zh_mode="jieba"), words("许松")[0])
"""


def test_the_first_chinese_words_of_a_fresh_machine_print_nothing_on_stderr(
        tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # no jieba cache yet
    done = subprocess.run(
        [sys.executable, "-W", "always", "-X", f"pycache_prefix={tmp_path / 'pyc'}", "-c",
         FIRST_USE], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0 and "沈墨山" in done.stdout, done.stderr
    assert "jieba" not in done.stderr and "prefix dict" not in done.stderr, done.stderr
