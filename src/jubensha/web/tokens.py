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
import secrets
from pathlib import Path

from jubensha.signing import KEY_BYTES, load_key

KEY_FILE = "serve.key"


def server_key(folder: Path | None) -> bytes:
    """The server key in ``folder`` (made on first use; ``signing`` checks the folder and
    the file before reading it); a fresh key that is never written when ``folder`` is
    None."""
    if folder is None:
        return secrets.token_bytes(KEY_BYTES)
    return load_key(folder, KEY_FILE)


def link_token(key: bytes, table: str, role: str) -> str:
    """The token of ``role`` ('host', 'spectator', 'seat:<name>') at table ``table``."""
    digest = hmac.new(key, f"{table}\n{role}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:16]).decode("ascii").rstrip("=")
