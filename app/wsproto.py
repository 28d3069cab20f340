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
from the scope then too, and so are the subprotocols the client offered:
the app reads them (origin, host, the client's address, a seat token)
before it accepts, never after.

Between frames a socket holds few objects for the garbage collector to
walk (its walks are what stalls a busy server, ``bench/load.py`` prints
them): the app takes the frames as they come (:data:`READ_INTO`) instead of
waiting on ``receive`` (which, for apps that use it, hands over one future
rather than a chain of waiting coroutines); the lists websockets and
uvicorn make for every frame sent and received are kept and emptied
instead; and every socket's keepalive pings run on one :class:`Keepalive`
timer instead of two timers each, made anew at every ping. At 500 rooms
the collector's younger generations walk about a third of what they did.

A socket is pinged only once it has been silent for a whole ping interval
(:meth:`LeanProtocol.send_keepalive_ping`): a client that sends its moves
proves it is there, and neither it nor the server spends a frame on it.

Start uvicorn with ``--ws app.wsproto:LeanProtocol`` (the ``Makefile`` and
``Dockerfile`` do); everything else about the protocol is uvicorn's.
"""

from __future__ import annotations

import asyncio
import random
import struct
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar, cast

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import InvalidState
from websockets.frames import Frame

from app.logs import get_logger

log = get_logger(__name__)

SEND_NOW = "cardboard.send_now"
"""The scope extension of :meth:`LeanProtocol.send_now`: ``(text: str) -> bool``."""
READ_INTO = "cardboard.read_into"
"""The scope extension of :meth:`LeanProtocol.read_into`:
``(sink: Callable[[message], None]) -> Callable[[bool], None]``."""

_T = TypeVar("_T")

PINGS_MAX = 50
PINGS_WINDOW = 10.0
"""A client may send :data:`PINGS_MAX` pings in any :data:`PINGS_WINDOW`
seconds (websocket libraries send one every few seconds)."""


class LeanQueue(Generic[_T]):
    """The part of :class:`asyncio.Queue` that uvicorn's protocol uses
    (``put_nowait``, ``get``, ``empty``, ``qsize``), unbounded, holding a list
    of its items and the future of its waiting getter.

    :meth:`get` is not a coroutine: it returns the future itself, resolved
    with the item. A socket waits for its next frame most of its life, and
    a chain of coroutines waiting on each other (uvicorn's ``receive``, the
    queue's ``get``, its wait) is five more objects alive per socket for
    the garbage collector to walk, every time it runs, than one future."""

    __slots__ = ("_getter", "_items", "_later", "sink")

    def __init__(self) -> None:
        self._items: list[_T] = []
        self._getter: asyncio.Future[_T] | None = None
        self._later: list[asyncio.Future[_T]] | None = None  # getters after the first (rare)
        self.sink: Callable[[_T], None] | None = None
        """If set, every item put is handed to it at once instead (see
        :meth:`drain_into`)."""

    def drain_into(self, sink: Callable[[_T], None]) -> None:
        """From now on hand every item to ``sink`` as it is put, the items
        waiting first; :meth:`get` is not to be used any more."""
        self.sink = sink
        while self._items:
            sink(self._items.pop(0))

    def put_nowait(self, item: _T) -> bool:
        """Add ``item``, or hand it straight to the sink or the first getter
        waiting. True if one of them took it (no item waits then)."""
        if self.sink is not None:
            self.sink(item)
            return True
        while self._getter is not None:
            getter = self._getter
            self._getter = self._later.pop(0) if self._later else None
            if not self._later:
                self._later = None
            if not getter.done():  # not cancelled
                getter.set_result(item)
                return True
        self._items.append(item)
        return False

    def get(self) -> asyncio.Future[_T]:
        """The first item, as a future: resolved at once if an item waits,
        else when one is put. Cancelling the future loses no item."""
        future: asyncio.Future[_T] = asyncio.get_running_loop().create_future()
        if self._items:
            future.set_result(self._items.pop(0))
        elif self._getter is None:
            self._getter = future
        else:
            if self._later is None:
                self._later = []
            self._later.append(future)
        return future

    def empty(self) -> bool:
        """True if no item waits."""
        return not self._items

    def waiting(self) -> bool:
        """True if a sink or a getter waits (an item put now goes straight to it)."""
        return self.sink is not None or (self._getter is not None and not self._getter.done())

    def qsize(self) -> int:
        """How many items wait."""
        return len(self._items)


class LeanEvent:
    """:class:`asyncio.Event` (``set``, ``clear``, ``is_set``, ``wait``)
    without a deque of waiters while nobody waits: a list of their futures
    while someone does, ``None`` otherwise."""

    __slots__ = ("_value", "_waiters")

    def __init__(self) -> None:
        self._value = False
        self._waiters: list[asyncio.Future[None]] | None = None

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
        if self._value:
            return True
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
        return True


class Keepalive:
    """Every socket's keepalive on one timer of the loop: when each is due a
    ping, and by when its pong must come.

    uvicorn gives each socket two timers of its own: one to send the next
    ping, one for the pong's deadline, each a timer handle, a context and a
    bound method, made anew every ping interval and alive for seconds: at
    2,000 sockets and a 5 s interval, some 3,000 objects a second for the
    garbage collector to walk in its older generations, and so more and
    longer collections. Here a socket is put at the end of one of two
    queues (a socket and its due time, in a deque each: no object per entry)
    and the one timer, set for the earliest due time, serves everything due
    within :attr:`SLACK` seconds of it. The intervals are constant, so each
    queue is in the order of its due times. An entry whose socket has since
    been given another due time (or none: it closed) is passed over."""

    SLACK = 0.05
    """Seconds: how much later than due a ping may be sent, so that one
    round of the timer serves the sockets due close together."""

    _of_loop: ClassVar[weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Keepalive]] = (
        weakref.WeakKeyDictionary())

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop) -> Keepalive:
        """The one of ``loop`` (made at its first use)."""
        wheel = cls._of_loop.get(loop)
        if wheel is None:
            wheel = cls._of_loop[loop] = cls(loop)
        return wheel

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.pings: deque[LeanProtocol] = deque()
        self.ping_at: deque[float] = deque()
        self.pongs: deque[LeanProtocol] = deque()
        self.pong_by: deque[float] = deque()
        self.timer: asyncio.TimerHandle | None = None
        self.timer_at = 0.0

    def ping(self, protocol: LeanProtocol, delay: float) -> None:
        """Send ``protocol`` its next ping in ``delay`` seconds."""
        at = self.loop.time() + delay
        if self.ping_at and at < self.ping_at[-1]:
            at = self.ping_at[-1]  # keep the queue in order (delays differ by a ping's round trip)
        protocol.ping_due = at
        self.pings.append(protocol)
        self.ping_at.append(at)
        self._arm(at)

    def pong(self, protocol: LeanProtocol, timeout: float) -> None:
        """Give up on ``protocol`` if its pong has not come in ``timeout`` seconds."""
        at = self.loop.time() + timeout
        protocol.pong_due = at
        self.pongs.append(protocol)
        self.pong_by.append(at)
        self._arm(at)

    def _arm(self, at: float) -> None:
        if self.timer is None or at < self.timer_at:
            if self.timer is not None:
                self.timer.cancel()
            self.timer_at = at
            self.timer = self.loop.call_at(at, self._run)

    def _run(self) -> None:
        self.timer = None
        until = self.loop.time() + self.SLACK
        pings, ping_at, pongs, pong_by = self.pings, self.ping_at, self.pongs, self.pong_by
        while pong_by and pong_by[0] <= until:
            protocol, at = pongs.popleft(), pong_by.popleft()
            if protocol.pong_due == at:
                protocol.pong_due = 0.0
                self._call(protocol.keepalive_timeout)
        while ping_at and ping_at[0] <= until:
            protocol, at = pings.popleft(), ping_at.popleft()
            if protocol.ping_due == at:
                protocol.ping_due = 0.0
                self._call(protocol.send_keepalive_ping)
        nxt = min(ping_at[0] if ping_at else float("inf"), pong_by[0] if pong_by else float("inf"))
        if nxt != float("inf"):
            self._arm(nxt)

    @staticmethod
    def _call(fn: Any) -> None:
        try:
            fn()
        except Exception:  # one socket's failure must not stop everyone's pings
            log.exception("a websocket keepalive failed")


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
        "frames", "curr_msg_data_type", "request", "response", "scope", "ping_due", "pong_due",
        "held", "heard_at", "pings", "pings_from",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.queue = LeanQueue()  # type: ignore[assignment]  # uvicorn declares an asyncio.Queue
        self.writable = LeanEvent()  # type: ignore[assignment]
        self.writable.set()
        self.ping_due = 0.0  # loop time of the next ping (Keepalive), 0 if none
        self.pong_due = 0.0  # loop time by which the pong must come, 0 if none
        self.held = False  # reading stopped by the app (hold), under read_into
        self.heard_at = 0.0  # loop time of the last bytes the client sent
        self.pings = 0  # pings the client sent since pings_from (loop time)
        self.pings_from = 0.0

    def start_keepalive(self) -> None:
        """uvicorn starts its pings once it has answered the handshake: from
        then on its request and response (headers and all) are let go, the
        scope's headers too, and the scope offers :meth:`send_now`."""
        super().start_keepalive()
        self.scope["headers"] = []
        self.scope["subprotocols"] = []  # one may hold a seat token (app.ws.SEAT_SUBPROTOCOL)
        self.scope["extensions"][SEND_NOW] = self.send_now  # type: ignore[assignment]  # ASGI types extensions as dicts
        self.scope["extensions"][READ_INTO] = self.read_into  # type: ignore[assignment]
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
        self.transport.write(self._output())
        return True

    def _output(self) -> bytes:
        """What ``self.conn.data_to_send()`` gives, joined, but the list it
        was in is emptied and kept: websockets makes a new one at every
        frame sent, which lives until the socket's next frame."""
        writes = self.conn.writes
        data = b"".join(writes)
        writes.clear()
        return data

    # ---- frames received -----------------------------------------------------------
    @property
    def _queue(self) -> LeanQueue[Any]:
        return cast(LeanQueue[Any], self.queue)

    def _read_on(self) -> None:
        """uvicorn's pause for a message queued is over: read the socket again."""
        if self.read_paused:
            self.read_paused = False
            if not self.transport.is_closing():
                self.transport.resume_reading()

    def read_into(self, sink: Callable[[Any], None]) -> Callable[[bool], None]:
        """Hand every ASGI message from now on (those queued first) to
        ``sink`` as it comes, instead of through ``receive``: between
        frames nothing of the app waits then, not even a future. Returns
        :meth:`hold`, with which the app stops and restarts reading while
        it is busy with a message (uvicorn's own backpressure)."""
        self._queue.drain_into(sink)
        self._read_on()  # the sink has the message queued now
        return self.hold

    def hold(self, paused: bool) -> None:
        """Stop reading the socket (``True``) or read on (``False``)."""
        if paused == self.held or self.transport.is_closing():
            return
        self.held = paused
        if paused:
            self.transport.pause_reading()
        else:
            self.transport.resume_reading()

    def receive(self) -> asyncio.Future[Any]:  # type: ignore[override]  # awaitable, as ASGI asks
        """The ASGI ``receive``: the next message, as a future (see
        :class:`LeanQueue`); reading goes on once the app has taken every
        message queued, as in uvicorn's."""
        message = self._queue.get()
        if self._queue.empty():
            self._read_on()
        return message

    def send_receive_event_to_app(self) -> None:
        """As uvicorn's, which stops reading the socket after every message
        until the app has taken it, except when the app is waiting for it:
        it has it at once, and reading goes on (two system calls less per
        message). The list of the message's frames is kept for the next
        (uvicorn makes a new one for every message, alive until the next)."""
        frames = self.frames
        try:
            if self.read_paused or not self._queue.waiting():
                super().send_receive_event_to_app()
                return
            self.read_paused = True  # so uvicorn's does not pause reading
            try:
                super().send_receive_event_to_app()
            finally:
                self.read_paused = False
        finally:
            frames.clear()
            self.frames = frames
        if not self.queue.empty():  # the getter had gone: hold reading, as uvicorn does
            self.read_paused = True
            self.transport.pause_reading()

    def handle_text(self, event: Frame) -> None:
        """As uvicorn's, in the list kept for the frames of a message."""
        self.curr_msg_data_type = "text"
        self._first_frame(event)

    def handle_bytes(self, event: Frame) -> None:
        """As uvicorn's, in the list kept for the frames of a message."""
        self.curr_msg_data_type = "bytes"
        self._first_frame(event)

    def _first_frame(self, event: Frame) -> None:
        frames = self.frames
        frames.clear()
        frames.append(event.data)  # type: ignore[arg-type]
        if event.fin:
            self.send_receive_event_to_app()

    def handle_events(self) -> None:
        """As uvicorn's, and the list of events websockets gave is kept for
        its next ones (it makes a new one at every read otherwise). uvicorn
        calls it for every read, so the time is noted here: the client was
        alive then (:meth:`send_keepalive_ping`)."""
        self.heard_at = self.loop.time()
        events = self.conn.events
        super().handle_events()
        if not self.conn.events and self.conn.events is not events:
            events.clear()
            self.conn.events = events
        if not self.handshake_initiated and self.conn.handshake_exc is not None:
            self._refused()

    def _refused(self) -> None:
        """websockets refused the handshake request itself (a header line
        over 8 KB, too many headers, not HTTP): it has its answer ready (431,
        414, or nothing), but uvicorn sends it only for a request it parsed,
        and the socket stayed open for ever (verification pass: 300 such
        handshakes from one address held 300 sockets, past every limit).
        Send the answer and close."""
        self.handshake_complete = True
        self.close_sent = True
        output = self.conn.data_to_send()
        if not self.transport.is_closing():
            self.transport.write(b"".join(output))
            self.transport.close()

    # ---- keepalive, on the loop's one Keepalive timer ---------------------------------
    def schedule_ping(self) -> None:
        """As uvicorn's: the next ping an interval after the last one was sent."""
        assert self.ping_interval is not None
        Keepalive.of(self.loop).ping(self, max(0.0, self.ping_interval - self.last_ping_rtt))

    def send_keepalive_ping(self) -> None:
        """As uvicorn's, a ping with a random payload and the pong's deadline,
        but only to a socket that has sent nothing for a whole ping interval:
        one that has is alive (its bytes came), and its ping is put off to an
        interval after them. A client in a game sends its moves, so most of
        its pings, and their pongs, are never sent: at 500 rooms they were
        400 of the 900 frames a second the server read. A client that
        vanishes is still pinged an interval after the last it sent, and
        given up a ping timeout later."""
        if self.close_sent or self.transport.is_closing():
            return
        assert self.ping_interval is not None
        wait = self.heard_at + self.ping_interval - self.loop.time()
        if wait > Keepalive.SLACK:  # (not less: the timer's round would serve it again at once)
            Keepalive.of(self.loop).ping(self, wait)
            return
        self.pending_ping_payload = struct.pack("!I", random.getrandbits(32))
        self.ping_sent_at = self.loop.time()
        self.conn.send_ping(self.pending_ping_payload)
        self.transport.write(self._output())
        if self.ping_timeout is not None:
            Keepalive.of(self.loop).pong(self, self.ping_timeout)
        else:
            self.schedule_ping()

    def handle_ping(self) -> None:
        """As uvicorn's (websockets has queued the pong), except while the
        transport takes no more (its buffer is over the high-water mark):
        the pong is let go then. A client that sent pings and never read
        made the server keep every pong (480 MB in 21 seconds, and on, in
        the break-it pass); RFC 6455 (5.5.3) lets an endpoint answer only the
        latest of several pings. A client that sends more than
        :data:`PINGS_MAX` pings in :data:`PINGS_WINDOW` seconds is closed
        with 1008 (a flood of them slowed every other answer of the server:
        verification pass); websocket libraries ping every few seconds."""
        now = self.loop.time()
        if now - self.pings_from > PINGS_WINDOW:
            self.pings_from, self.pings = now, 0
        self.pings += 1
        data = self._output()
        if self.transport.is_closing():
            return
        if self.pings > PINGS_MAX:
            self.conn.send_close(1008, "too many pings")
            self.transport.write(self._output())
            self.close_sent = True
            self.transport.close()
            return
        if self.writable.is_set():
            self.transport.write(data)

    def handle_pong(self, event: Frame) -> None:
        """As uvicorn's: the pong of the ping in flight ends its deadline and
        sets the next ping; any other pong is ignored."""
        if self.pending_ping_payload is None or bytes(event.data) != self.pending_ping_payload:
            return
        self.last_ping_rtt = self.loop.time() - self.ping_sent_at
        self.pending_ping_payload = None
        if self.pong_due:
            self.pong_due = 0.0
            self.schedule_ping()

    def stop_keepalive(self) -> None:
        """As uvicorn's: no more pings, and no deadline."""
        super().stop_keepalive()
        self.ping_due = self.pong_due = 0.0

    def connection_lost(self, exc: Exception | None) -> None:
        """As uvicorn's (the app is told: a disconnect message), then
        :meth:`send_now` and :meth:`read_into` leave the scope (they refer
        to this protocol) and the sink is let go. websockets' parser is
        closed: a generator whose frame holds the websockets connection
        that holds it, a cycle of a dozen objects (about 1.3 KiB) per
        socket that only a sweep of the collector would free
        (``app/collector.py``). A parser that failed (a protocol error, an
        oversize frame) left its exception on the connection, and that
        exception's traceback holds the parser's frame, so the connection
        again: it is dropped too. No byte is read after this."""
        super().connection_lost(exc)
        self.conn.parser.close()
        self.conn.parser_exc = None
        self._queue.sink = None
        extensions = getattr(self, "scope", {}).get("extensions")
        if extensions is not None:
            extensions.pop(SEND_NOW, None)
            extensions.pop(READ_INTO, None)
