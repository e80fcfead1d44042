"""Internal.

Earlier attempts at one game: a run folder set aside as ``<folder>.partial-<n>`` before
the game is played (or resumed) again into the folder's own name.

An attempt is never deleted: its calls were spent, and the next attempt resumes from the
longest of them (``runlog.resume``).
"""

from __future__ import annotations

import glob
import re
from pathlib import Path

from jubensha.outdir import drop_temporaries

_NUMBERED = re.compile(r".*\.partial-(\d+)")


def earlier_attempts(folder: Path) -> list[Path]:
    """The folders ``folder`` was set aside as, oldest first."""
    found = folder.parent.glob(f"{glob.escape(folder.name)}.partial-*")
    numbered = [(int(m.group(1)), p) for p in found if (m := _NUMBERED.fullmatch(p.name))]
    return [p for _, p in sorted(numbered)]


def is_earlier_attempt(folder: Path) -> bool:
    """Whether ``folder`` is an attempt set aside beside the game's own folder."""
    match = re.fullmatch(r"(.*)\.partial-\d+", folder.name)
    return match is not None and (folder.parent / match.group(1)).is_dir()


def set_aside(folder: Path) -> Path:
    """Rename ``folder`` to the next ``<folder>.partial-<n>``, without the half-written
    temporaries a kill left in it; returns the new path."""
    drop_temporaries(folder)
    olds = earlier_attempts(folder)
    number = int(olds[-1].name.rsplit("-", 1)[1]) + 1 if olds else 1
    target = folder.with_name(f"{folder.name}.partial-{number}")
    folder.rename(target)
    return target
