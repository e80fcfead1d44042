"""The user's cache folder, shared by everything kept between commands (joined local models,
measured model speeds): ``$JUBENSHA_CACHE``, else ``$XDG_CACHE_HOME/jubensha``, else
``~/.cache/jubensha``."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "JUBENSHA_CACHE"


def cache_dir() -> Path:
    root = os.environ.get(CACHE_ENV) or Path(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "jubensha"
    return Path(root)
