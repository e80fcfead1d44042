"""The run folder: the append-only game log every reader shares (eval, runs, web).

It stands below its readers so that scoring, batches and the browser read one format
without importing each other. ``read_run`` reads a folder back as a ``RunLog``; the
writer is ``RunFolder``; ``played_script`` is the script a run was played with. The other
modules (resume, counts, earlier attempts) are internal.
"""

from jubensha.runlog.folder import (
    RunError,
    RunFolder,
    RunLog,
    RunMeta,
    RunResult,
    SeatInfo,
    UsageReport,
    read_run,
)
from jubensha.runlog.script import NoScriptCopy, played_script

__all__ = [
    "NoScriptCopy",
    "RunError",
    "RunFolder",
    "RunLog",
    "RunMeta",
    "RunResult",
    "SeatInfo",
    "UsageReport",
    "played_script",
    "read_run",
]
