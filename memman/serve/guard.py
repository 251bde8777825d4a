"""What every request passes before a route sees it: the bind rule, the API key, the Host and
Origin of a browser's request, and the body size limit.

- Bound to a loopback address the server needs no key; any other bind needs one
  (`check_bind`, at start). With a key every request carries it: `Authorization: Bearer KEY`,
  or HTTP Basic with the key as password, which a browser asks for on the inspector page.
- On a loopback bind, a request must name a loopback host: a web page whose domain was
  pointed at 127.0.0.1 (DNS rebinding) is refused. A browser's write (POST, PUT, DELETE)
  from a page of another origin is refused too, so no site the user visits can post a form
  or a `fetch` to the local server (both are simple requests a browser sends unasked).
- A body larger than serve_max_body_bytes: 413 from its Content-Length, or once that many
  bytes are read (`read_body`), never buffered whole.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import ipaddress
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from memman.errors import ConfigError
from memman.serve.failures import HttpProblem, response_for

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
PAGE_PREFIX = "/ui"  # the inspector: a browser there is asked for the key by HTTP Basic


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 or localhost: an address no other machine reaches."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, api_key: str | None) -> None:
    """ConfigError for a bind other machines reach without an API key."""
    if not api_key and not is_loopback(host):
        raise ConfigError(
            f"serving on {host} needs an API key: set MEMMAN_SERVE_API_KEY (or --api-key), at "
            "least 16 characters; without one memman serve binds to 127.0.0.1 only"
        )


def key_matches(authorization: str | None, api_key: str) -> bool:
    """Whether an Authorization header carries the key (Bearer, or Basic's password), compared
    in constant time."""
    scheme, _, value = (authorization or "").strip().partition(" ")
    given = value.strip()
    if scheme.lower() == "basic":
        try:
            given = base64.b64decode(given, validate=True).decode("utf-8").partition(":")[2]
        except (binascii.Error, UnicodeDecodeError):
            return False
    elif scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.encode("utf-8"), api_key.encode("utf-8"))


def _host_name(host_header: str) -> str:
    """The name in a Host header, without its port ("[::1]:8000" -> "::1")."""
    if host_header.startswith("["):
        return host_header[1:].partition("]")[0]
    return host_header.rpartition(":")[0] if host_header.count(":") == 1 else host_header


class Guard:
    """ASGI middleware refusing, with a JSON error, what the module docstring lists."""

    def __init__(
        self, app: ASGIApp, *, api_key: str | None, loopback: bool, max_body_bytes: int
    ) -> None:
        self.app = app
        self.api_key = api_key
        self.loopback = loopback
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            try:
                self.check(scope["method"], scope["path"], Headers(scope=scope))
            except HttpProblem as problem:
                await response_for(problem, scope["path"])(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def check(self, method: str, path: str, headers: Headers) -> None:
        host = headers.get("host", "")
        if self.loopback and not is_loopback(_host_name(host)):
            raise HttpProblem(400, f"Host {host!r} is not a loopback name of this server")
        origin = headers.get("origin")
        if method not in SAFE_METHODS and origin is not None and urlsplit(origin).netloc != host:
            raise HttpProblem(403, f"a request from the page of {origin} may not write here")
        if self.api_key and not key_matches(headers.get("authorization"), self.api_key):
            challenge = 'Basic realm="memman"' if path.startswith(PAGE_PREFIX) else "Bearer"
            raise HttpProblem(
                401,
                "an API key is required: Authorization: Bearer <key>",
                {"WWW-Authenticate": challenge},
            )
        length = headers.get("content-length")
        if length is not None and not length.isdigit():
            raise HttpProblem(400, f"Content-Length {length!r} is not a number of bytes")
        if length is not None and int(length) > self.max_body_bytes:
            raise HttpProblem(413, f"the request body is over {self.max_body_bytes} bytes")


async def read_body(request: Request) -> bytes:
    """The request's body, 413 once it passes the limit (a chunked body has no length)."""
    limit: int = request.app.state.max_body_bytes
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise HttpProblem(413, f"the request body is over {limit} bytes")
    return bytes(body)
