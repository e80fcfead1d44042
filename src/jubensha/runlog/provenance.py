"""Internal.

Where a game's numbers come from: meta.json's ``provenance``.

The package version; the git commit and whether the checkout had changes, with a hash of
those changes, when the code runs from a checkout (read from ``.git`` itself, so git need not
be installed; the dirty flag and the hash ask git when it is, else stay unknown); the prompt templates the game rendered, each
with the hash of its text (``prompts.tracking``); each model's identity
(``llm.identity``: the local file's sha256, the endpoint's model string and what the
server said it ran); the preset and the model options. Batches and reports compare these
(``runs.provenance``) so that games of different code, prompts or models are never pooled
in silence. Everything here fails soft: what cannot be read is left unknown.
"""

from __future__ import annotations

import hashlib
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from jubensha.llm.identity import ModelIdentity, endpoint_of, model_identity
from jubensha.llm.registry import ModelOptions

MAX_GIT_FILE = 1 << 20
"""The most bytes read of one file under ``.git`` (HEAD, a ref, packed-refs)."""
GIT_TIMEOUT_S = 5.0


class Code(BaseModel):
    """The code that played: the package version, and the checkout's commit and state."""

    version: str = ""
    commit: str | None = Field(None, description="None: not run from a git checkout.")
    dirty: bool | None = Field(None, description="Uncommitted changes to tracked files; "
                               "None: unknown (no checkout, or git not installed).")
    changes: str | None = Field(None, description=(
        "A dirty checkout's changes: the sha256 (16 hex digits) of `git diff HEAD`, so "
        "that games played with two different edits are two codes; None when clean or "
        "unknown."))

    def label(self) -> str:
        commit = (self.commit or "no commit")[:12]
        dirty = f" (dirty {self.changes})" if self.changes else " (dirty, changes unknown)"
        state = {True: dirty, False: "", None: " (state unknown)"}[self.dirty]
        return f"jubensha {self.version or '?'} {commit}{state if self.commit else ''}"


class Prompts(BaseModel):
    """The prompt templates a game rendered: their combined hash, and each one's."""

    sha256: str = ""
    templates: dict[str, str] = Field(default_factory=dict, description=(
        "Template path → sha256 of its text (16 hex digits)."))


def prompts_of(used: dict[str, str]) -> Prompts:
    combined = hashlib.sha256("\n".join(f"{path} {digest}" for path, digest
                                        in sorted(used.items())).encode()).hexdigest()
    return Prompts(sha256=combined if used else "", templates=dict(sorted(used.items())))


class Provenance(BaseModel):
    code: Code = Field(default_factory=Code)
    prompts: Prompts = Field(default_factory=Prompts)
    models: dict[str, ModelIdentity] = Field(default_factory=dict, description=(
        "Model spec → its identity when the game played."))
    preset: str | None = None
    options: dict[str, Any] = Field(default_factory=dict, description=(
        "The model options that differ from the defaults (never a key)."))


def _read(path: Path) -> str:
    """A small file under ``.git``, or "" when it cannot be read."""
    try:
        if not path.is_file():
            return ""
        with path.open("rb") as handle:
            return handle.read(MAX_GIT_FILE).decode("utf-8", "replace")
    except OSError:
        return ""


def git_folder(root: Path) -> Path | None:
    """``root/.git``, or the folder a worktree's ``.git`` file points to."""
    dot = root / ".git"
    if dot.is_dir():
        return dot
    text = _read(dot).strip()
    if text.startswith("gitdir:"):
        found = (root / text.removeprefix("gitdir:").strip()).resolve()
        return found if found.is_dir() else None
    return None


def head_commit(git: Path) -> str | None:
    """The commit HEAD names: detached, a loose ref, or a packed one (a worktree's refs are
    in the common folder its ``commondir`` names)."""
    head = _read(git / "HEAD").strip()
    if not head.startswith("ref:"):
        return head if _is_sha(head) else None
    ref = head.removeprefix("ref:").strip()
    common = git
    if (pointer := _read(git / "commondir").strip()):
        common = (git / pointer).resolve()
    for folder in dict.fromkeys([git, common]):
        found = _read(folder / ref).strip()
        if _is_sha(found):
            return found
        for line in _read(folder / "packed-refs").splitlines():
            sha, _, name = line.partition(" ")
            if name.strip() == ref and _is_sha(sha):
                return sha
    return None


def _is_sha(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def is_dirty(root: Path) -> bool | None:
    """Whether tracked files changed since the commit; None when git cannot say."""
    try:
        done = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                               "--untracked-files=no"], capture_output=True,
                              timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return bool(done.stdout.strip()) if done.returncode == 0 else None


def changes_of(root: Path) -> str | None:
    """The sha256 (16 hex digits) of the tracked files' changes since the commit (``git
    diff HEAD``, binary files included); None when git cannot say."""
    try:
        done = subprocess.run(["git", "-C", str(root), "diff", "HEAD", "--binary",
                               "--no-ext-diff", "--no-color"], capture_output=True,
                              timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return hashlib.sha256(done.stdout).hexdigest()[:16] if done.returncode == 0 else None


@cache
def code_provenance(version: str) -> Code:
    """The code of this process (read once): ``version``, and the checkout the package
    runs from, if any (``src/jubensha`` two levels below it), with a hash of its changes
    when it has any."""
    root = Path(__file__).resolve().parents[3]
    git = git_folder(root)
    commit = head_commit(git) if git else None
    dirty = is_dirty(root) if commit else None
    return Code(version=version, commit=commit, dirty=dirty,
                changes=changes_of(root) if dirty else None)


def options_given(options: ModelOptions) -> dict[str, Any]:
    """The model options that differ from the defaults, without the key (nor anything a
    URL's query could carry)."""
    defaults = ModelOptions(base_url=None, api_key=None)
    found = {key: value for key, value in options.model_dump(exclude={"api_key"}).items()
             if value != getattr(defaults, key)}
    if found.get("base_url"):
        found["base_url"] = endpoint_of(found["base_url"])
    return found


def provenance(version: str, specs: list[str], options: ModelOptions,
               preset: str | None) -> Provenance:
    """A game's provenance before it plays: the code, each model's identity, the preset
    and the options (the prompts and what servers said are added when it ends)."""
    return Provenance(code=code_provenance(version), preset=preset,
                      models={spec: model_identity(spec, options) for spec in specs},
                      options=options_given(options))


def completed(found: Provenance, used: dict[str, str], served: dict[str, set[str]],
              names: dict[str, str]) -> Provenance:
    """``found`` with the templates the game rendered and, per model spec, what its
    server said it ran (``served`` by client name; ``names``: spec → client name)."""
    models = {spec: identity.model_copy(update={"served": sorted(
        served.get(names.get(spec, spec), set()))}) for spec, identity in found.models.items()}
    return found.model_copy(update={"prompts": prompts_of(used), "models": models})
