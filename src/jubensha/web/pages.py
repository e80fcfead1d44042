"""Rendering: the templates (jinja2, every value escaped), whole pages with the headers
every page carries, fragments that live pages fetch, and error pages in the reader's
language with a way back instead of a bare status.
"""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any

import jinja2
from fastapi import Request
from fastapi.responses import HTMLResponse, Response

from jubensha.engine.narration import describe
from jubensha.web.rating import rating_groups
from jubensha.web.strings import words

NO_STORE = {"Cache-Control": "no-store"}


class Pages:
    """The templates of the app."""

    def __init__(self) -> None:
        self.env = jinja2.Environment(
            loader=jinja2.PackageLoader("jubensha.web", "templates"), autoescape=True,
            undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
        self.env.filters["lines"] = describe
        self.env.globals["rating_groups"] = rating_groups

    def fragment(self, name: str, lang: str, **values: Any) -> str:
        """A template rendered in ``lang`` (a fragment a live page puts in place)."""
        return self.env.get_template(name).render(t=words(lang), lang=lang, **values)

    def page(self, name: str, lang: str, status: int = 200,
             headers: dict[str, str] | None = None, **values: Any) -> HTMLResponse:
        return HTMLResponse(self.fragment(name, lang, **values), status_code=status,
                            headers={**NO_STORE, **(headers or {})})

    def error(self, request: Request, status: int, lang: str, detail: str = "",
              back: str = "/", headers: dict[str, str] | None = None) -> Response:
        """The error as a page in ``lang`` (what happened, and a link back), or as JSON for
        the pages' own scripts (live updates, answers sent in the background)."""
        if wants_json(request):
            return json_response({"detail": detail or str(status)}, status, headers)
        if detail == _phrase(status):  # the server's English "Not Found": the page says it
            detail = ""
        return self.page("error.html", lang, status=status, headers=headers, code=status,
                         detail=detail, back=back)


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def wants_json(request: Request) -> bool:
    path = request.url.path
    return (path.endswith(("/live", "/stream"))
            or "application/json" in request.headers.get("accept", ""))


def json_response(data: dict[str, Any], status: int = 200,
                  headers: dict[str, str] | None = None) -> Response:
    return Response(json.dumps(data, ensure_ascii=False), status_code=status,
                    media_type="application/json", headers={**NO_STORE, **(headers or {})})


def browser_language(request: Request) -> str:
    """'zh' when the browser prefers Chinese to English, else 'en'."""
    best, best_q = "en", -1.0
    for part in request.headers.get("accept-language", "")[:500].split(","):
        tag, _, params = part.strip().partition(";")
        lang = tag.strip().lower()[:2]
        if lang not in ("en", "zh"):
            continue
        try:
            q = float(params.strip()[2:]) if params.strip().startswith("q=") else 1.0
        except ValueError:
            q = 0.0
        if q > best_q:
            best, best_q = lang, q
    return best
