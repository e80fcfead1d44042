"""A request refused with a reason the page says in its reader's language: the reason is a
key of the pages' strings (``strings.yaml``) and its values, put into words only when the
error page knows who reads it (a Chinese page never explains itself in English)."""

from __future__ import annotations

from typing import Any

from fastapi import HTTPException

from jubensha.web.strings import text


class Refused(HTTPException):
    """An HTTP error whose reason is the page string ``key`` filled with ``values``."""

    def __init__(self, status_code: int, key: str, headers: dict[str, str] | None = None,
                 **values: Any) -> None:
        super().__init__(status_code=status_code, detail=text("en", key, **values),
                         headers=headers)
        self.key = key
        self.values = values

    def said(self, lang: str) -> str:
        """The reason in ``lang``."""
        return text(lang, self.key, **self.values)
