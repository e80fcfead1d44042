"""Image clue files, which a script names by path: the only files of a machine a script may
make the program read (and send to a vision model). A path is accepted only when it stays
inside the script's own folder (relative, no ``..`` out, no symlink out), is a regular file
of at most ``MAX_IMAGE_BYTES``, and decodes as an image."""

from __future__ import annotations

from pathlib import Path, PurePosixPath, PureWindowsPath

MAX_IMAGE_BYTES = 20_000_000


class ImagePathError(ValueError):
    """An image path a script may not use; the message says why."""


def safe_image(image: str, base: Path) -> Path:
    """The file ``image`` names, resolved inside ``base``; ``ImagePathError`` otherwise."""
    if not image or PurePosixPath(image).is_absolute() or PureWindowsPath(image).is_absolute() \
            or image.startswith("~"):
        raise ImagePathError("must be a path relative to the script's folder")
    root = base.resolve()
    path = (root / image).resolve()
    if not path.is_relative_to(root):
        raise ImagePathError("leads outside the script's folder")
    if not path.is_file():
        raise ImagePathError("image file not found")
    if path.stat().st_size > MAX_IMAGE_BYTES:
        raise ImagePathError(f"larger than {MAX_IMAGE_BYTES // 1_000_000} MB")
    from PIL import Image, UnidentifiedImageError  # here: loading a script needs no PIL

    try:
        with Image.open(path) as picture:
            picture.verify()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise ImagePathError(f"not a readable image ({type(exc).__name__})") from None
    return path
