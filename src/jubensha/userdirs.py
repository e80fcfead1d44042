"""The user's own folders.

The cache folder, shared by everything kept between commands (joined local models, measured
model speeds): ``$JUBENSHA_CACHE``, else ``$XDG_CACHE_HOME/jubensha``, else
``~/.cache/jubensha``.

The settings folder, holding what only the user decides (which server gets which key,
``llm.keys``) and the key that signs the user's own batch specs (``batch.key``,
``runs.spec_trust``): ``$JUBENSHA_CONFIG``, else ``$XDG_CONFIG_HOME/jubensha``, else
``~/.config/jubensha``. Nothing a command is given to read (a spec, a run or batch folder)
is ever taken from here or written here.
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "JUBENSHA_CACHE"
CONFIG_ENV = "JUBENSHA_CONFIG"


def cache_dir() -> Path:
    root = os.environ.get(CACHE_ENV) or Path(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "jubensha"
    return Path(root)


def config_dir() -> Path:
    root = os.environ.get(CONFIG_ENV) or Path(
        os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "jubensha"
    return Path(root)
