"""Architecture options: ``arch:key=value+key=value`` into a validated pydantic config.

The registry hands an architecture's factory the text after the colon; every architecture
that takes settings parses it the same way, so errors read the same everywhere.
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel, ValidationError

C = TypeVar("C", bound=BaseModel)


def parse_options(config: type[C], option: str, architecture: str) -> C:
    """``"k=3+voice=verbatim"`` → ``config(k=3, voice="verbatim")``; a ValueError names the
    architecture, the option and what is wrong with it."""
    pairs: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in option.split("+"))):
        key, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"{architecture} option {part!r}: write key=value "
                             f"(keys: {', '.join(config.model_fields)})")
        pairs[key.strip()] = value.strip()
    try:
        return config.model_validate(pairs)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"{architecture} options {option!r}: {problems}") from None
