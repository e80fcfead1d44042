"""The script a run was played with, read from the run folder's own copy and nowhere else.

Evaluation, the audit, reports, replays and the web review all score or show a run against
its script; they all get it here. meta.json's ``script_source`` says where the script came
from, but a folder someone shared could name any file on this machine there (another
script's truth would reach a judge's prompt), so it is never opened: the folder's copy
(``folder.SCRIPT``) is read instead, and must match the hash meta.json holds. A folder made
before copies were kept has none; the message says to name the script with ``--script``.
"""

from __future__ import annotations

import hashlib

from jubensha.runlog.folder import SCRIPT, RunError, RunLog, present, read_own
from jubensha.safeload import MAX_BYTES, DocumentError, parse_document
from jubensha.scripts.io import ScriptError, parse_script
from jubensha.scripts.model import Script

NO_COPY = ("holds no copy of the script it was played with (made before run folders kept "
           "one, or imported without its script); pass --script with that script to name "
           "it yourself")


class NoScriptCopy(RunError):
    """A run folder without its script: only a script the person names can stand in."""


def played_script(run: RunLog) -> Script:
    """The script ``run`` was played with, from its folder's copy; ``NoScriptCopy`` when
    the folder has none, ``RunError`` when the copy is not the one meta.json hashed or
    does not read as a script (within the format's bounds). Its cross-references are not
    checked again: it is the script as played, imported scripts' quirks included."""
    expected = run.meta.script_sha256 if run.meta else ""
    path = run.path / SCRIPT
    if not expected:
        raise NoScriptCopy(f"{run.path}: {NO_COPY}")
    if not present(path):
        raise NoScriptCopy(f"{path}: missing, though meta.json holds its hash; pass --script "
                           "with the script the game was played with to name it yourself")
    data = read_own(path, MAX_BYTES)
    if hashlib.sha256(data).hexdigest() != expected:
        raise RunError(f"{path}: does not match the hash in meta.json (changed after the "
                       "game); pass --script to name the script yourself")
    try:
        return parse_script(parse_document(data.decode("utf-8")), str(path))
    except (DocumentError, UnicodeDecodeError) as exc:
        raise RunError(f"{path}: {exc}") from None
    except ScriptError as exc:
        raise RunError(str(exc).splitlines()[0]) from None
