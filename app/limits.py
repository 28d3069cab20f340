"""Limits that keep one client from costing the others (``docs/protocol.md``,
"Limits").

* :class:`BodyLimit`: an ASGI middleware that answers ``413`` to any HTTP
  request whose body is over :data:`MAX_BODY_BYTES` (:data:`MAX_RECORD_BYTES`
  for a match record sent to ``/api/records``), whether it says so in
  ``Content-Length`` or streams it (chunked), before the app reads it all.
* :class:`AddressLimits` and :func:`refuse_websocket`: websockets open at
  once and new ones per minute, per client address; a connection beyond
  either is accepted, sent one ``rate_limited`` error and closed with
  :data:`CLOSE_TOO_MANY_CONNECTIONS` (``app.security.guard_sockets``).
* :class:`FloodGuard`: a connection that goes on sending after it was rate
  limited is closed with :data:`CLOSE_FLOOD`, and is told it was limited only
  once per burst, so that refusing its frames costs next to nothing.
* :func:`excerpt`: a message cut so that it never echoes more than a short
  excerpt of a bad value.
"""

from __future__ import annotations

import bisect
import ipaddress
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.protocol import RATE_SECONDS, error_text

MAX_BODY_BYTES = 16 * 1024
"""The largest HTTP request body accepted, in bytes (a room request is well
under 1 KiB)."""

MAX_RECORD_BYTES = 1024 * 1024
"""The largest body of a request that sends a match record to review
(``POST /api/records…``), in bytes: the record of a long match is tens of KiB."""

CLOSE_TOO_MANY_CONNECTIONS = 4429
"""Websocket close code: this client address has too many websockets open,
or opened too many in the last minute. Try again later."""

CLOSE_FLOOD = 1008
"""Websocket close code (policy violation): the connection kept sending
frames after it was rate limited."""

FLOOD_FRAMES = 50
"""Frames refused by the rate limit, within one rate window, after which the
connection is closed with :data:`CLOSE_FLOOD`."""

FLOOD_COOLDOWN = 60.0
"""Seconds during which a client address whose websocket was closed with
:data:`CLOSE_FLOOD` may open no new one (so that reconnecting does not buy
a flood a fresh allowance of frames)."""

EXCERPT_WORD = 40
EXCERPT_TEXT = 300
""":func:`excerpt` cuts every run of more than ``EXCERPT_WORD`` characters
without a space, and the whole text to ``EXCERPT_TEXT`` characters."""

_LONG_WORD = re.compile(rf"\S{{{EXCERPT_WORD + 1},}}")


def excerpt(text: str) -> str:
    """``text`` with every run of more than :data:`EXCERPT_WORD` non-space
    characters cut to its start and ``…``, and the whole cut to
    :data:`EXCERPT_TEXT` characters, so that an error message quoting a bad
    value echoes only a short excerpt of it."""
    text = _LONG_WORD.sub(lambda m: m.group(0)[: EXCERPT_WORD - 3] + "…", text)
    return text if len(text) <= EXCERPT_TEXT else text[: EXCERPT_TEXT - 1] + "…"


# ---- HTTP bodies ------------------------------------------------------------------------

class _TooLarge(Exception):
    pass


class BodyLimit:
    """ASGI middleware: an HTTP request with a body over ``limit`` bytes gets
    ``413 {"detail": …}``; ``larger`` maps path prefixes to the limits of
    the paths that take more (the longest prefix that fits wins). A
    ``Content-Length`` over the limit is refused
    before anything is read; a body without one (chunked) is counted as it
    arrives and refused as soon as it passes the limit: the app's reading
    fails, and whatever answer it then makes is replaced by the 413 (apps
    here read the whole body before they answer)."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES,
                 larger: Mapping[str, int] | None = None) -> None:
        self.app = app
        self.limit = limit
        self.larger = sorted((larger or {}).items(), key=lambda item: -len(item[0]))

    def limit_of(self, path: str) -> int:
        """The body limit of a request to ``path``, in bytes."""
        return next((n for prefix, n in self.larger if path.startswith(prefix)), self.limit)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_of(scope["path"])
        for name, value in scope["headers"]:
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = limit + 1
                if declared > limit:
                    await self._refuse(send, limit)
                    return
        seen = 0
        over = started = False

        async def counted_receive() -> Message:
            nonlocal seen, over
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    over = True
                    raise _TooLarge
            return message

        async def watched_send(message: Message) -> None:
            nonlocal started
            if over:  # whatever the app makes of the exception, the answer is 413
                if message["type"] == "http.response.start" and not started:
                    started = True
                    await self._refuse(send, limit)
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted_receive, watched_send)
        except _TooLarge:
            if not started:
                await self._refuse(send, limit)

    async def _refuse(self, send: Send, limit: int) -> None:
        body = (b'{"detail":"the request body is too large: at most %d bytes"}' % limit)
        await send({"type": "http.response.start", "status": 413, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})


# ---- websockets per client address -------------------------------------------------------

def address_key(host: str | None) -> str:
    """The key a client address is counted under: the address itself for
    IPv4, its /64 network for IPv6 (one host usually holds a whole /64), the
    text as it is for anything else (a test client's name)."""
    if not host:
        return "?"
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host
    if ip.version == 6:
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def trim(times: list[float], now: float, window: float) -> None:
    """Drop from ``times`` (seconds, oldest first) those at least ``window``
    seconds before ``now``: what is left are the events of the last window.
    A list rather than a deque, which is over 700 bytes even empty: a server
    keeps a few of these per connection."""
    if times and now - times[0] >= window:
        del times[:bisect.bisect_right(times, now - window)]


@dataclass
class _Address:
    open: int = 0
    recent: list[float] = field(default_factory=list)
    barred_until: float = 0.0


class AddressLimits:
    """Counts the websockets of each client address: at most ``at_once`` open
    together and ``per_minute`` opened in any 60 seconds, and none for
    :data:`FLOOD_COOLDOWN` seconds after one of them flooded (:meth:`bar`).
    ``clock`` returns seconds (``time.monotonic``). Addresses with nothing
    open, recent or barred are forgotten, so the table stays small."""

    WINDOW = 60.0

    def __init__(self, at_once: int, per_minute: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.at_once = at_once
        self.per_minute = per_minute
        self.clock = clock
        self._table: dict[str, _Address] = {}

    def open(self, key: str) -> str | None:
        """Count a new connection from ``key`` and return ``None``, or return
        why it is refused (a sentence for the client) and count nothing."""
        now = self.clock()
        entry = self._table.setdefault(key, _Address())
        recent = entry.recent
        trim(recent, now, self.WINDOW)
        if now < entry.barred_until:
            return (f"a connection from your address flooded the server: no new connection for"
                    f" {entry.barred_until - now:.0f} s")
        if entry.open >= self.at_once:
            return (f"too many connections from your address: at most {self.at_once} open at once;"
                    " close a tab or try again later")
        if len(recent) >= self.per_minute:
            return (f"too many new connections from your address: at most {self.per_minute} a minute;"
                    " try again in a minute")
        entry.open += 1
        recent.append(now)
        return None

    def bar(self, key: str) -> None:
        """``key`` flooded: refuse its new connections for :data:`FLOOD_COOLDOWN` s."""
        self._table.setdefault(key, _Address()).barred_until = self.clock() + FLOOD_COOLDOWN

    def close(self, key: str) -> None:
        """A connection counted by :meth:`open` has ended."""
        entry = self._table.get(key)
        if entry is None:
            return
        entry.open -= 1
        if len(self._table) > 1024:
            self._forget()

    def _forget(self) -> None:
        now = self.clock()
        for key in [k for k, e in self._table.items()
                    if e.open <= 0 and now >= e.barred_until
                    and (not e.recent or now - e.recent[-1] >= self.WINDOW)]:
            del self._table[key]

    def __len__(self) -> int:
        return len(self._table)


async def refuse_websocket(receive: Receive, send: Send, reason: str) -> None:
    """Accept a websocket only to send it one ``rate_limited`` error with
    ``reason`` and close it with :data:`CLOSE_TOO_MANY_CONNECTIONS`."""
    message = await receive()
    if message["type"] != "websocket.connect":
        return
    await send({"type": "websocket.accept"})
    await send({"type": "websocket.send", "text": error_text("rate_limited", reason)})
    await send({"type": "websocket.close", "code": CLOSE_TOO_MANY_CONNECTIONS,
                "reason": "too many connections from this address"})


# ---- frames after the rate limit --------------------------------------------------------

class Verdict(Enum):
    """What to do with a frame the rate limit refused."""

    TELL = "tell"
    """Send one ``rate_limited`` error: the first refusal of a burst."""
    DROP = "drop"
    """Ignore it silently: the client was told already."""
    CLOSE = "close"
    """Close the connection with :data:`CLOSE_FLOOD`."""


class FloodGuard:
    """Judges the frames a connection's rate limit refused: the first refusal
    after an accepted frame is told (one ``rate_limited`` error), later ones
    are dropped silently, and the ``limit``-th refusal within ``window``
    seconds closes the connection. ``clock`` returns seconds."""

    def __init__(self, limit: int = FLOOD_FRAMES, window: float = RATE_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window = window
        self.clock = clock
        self._refused: list[float] = []  # the refusals of the last window (trim)
        self._told = False

    def accepted(self) -> None:
        """The rate limit let a frame through: the next refusal is told again."""
        self._told = False

    def refused(self) -> Verdict:
        """The rate limit refused a frame: what to do with it."""
        now = self.clock()
        times = self._refused
        trim(times, now, self.window)
        times.append(now)
        if len(times) >= self.limit:
            return Verdict.CLOSE
        if self._told:
            return Verdict.DROP
        self._told = True
        return Verdict.TELL

