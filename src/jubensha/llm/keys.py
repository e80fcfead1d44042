"""Internal.

Which key goes to which server: the user's own settings, never a spec's or a folder's.

A batch spec (and so a batch folder someone shared) may say where a model is served, but
it cannot choose which of the user's secrets is sent there. A key leaves this machine only
for a server the user paired it with:

- ``$OPENAI_API_KEY`` goes to ``$OPENAI_BASE_URL``, or to OpenAI itself when that is unset
  (and to a ``--base-url`` typed on the command line, which is the user's own choice too);
- the settings file (``settings.yaml`` in ``userdirs.config_dir()``) pairs more servers
  with the variables that hold their keys::

      endpoints:
        "http://gpu2:8000/v1": {api_key_env: GPU2_KEY}
        "http://localhost:8000/v1": {}        # a server that needs no key
      worker_env: [HF_TOKEN]                  # more variables a Ray batch may copy to workers
      folders: [~/datasets]                   # files a shared batch folder may name

A server that a spec names and the settings do not list gets no call at all: the batch
stops before its first game with one line saying what to add (``UnconfiguredServer``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from jubensha.safeload import DocumentError, one_line, read_document
from jubensha.userdirs import config_dir

SETTINGS_FILE = "settings.yaml"
OPENAI_URL = "https://api.openai.com/v1"
KEY_ENV, URL_ENV = "OPENAI_API_KEY", "OPENAI_BASE_URL"
ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"
"""The name of an environment variable (a key's *name*, never the key)."""


class SettingsError(ValueError):
    """The user's settings file cannot be read; one line naming the file and the field."""


class UnconfiguredServer(ValueError):
    """A server the user's settings do not pair with a key (or with no key)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class UserEndpoint(_Strict):
    api_key_env: str | None = Field(None, pattern=ENV_NAME, description=(
        "The variable holding this server's key; none: the server needs no key."))


class UserSettings(_Strict):
    endpoints: dict[str, UserEndpoint] = Field(default_factory=dict)
    worker_env: list[Annotated[str, Field(pattern=ENV_NAME)]] = Field(
        default_factory=list, description="More variables a Ray batch may copy to workers.")
    folders: list[str] = Field(default_factory=list, description=(
        "Folders whose files a batch folder the user did not start may name (datasets, a "
        "shared reply cache); runs.spec_trust."))


@dataclass(frozen=True)
class Server:
    """Where a model's calls go and the variable holding their key, as the user set them."""

    base_url: str | None
    key_env: str | None

    def key(self) -> str | None:
        if self.key_env is None:
            return None
        return os.environ.get(self.key_env) or None


def settings_path() -> Path:
    return config_dir() / SETTINGS_FILE


def user_settings() -> UserSettings:
    """The settings file, or empty settings when there is none."""
    path = settings_path()
    if not path.is_file():
        return UserSettings()
    stat = path.stat()
    return _read(str(path), stat.st_mtime_ns, stat.st_size)


@cache
def _read(path: str, mtime: int, size: int) -> UserSettings:
    try:
        data = read_document(Path(path), own=True)  # the user's own settings
        return UserSettings.model_validate(data if data is not None else {})
    except DocumentError as exc:
        raise SettingsError(f"{path}: {exc}") from None
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"]) or "(top level)"
        raise SettingsError(f"{path}: {one_line(field, 120)}: "
                            f"{one_line(str(error['msg']), 200)}") from None


def normalise(url: str) -> str:
    """``url`` compared as a server: scheme and host case-folded, a default port and a
    trailing slash dropped (``HTTP://GPU2:80/v1/`` is ``http://gpu2/v1``)."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    port = parts.port if parts.port not in ({"http": 80, "https": 443}.get(scheme), None) \
        else None
    user = f"{parts.username}@" if parts.username else ""
    where = f"{user}{host}" + (f":{port}" if port else "")
    return f"{scheme}://{where}{parts.path.rstrip('/')}"


def default_server() -> Server:
    """The user's own pairing: ``$OPENAI_BASE_URL`` (else OpenAI) with ``$OPENAI_API_KEY``."""
    return Server(os.environ.get(URL_ENV) or None, KEY_ENV)


def server_for(base_url: str, model: str) -> Server:
    """The server ``base_url`` (named by a spec for ``model``) with the key variable the
    user's settings give it; ``UnconfiguredServer`` when they do not list it."""
    wanted = normalise(base_url)
    if wanted in (normalise(OPENAI_URL), normalise(os.environ.get(URL_ENV) or OPENAI_URL)):
        return Server(base_url, KEY_ENV)
    for url, endpoint in user_settings().endpoints.items():
        if normalise(url) == wanted:
            return Server(base_url, endpoint.api_key_env)
    raise UnconfiguredServer(
        f"{model} would be sent to {one_line(base_url, 120)}, a server your settings do not "
        f"list; if you trust it, add it to {settings_path()} (endpoints: "
        f"{{\"{one_line(base_url, 120)}\": {{api_key_env: VARIABLE_WITH_ITS_KEY}}}}, or {{}} "
        "for a server without a key): a spec or batch folder never chooses where your keys go")


def allowed_env(servers: list[Server]) -> set[str]:
    """The variables a batch may copy to its workers: the user's default pairing, the key
    variables of ``servers``, and the settings' ``worker_env``."""
    return ({KEY_ENV, URL_ENV} | {s.key_env for s in servers if s.key_env}
            | set(user_settings().worker_env))
