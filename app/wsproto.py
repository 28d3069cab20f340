"""uvicorn's websocket protocol, lighter per connection.

A server holds thousands of sockets, and most of each one's memory is the
protocol's own: uvicorn's ``websockets-sansio`` protocol keeps an
``asyncio.Queue`` (four deques of over 700 bytes each, empty or not), an
``asyncio.Event`` (one more), and the handshake's request and response with
their headers for as long as the socket lives. :class:`LeanProtocol` is that
protocol with a queue and an event that hold only what they are given, and
it lets the handshake go once it is done (and empties the request's headers,
which websockets' parser keeps): about 8 KiB and 20 tracked objects less
per socket (``bench/load.py`` measures KiB per room).

It also lets the app send a text frame without a round of the ASGI
``send`` (a task, a timeout, two awaits and Starlette's checks for every
frame): once the handshake is answered the scope's extensions hold
:data:`SEND_NOW`, a function that writes one frame at once and says whether
it could (not while the transport is paused or a close is under way: the
app then sends through ASGI as before). The handshake's headers are dropped
from the scope then too: the app reads them (origin, host, the client's
address) before it accepts, never after.

Start uvicorn with ``--ws app.wsproto:LeanProtocol`` (the ``Makefile`` and
``Dockerfile`` do); everything else about the protocol is uvicorn's.
"""

from __future__ import annotations

import asyncio
from typing import Any, Generic, TypeVar

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import InvalidState

SEND_NOW = "cardboard.send_now"
"""The scope extension of :meth:`LeanProtocol.send_now`: ``(text: str) -> bool``."""

_T = TypeVar("_T")


class _Waiters:
    """The futures of those waiting on a :class:`LeanQueue` or a
    :class:`LeanEvent`: a list while someone waits, ``None`` otherwise."""

    __slots__ = ("_waiters",)

    def __init__(self) -> None:
        self._waiters: list[asyncio.Future[None]] | None = None

    async def _wait(self) -> None:
        """Wait until a future of :attr:`_waiters` is resolved (or this is
        cancelled); the list goes once nobody waits."""
        waiter = asyncio.get_running_loop().create_future()
        if self._waiters is None:
            self._waiters = []
        self._waiters.append(waiter)
        try:
            await waiter
        finally:
            if self._waiters is not None and waiter in self._waiters:
                self._waiters.remove(waiter)
            if not self._waiters:
                self._waiters = None


class LeanQueue(_Waiters, Generic[_T]):
    """The part of :class:`asyncio.Queue` that uvicorn's protocol uses
    (``put_nowait``, ``get``, ``empty``, ``qsize``), unbounded, holding a list
    of its items and the futures of its waiting getters (none while nobody
    waits)."""

    __slots__ = ("_items",)

    def __init__(self) -> None:
        super().__init__()
        self._items: list[_T] = []

    def put_nowait(self, item: _T) -> None:
        """Add ``item``, and wake the first getter waiting."""
        self._items.append(item)
        getters = self._waiters
        while getters:
            getter = getters.pop(0)
            if not getter.done():
                getter.set_result(None)
                break

    async def get(self) -> _T:
        """Remove and return the first item, waiting for one if need be."""
        while not self._items:
            await self._wait()
        return self._items.pop(0)

    def empty(self) -> bool:
        """True if no item waits."""
        return not self._items

    def qsize(self) -> int:
        """How many items wait."""
        return len(self._items)


class LeanEvent(_Waiters):
    """:class:`asyncio.Event` (``set``, ``clear``, ``is_set``, ``wait``)
    without a deque of waiters while nobody waits."""

    __slots__ = ("_value",)

    def __init__(self) -> None:
        super().__init__()
        self._value = False

    def is_set(self) -> bool:
        """True once set, until cleared."""
        return self._value

    def set(self) -> None:
        """Set it, and wake everyone waiting."""
        if self._value:
            return
        self._value = True
        waiters, self._waiters = self._waiters, None
        for waiter in waiters or ():
            if not waiter.done():
                waiter.set_result(None)

    def clear(self) -> None:
        """Unset it: :meth:`wait` waits again."""
        self._value = False

    async def wait(self) -> bool:
        """Return ``True`` once it is set (at once if it is)."""
        if not self._value:
            await self._wait()
        return True


class LeanProtocol(WebSocketsSansIOProtocol):
    """uvicorn's ``websockets-sansio`` protocol with a :class:`LeanQueue`
    for the frames received, a :class:`LeanEvent` for "the transport takes
    more", and no copy of the handshake kept once it is answered.

    uvicorn's protocol sets 37 attributes: past 30, CPython gives each
    instance a dict of its own (about 1.6 KB) instead of one whose keys all
    instances share. :data:`SLOTS` holds 21 of them in slots instead, which
    leaves each socket's dict small and its keys shared (about 1.2 KB less
    per socket; ``bench/load.py`` prints the memory per room)."""

    __slots__ = SLOTS = (
        "conn", "transport", "queue", "writable", "read_paused", "close_sent", "disconnected",
        "handshake_initiated", "handshake_complete", "close_timer", "initial_response",
        "ping_timer", "pong_timer", "pending_ping_payload", "ping_sent_at", "last_ping_rtt",
        "frames", "curr_msg_data_type", "request", "response", "scope",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.queue = LeanQueue()  # type: ignore[assignment]
        self.writable = LeanEvent()  # type: ignore[assignment]
        self.writable.set()

    def start_keepalive(self) -> None:
        """uvicorn starts its pings once it has answered the handshake: from
        then on its request and response (headers and all) are let go, the
        scope's headers too, and the scope offers :meth:`send_now`."""
        super().start_keepalive()
        self.scope["headers"] = []
        self.scope["extensions"][SEND_NOW] = self.send_now  # type: ignore[assignment]  # ASGI types extensions as dicts
        # websockets' parser keeps the request alive for the socket's life (a
        # local of its generator): empty its headers, a dozen lists.
        if getattr(self, "request", None) is not None:
            self.request.headers.clear()
        self.request = None  # type: ignore[assignment]
        self.response = None  # type: ignore[assignment]

    def send_now(self, text: str) -> bool:
        """Write ``text`` as one text frame at once if the socket is open and
        its transport takes more (and is not closing: a ping left unanswered
        closes it before uvicorn learns the connection is lost); ``False``
        (nothing written) if not: the
        caller then sends through ASGI, which waits, or tells that the
        client has gone."""
        if (self.close_sent or self.disconnected or not self.writable.is_set()
                or self.transport.is_closing()):
            return False
        try:
            self.conn.send_text(text.encode())
        except InvalidState:  # a close is under way
            return False
        self.transport.write(b"".join(self.conn.data_to_send()))
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        """As uvicorn's, and :meth:`send_now` leaves the scope (it refers to
        this protocol)."""
        super().connection_lost(exc)
        extensions = getattr(self, "scope", {}).get("extensions")
        if extensions is not None:
            extensions.pop(SEND_NOW, None)
