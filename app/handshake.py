"""A deadline for receiving each HTTP request, websocket handshakes included.

uvicorn has no such timeout: ``--timeout-keep-alive`` only runs while a
connection waits *between* requests, and any byte received cancels it, so a
client that sends half a request (or nothing at all) holds its connection,
and a file descriptor, for ever. ``--limit-concurrency`` does not help: it
counts those connections, then answers 503 to everyone. A reverse proxy's
header timeout (nginx ``client_header_timeout``) covers a server behind one;
this covers a server that faces clients itself.

:class:`DeadlineProtocol` is uvicorn's httptools protocol with a deadline of
``CARDBOARD_HANDSHAKE_SECONDS`` (:class:`app.settings.Settings`) from the
moment a connection opens, or a keep-alive connection finishes an answer,
until its next request has arrived whole (headers and body) or has been
upgraded to a websocket. A connection still short of that is closed. A
websocket, once upgraded, is not affected (its own pings watch it), and
neither is a slow answer.

It also bounds HTTP pipelining. uvicorn queues the requests a connection
sends ahead of their answers, and parses the whole of every read: a client
that writes a million ``GET`` requests on one connection and never reads
the answers made the server hold them all (2.8 GB in nine seconds, in the
break-it pass). Browsers do not pipeline; a connection with more than
:data:`PIPELINE_MAX` requests waiting is closed, and the rest of what it
sent is not looked at.

Start uvicorn with ``--http app.handshake:DeadlineProtocol`` (the
``Makefile`` and ``Dockerfile`` do).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from app.logs import get_logger
from app.settings import get_settings

log = get_logger(__name__)

PIPELINE_MAX = 32
"""Requests one connection may have waiting behind the one being answered."""

WARN_EVERY = 60.0
"""Seconds between two log warnings of connections closed for pipelining
(the others are logged at debug level: a flood of them is one line)."""
_warned_at = -WARN_EVERY


class DeadlineProtocol(HttpToolsProtocol):
    """uvicorn's httptools HTTP protocol, closing a connection that has not
    sent a whole request within ``deadline`` seconds (by default
    ``Settings.handshake_seconds``)."""

    def __init__(self, *args: Any, deadline: float | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.deadline = deadline if deadline is not None else get_settings().handshake_seconds
        self._deadline_timer: asyncio.TimerHandle | None = None
        self._dropping = False  # pipelined too much: closed once the answer under way is sent

    def _arm(self) -> None:
        self._disarm()
        self._deadline_timer = self.loop.call_later(self.deadline, self._expired)

    def _disarm(self) -> None:
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()
            self._deadline_timer = None

    def _expired(self) -> None:
        self._deadline_timer = None
        if not self.transport.is_closing():
            log.debug("closed a connection that sent no whole request within %g s", self.deadline)
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_headers_complete(self) -> None:
        """As uvicorn's (a request's cycle starts, or waits in the pipeline),
        but nothing more of a connection that is closing, and a connection
        with more than :data:`PIPELINE_MAX` requests waiting is dropped: the
        waiting ones are let go, nothing more it sent is looked at, and it is
        closed once the answer under way is sent (closed under that answer,
        the app logged a traceback each time: verification pass)."""
        if self._ignoring:
            return
        super().on_headers_complete()
        if len(self.pipeline) > PIPELINE_MAX:
            global _warned_at
            now = self.loop.time()
            loud = now - _warned_at >= WARN_EVERY
            if loud:
                _warned_at = now
            log.log(logging.WARNING if loud else logging.DEBUG,
                    "closed a connection from %s that pipelined more than %d requests",
                    self.client[0] if self.client else "?", PIPELINE_MAX)
            self.pipeline.clear()
            self._dropping = True  # (a request waited: one is being answered)
            self.flow.pause_reading()

    @property
    def _ignoring(self) -> bool:
        """True once nothing more the connection sends is looked at: it is
        closing, or dropped for pipelining."""
        return self._dropping or self.transport.is_closing()

    def on_body(self, body: bytes) -> None:
        if not self._ignoring:
            super().on_body(body)

    def on_message_complete(self) -> None:
        self._disarm()
        if not self._ignoring:
            super().on_message_complete()

    def handle_websocket_upgrade(self) -> None:
        """As uvicorn's; then this protocol, whose transport now serves the
        websocket, lets its parser go: the parser refers back to it (its
        callbacks), a cycle that only a garbage collection would free
        (``app.collector``: one that had survived a collection would wait
        for the sweep). Without it the protocol is freed at once."""
        self._disarm()
        super().handle_websocket_upgrade()
        self.parser = None  # type: ignore[assignment]  # as uvicorn's connection_lost does

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self._dropping:
            self.transport.close()
        elif not self.transport.is_closing() and not self.pipeline:
            self._arm()
