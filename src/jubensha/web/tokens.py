"""The links of a table, derived from a server key so that they survive a restart without
being written anywhere.

Every link (host, spectator, each person's seat) is ``HMAC(key, table id + role)``: 128
bits nobody can guess without the key. A table's run folder records only its id (not a
secret), so a run folder someone shares gives away no link; the key lives in the server's
state folder (``--state``, readable by its owner only), and the same key after a restart
gives the same links. A server started without a state folder uses a key of its own that
dies with it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from pathlib import Path

KEY_FILE = "serve.key"
KEY_BYTES = 32


class ServerKeyError(Exception):
    """The key file cannot be read or made; the message names the file and the problem."""


def load_key(folder: Path | None) -> bytes:
    """The server key in ``folder`` (made on first use, mode 0600); a fresh key that is
    never written when ``folder`` is None."""
    if folder is None:
        return secrets.token_bytes(KEY_BYTES)
    path = folder / KEY_FILE
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not path.exists():
            _create(path)
        if path.is_symlink() or not path.is_file():
            raise ServerKeyError(f"{path}: not a regular file")
        key = path.read_bytes()
    except OSError as exc:
        raise ServerKeyError(f"{path}: {exc.strerror or exc}") from None
    if len(key) != KEY_BYTES:
        raise ServerKeyError(f"{path}: holds {len(key)} bytes, not a key of {KEY_BYTES}; remove "
                        "it to make a new one (every earlier invite link stops working)")
    return key


def _create(path: Path) -> None:
    try:
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another server made it first: read theirs
        return
    with os.fdopen(handle, "wb") as out:
        out.write(secrets.token_bytes(KEY_BYTES))


def link_token(key: bytes, table: str, role: str) -> str:
    """The token of ``role`` ('host', 'spectator', 'seat:<name>') at table ``table``."""
    digest = hmac.new(key, f"{table}\n{role}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:16]).decode("ascii").rstrip("=")
