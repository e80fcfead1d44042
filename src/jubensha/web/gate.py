"""What every request passes before the app sees it, so that a page from another site can
neither act on this server nor read it:

- the ``Host`` must be one the server was started for: an IP address, ``localhost``, or a
  name given with ``--allow-host``. A page on a name its owner points at this machine
  (DNS rebinding) sends its own name, and is refused; an IP address cannot be rebound.
- a request that changes something (any method but GET and HEAD) must come from this
  server's own pages: its ``Origin`` (or, from browsers that send none, its ``Referer``)
  names the same host and port. A form on another site or port sends its own origin, or
  ``null``, and is refused; a request naming neither is refused too.
- every response forbids framing and any script, style or connection not from this server.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SAFE_METHODS = frozenset({"GET", "HEAD"})
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
SECURITY_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    # Same-origin, not no-referrer: under no-referrer a browser sends "Origin: null" with
    # the server's own forms, which the origin check must refuse.
    "referrer-policy": "same-origin",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
}
DEFAULT_PORTS = {"http": 80, "https": 443}


def same_secret(given: str, known: str) -> bool:
    """Whether ``given`` (from a request: any characters) equals ``known``, in constant time.
    Compared as UTF-8 bytes: ``secrets.compare_digest`` raises on non-ASCII strings."""
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"),
                               known.encode("utf-8", "surrogatepass"))


def host_allowed(host: str, names: Iterable[str]) -> bool:
    """Whether a ``Host`` header (``name``, ``name:port``, ``[v6]:port``) is an IP address,
    localhost, or one of ``names`` (compared case-insensitively, without the port)."""
    split = _split_host(host)
    if split is None:
        return False
    name = split[0]
    if name == "localhost" or name in {n.lower().rstrip(".") for n in names}:
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def same_origin(origin: str, host: str, scheme: str = "http") -> bool:
    """Whether ``origin`` (an Origin or Referer value) is the request's own: the same
    scheme (as the connection, or a local proxy's X-Forwarded-Proto, says), and the host
    and port of ``host`` (its Host header; a port left out is the scheme's)."""
    try:
        parts = urlsplit(origin)
        origin_port = parts.port
    except ValueError:
        return False
    split = _split_host(host)
    if parts.scheme != scheme or scheme not in DEFAULT_PORTS or not parts.hostname \
            or split is None:
        return False
    default = DEFAULT_PORTS[scheme]
    return (parts.hostname.rstrip("."), origin_port or default) == (split[0],
                                                                   split[1] or default)


class RequestGate:
    """ASGI middleware: the host allow-list, the origin check and the security headers."""

    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str] = ()):
        self.app = app
        self.allowed_hosts = tuple(allowed_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(scope)
        if refusal is not None:
            status, reason = refusal
            await PlainTextResponse(reason + "\n", status_code=status,
                                    headers=SECURITY_HEADERS)(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """The status and reason (one line) a request is refused with, or None."""
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if not host_allowed(host, self.allowed_hosts):
            return 400, (f"refused: this server does not answer to the host name "
                         f"{host[:100]!r} (start it with --allow-host NAME to add one)")
        if scope["method"] in SAFE_METHODS:
            return None
        origin = headers.get("origin") or headers.get("referer")
        if origin is None or not same_origin(origin, host, scope.get("scheme", "http")):
            return 403, ("refused: a request that changes something must come from this "
                         f"server's own pages (origin {(origin or 'not given')[:100]!r})")
        return None


def _split_host(host: str) -> tuple[str, int | None] | None:
    """A Host header's name or address (lower case, no brackets) and port; None when it is
    not a plain ``name[:port]``."""
    host = host.strip()
    if not host or any(c in host for c in "@/?#\\ \t"):
        return None
    try:
        parts = urlsplit("//" + host)
        port = parts.port
    except ValueError:
        return None
    name = (parts.hostname or "").rstrip(".")
    return (name, port) if name else None
