"""Defences every response and every websocket gets (``docs/protocol.md``,
"Limits" and "Headers").

* :class:`SecurityHeaders`: a strict Content-Security-Policy (no inline
  script or style, no framing), ``X-Content-Type-Options: nosniff`` and
  ``Referrer-Policy: no-referrer`` on every HTTP answer; ``Cache-Control:
  no-store`` on room and match pages (``/r/…``, ``/m/…``) and ``no-cache``
  (revalidate with the ETag) on static files.
* :func:`guard_sockets`: a browser may open the room websocket only from a
  page of this server (its ``Origin`` names the ``Host`` it connects to) or
  of an origin in ``CARDBOARD_ALLOWED_ORIGINS``; others get HTTP 403 at the
  handshake. A websocket without ``Origin`` is not a browser's and passes.
  It also applies the per-address connection limits of :mod:`app.limits`.
* :func:`protect`: adds these, :class:`app.limits.BodyLimit` and gzip to an
  app.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from urllib.parse import urlsplit

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from starlette.middleware.gzip import GZipMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.limits import MAX_RECORD_BYTES, AddressLimits, BodyLimit, address_key, refuse_websocket
from app.settings import Settings

CSP = ("default-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self';"
       " frame-ancestors 'none'")
"""The Content-Security-Policy of every page: scripts, styles, images and
websockets from this server only (``'self'`` covers ``ws:``/``wss:`` to the
same host), no inline script or ``style=`` attribute, never in a frame."""

DOCS_PATH = "/api/docs"
SWAGGER = "https://cdn.jsdelivr.net/npm/swagger-ui-dist@5.17.14"
"""Where the API docs page (only with ``CARDBOARD_API_DOCS``) loads Swagger UI
from: a fixed version."""
DOCS_CSP = (f"default-src 'self'; script-src 'self' 'unsafe-inline' {SWAGGER}/; style-src 'self' {SWAGGER}/;"
            " img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'")
"""The looser policy of the API docs page alone: FastAPI's Swagger page runs
an inline script and loads Swagger UI from :data:`SWAGGER`."""

GZIP_MIN_BYTES = 500
"""Answers shorter than this are sent as they are (gzip would not pay)."""

_COMMON = [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer")]


class SecurityHeaders:
    """ASGI middleware adding the headers above to every HTTP answer. A
    ``304 Not Modified`` gets none of them (it carries no content; the
    browser keeps the headers of the answer it revalidates), which keeps a
    repeat visit small. Headers the app set itself are left alone."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        csp = (DOCS_CSP if path == DOCS_PATH else CSP).encode()
        cache = _cache_control(path)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] != 304:
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                extra = [(b"content-security-policy", csp), *_COMMON]
                if cache is not None:
                    extra.append((b"cache-control", cache))
                headers += [(name, value) for name, value in extra if name not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _cache_control(path: str) -> bytes | None:
    if path.startswith(("/r/", "/m/")):
        return b"no-store"
    if path.startswith("/static/"):
        return b"no-cache"
    return None


def origin_allowed(origin: str | None, host: str | None, allowed: tuple[str, ...]) -> bool:
    """Whether a websocket handshake with header ``Origin: origin`` to
    ``Host: host`` may go on: no origin (not a browser), an origin whose host
    and port are ``host``, or one of ``allowed`` (lower case, no trailing
    slash, as :class:`app.settings.Settings` keeps them). ``Origin: null`` (a
    sandboxed page, a file) is refused unless ``null`` is allowed."""
    if origin is None:
        return True
    origin = origin.strip().rstrip("/").lower()
    if origin in allowed:
        return True
    if host is None or origin == "null":
        return False
    return urlsplit(origin).netloc == host.strip().lower()


def openapi_url(settings: Settings) -> str | None:
    """Where the OpenAPI schema is served: nowhere unless ``settings.api_docs``
    (:func:`protect` then adds the docs page at :data:`DOCS_PATH`)."""
    return "/api/openapi.json" if settings.api_docs else None


SocketEndpoint = Callable[[Scope, Receive, Send, Callable[[], None]], Awaitable[None]]
"""The room websocket behind :func:`guard_sockets`: an ASGI app given, besides,
what to call when it closes its socket for flooding (:data:`app.limits.CLOSE_FLOOD`)."""


def guard_sockets(endpoint: SocketEndpoint, settings: Settings) -> ASGIApp:
    """The door of the room websocket, the only layer a websocket goes
    through (``app.main.Cardboard``): one coroutine rather than a stack of
    middleware, since it lives as long as each socket.

    - The origin check: a handshake whose ``Origin`` is not allowed
      (:func:`origin_allowed`, ``settings.allowed_origins``) is refused before
      it is accepted, which uvicorn answers with HTTP 403.
    - The per-address limits (:class:`app.limits.AddressLimits`): a connection
      beyond them is refused with :func:`app.limits.refuse_websocket`.
    - ``endpoint`` runs the socket; when it closes it for flooding, the
      address is barred for a while (:meth:`AddressLimits.bar`)."""
    limits = AddressLimits(settings.ws_per_address, settings.ws_per_minute)
    allowed = settings.allowed_origins

    async def door(scope: Scope, receive: Receive, send: Send) -> None:
        origin = host = None
        for name, value in scope["headers"]:  # no copy: this frame lives as long as the socket
            if name == b"origin":
                origin = value
            elif name == b"host":
                host = value
        if not origin_allowed(origin.decode("latin-1") if origin is not None else None,
                              host.decode("latin-1") if host is not None else None, allowed):
            message = await receive()
            if message["type"] == "websocket.connect":
                await send({"type": "websocket.close", "code": 1008})
            return
        client = scope.get("client")
        key = address_key(client[0] if client else None)
        refusal = limits.open(key)
        if refusal is not None:
            await refuse_websocket(receive, send, refusal)
            return
        try:
            await endpoint(scope, receive, send, partial(limits.bar, key))
        finally:
            limits.close(key)
    return door


def protect(app: FastAPI, settings: Settings) -> None:
    """Add the defences of this module and :mod:`app.limits` to ``app`` (and
    the API docs page if ``settings.api_docs``). From the outside in:
    headers, body limit, gzip; websockets get :func:`guard_sockets` instead."""
    if settings.api_docs:
        @app.get(DOCS_PATH, include_in_schema=False)
        async def api_docs() -> HTMLResponse:
            return get_swagger_ui_html(openapi_url="/api/openapi.json", title="Cardboard API",
                                       swagger_js_url=f"{SWAGGER}/swagger-ui-bundle.js",
                                       swagger_css_url=f"{SWAGGER}/swagger-ui.css",
                                       swagger_favicon_url="/static/img/favicon.svg")

    app.add_middleware(GZipMiddleware, minimum_size=GZIP_MIN_BYTES)
    app.add_middleware(BodyLimit, larger={"/api/records": MAX_RECORD_BYTES})
    app.add_middleware(SecurityHeaders)
