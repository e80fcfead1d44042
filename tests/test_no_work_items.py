"""Docs, help texts and messages speak to users, who have no list of our work items: none
cites one ("issue 17", "measured for issue 11", "before issue 10")."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[1]
CITATION = re.compile(r"\bissues? #?\d+", re.IGNORECASE)
READ_BY_USERS = ("README.md", "docs/**/*.md", "bench/**/*", "src/jubensha/**/*.py",
                 "src/jubensha/**/*.yaml", "src/jubensha/**/*.j2", "src/jubensha/**/*.html",
                 "tests/**/*.py")


def test_nothing_users_read_cites_a_work_item() -> None:
    found = []
    for pattern in READ_BY_USERS:
        for path in ROOT.glob(pattern):
            if path.is_file() and path != Path(__file__) and path.suffix != ".pyc":
                text = path.read_text(encoding="utf-8", errors="replace")
                found += [f"{path.relative_to(ROOT)}: {m.group()}"
                          for m in CITATION.finditer(text)]
    assert found == []
