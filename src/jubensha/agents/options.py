"""Architecture options: ``arch:key=value+key=value`` into a validated pydantic config.

The registry hands an architecture's factory the text after the colon; every architecture
that takes settings parses it the same way, so errors read the same everywhere.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

C = TypeVar("C", bound=BaseModel)


def split_options(option: str) -> tuple[list[str], dict[str, str]]:
    """``"mr+sr+k=3"`` → bare words ``["mr", "sr"]`` and settings ``{"k": "3"}``."""
    words: list[str] = []
    pairs: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in option.split("+"))):
        key, sep, value = part.partition("=")
        if sep:
            pairs[key.strip()] = value.strip()
        else:
            words.append(part)
    return words, pairs


def validate_options(config: type[C], data: dict[str, Any], option: str,
                     architecture: str) -> C:
    """``config`` built from ``data``; a ValueError names the architecture and each problem."""
    try:
        return config.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"{architecture} options {option!r}: {problems}") from None


def parse_options(config: type[C], option: str, architecture: str) -> C:
    """``"k=3+voice=verbatim"`` → ``config(k=3, voice="verbatim")``; a ValueError names the
    architecture, the option and what is wrong with it."""
    words, pairs = split_options(option)
    if words:
        raise ValueError(f"{architecture} option {words[0]!r}: write key=value "
                         f"(keys: {', '.join(config.model_fields)})")
    return validate_options(config, pairs, option, architecture)
