"""Keys kept in a private folder, and what they sign.

A key file (``serve.key`` in the server's state folder, ``batch.key`` in the user's
settings folder) is a secret that says "this machine's owner made it": link tokens are
derived from it, and a record signed with it (a table the server started, the spec of a
batch the user started) is told apart from one planted in a shared folder. So the folder
and the file are checked before a byte is read: the folder must be a real folder (not a
link, not a file) that only its owner may write, the key a regular file of exactly
``KEY_BYTES`` bytes that only its owner may read. Anything else is one ``KeyFileError``
naming the path, the problem and the fix; nothing is changed behind the user's back.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

from jubensha.safeload import DocumentError, read_bounded

KEY_BYTES = 32


class KeyFileError(Exception):
    """A key folder or file that cannot be trusted or used; the message says how to fix it."""


def load_key(folder: Path, name: str) -> bytes:
    """The key ``name`` in ``folder``, made (mode 0600, in a 0700 folder) on first use."""
    _private_folder(folder)
    path = folder / name
    if not os.path.lexists(path):
        _create(path)
    info = _lstat(path)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
        raise KeyFileError(f"{path}: not a regular file; remove it to make a new key (every "
                           "earlier link or signature stops working)")
    if info.st_size != KEY_BYTES:
        raise KeyFileError(f"{path}: holds {info.st_size:,} bytes, not a key of {KEY_BYTES}; "
                           "remove it to make a new one (every earlier link or signature "
                           "stops working)")
    if info.st_uid != os.getuid():
        raise KeyFileError(f"{path}: owned by another user; remove it to make a new key")
    if info.st_mode & 0o077:
        raise KeyFileError(f"{path}: others may read it (mode {info.st_mode & 0o777:o}), so "
                           f"it may have leaked; remove it to make a new key, or, if nobody "
                           f"else uses this machine, chmod 600 {path}")
    try:
        return read_bounded(path, KEY_BYTES, links=False)
    except DocumentError as exc:
        raise KeyFileError(f"{path}: {exc}") from None


def _private_folder(folder: Path) -> None:
    """``folder`` made (0700) when missing; refused when it is a link, not a folder, not
    the user's, or writable by others (who could swap the key)."""
    if not os.path.lexists(folder):
        try:
            folder.mkdir(parents=True, mode=0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            raise KeyFileError(f"{folder}: cannot make the folder: {exc.strerror or exc}") \
                from None
    info = _lstat(folder)
    if stat.S_ISLNK(info.st_mode):
        raise KeyFileError(f"{folder}: a symbolic link; name the folder itself (a link can "
                           "be pointed elsewhere by whoever owns it)")
    if not stat.S_ISDIR(info.st_mode):
        raise KeyFileError(f"{folder}: not a folder; name a folder for the key (it is made "
                           "when missing)")
    if info.st_uid != os.getuid():
        raise KeyFileError(f"{folder}: owned by another user; name a folder of your own")
    if info.st_mode & 0o022:
        raise KeyFileError(f"{folder}: others may write to it (mode {info.st_mode & 0o777:o}) "
                           f"and could replace the key; chmod 700 {folder}")


def _lstat(path: Path) -> os.stat_result:
    try:
        return os.lstat(path)
    except OSError as exc:
        raise KeyFileError(f"{path}: {exc.strerror or exc}") from None


def _create(path: Path) -> None:
    try:
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:  # another process made it first: read theirs
        return
    except OSError as exc:
        raise KeyFileError(f"{path}: cannot make the key: {exc.strerror or exc}") from None
    with os.fdopen(handle, "wb") as out:
        out.write(secrets.token_bytes(KEY_BYTES))


def sign(key: bytes, purpose: str, data: bytes) -> str:
    """The signature (hex) of ``data`` for ``purpose``: a signature made for one purpose
    never passes for another."""
    return hmac.new(key, purpose.encode() + b"\n" + data, hashlib.sha256).hexdigest()


def verify(key: bytes, purpose: str, data: bytes, signature: str) -> bool:
    """Whether ``signature`` is ``sign(key, purpose, data)``, compared in constant time."""
    return hmac.compare_digest(sign(key, purpose, data).encode(),
                               signature.encode("utf-8", "surrogatepass"))
