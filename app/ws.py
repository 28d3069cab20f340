"""The room websocket ``/ws/{room}`` (``docs/protocol.md``).

Each connection's frames are read by a :class:`_Reader`: it checks every
frame (:func:`app.protocol.read_frame`, after the rate limit) and applies it
to the room through the room's commit point, one after the other; under
``app.wsproto.LeanProtocol`` its task lives only while frames wait. A frame for the client is written at
once while its socket's transport takes more (``app.wsproto.SEND_NOW``, the
common case); otherwise it is queued (:class:`WsConnection`) and the queue
is sent in order by a short-lived task that exists only while frames wait,
so an idle connection costs little. Queuing never
waits, so the lock is held only while the room changes; a client that stops
reading is disconnected once :data:`OUTBOX_FRAMES` frames wait for it, or
one frame has waited :data:`SEND_SECONDS`. After every change (a frame, a
connection opening or closing) the room's computer players are poked
(:meth:`app.bots.Bots.poke`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket

from app.bots import Bots
from app.limits import CLOSE_FLOOD, FLOOD_FRAMES, FloodGuard, Verdict, address_key, trim
from app.lobby import Lobby, Unavailable
from app.logs import get_logger
from app.protocol import (
    DEFAULT_LEVEL,
    PING_TEXT,
    PONG_TEXT,
    RATE_FRAMES,
    RATE_SECONDS,
    AddBotFrame,
    ChatFrame,
    ClientFrame,
    FrameError,
    JoinFrame,
    LeaveFrame,
    MoveFrame,
    MuteSpectatorsFrame,
    NewTokenFrame,
    NextDealFrame,
    PatchesFrame,
    PingFrame,
    ReadyFrame,
    RematchFrame,
    RemoveBotFrame,
    ResumeFrame,
    WatchFrame,
    error_text,
    read_frame,
)
from app.rooms import Room
from app.wsproto import READ_INTO, SEND_NOW

log = get_logger(__name__)

OUTBOX_FRAMES = 1000
"""Frames that may wait for a slow client before it is disconnected."""

SEND_SECONDS = 20.0
"""A client that has not taken one frame in this long is disconnected (its
socket buffer is full: it stopped reading)."""

CUT_SECONDS = 5.0
"""How long closing a too-slow connection politely may take."""

ROOM_CONNECTIONS = 100
"""Connections one room accepts at once. Beyond it, as many more as the room
has seats are let in for :data:`CLAIM_SECONDS`, to take a seat back
(``resume``) or a free one (``join``): idle spectators cannot shut a
player out of their own room. Any other is told so and closed; when none
of those places is left, the oldest one let in over :data:`CLAIM_FIRST`
ago makes way."""

CLAIM_SECONDS = 5.0
"""How long a connection beyond :data:`ROOM_CONNECTIONS` has to take a seat."""

CLAIM_FIRST = 1.0
"""Seconds after which a connection let in to take a seat, and that has not,
makes way for a newer one when the room has no more places: a player sends
``resume`` as soon as the socket opens (break-it pass: connections that
never claimed anything, opened one after the other, held every place and
kept a player out of their room eight times in ten)."""

SUBPROTOCOL = "cardboard"
"""The websocket subprotocol a client may offer, and that the server then
accepts (docs/protocol.md, "Connecting"); it must be offered beside
:data:`SEAT_SUBPROTOCOL`, since a browser drops a handshake that accepts none
of the subprotocols it offered."""

SEAT_SUBPROTOCOL = "cardboard.seat."
"""The prefix of the subprotocol that carries the client's seat token
(``cardboard.seat.<token>``): a player coming back to a crowded room is let
in on it even while every place is held by connections younger than
:data:`CLAIM_FIRST` (verification pass: sockets opened as fast as possible
from ten addresses kept a resuming player out). The token is checked, never
sent back; the client still sends ``resume``."""

CLOSE_NO_SUCH_ROOM = 4404
CLOSE_TOO_SLOW = 1013
CLOSE_UNAVAILABLE = 1011


class RateLimiter:
    """At most ``limit`` frames in any ``window`` seconds. Frames refused do
    not count. ``clock`` returns seconds (``time.monotonic``)."""

    def __init__(self, limit: int = RATE_FRAMES, window: float = RATE_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window = window
        self.clock = clock
        self._times: list[float] = []  # the frames let through in the last window (limits.trim)

    def allow(self) -> bool:
        """True if one more frame may pass now (and count it)."""
        now = self.clock()
        times = self._times
        trim(times, now, self.window)
        if len(times) >= self.limit:
            return False
        times.append(now)
        return True


class WsConnection:
    """One websocket client of a room: the seat it holds and its queue of
    frames to send (see :class:`app.rooms.Connection`).

    Lean on purpose (a server holds thousands): no task of its own while
    idle. :meth:`push` writes the frame at once if nothing waits and the
    socket takes it (``app.wsproto.SEND_NOW``); otherwise it appends to a
    list and, if no send is under way, starts one task that sends until the
    list is empty, then ends."""

    __slots__ = ("_now", "_queue", "_send", "_writer", "address", "claim_at", "closed", "cut", "seat",
                 "token_seat", "too_slow")

    def __init__(self, send: Callable[[str], Awaitable[None]],
                 cut: Callable[..., None] | None = None,
                 now: Callable[[str], bool] | None = None) -> None:
        self.seat: str | None = None
        self.address: str | None = None
        """The client's address key (``app.limits.address_key``), for the
        per-address caps on what it may start (``None``: not known)."""
        self.too_slow = False
        self.closed = False
        self.claim_at = 0.0
        """Loop time it was let in beyond :data:`ROOM_CONNECTIONS` to take a
        seat (0: it was not)."""
        self.token_seat: str | None = None
        """Let in beyond :data:`ROOM_CONNECTIONS`, the seat whose token it
        offered on the handshake (:data:`SEAT_SUBPROTOCOL`), if any."""
        self.cut = cut
        """Called once when the client stops taking frames: it ends the
        connection (:func:`_cut`; also with a reason and a close code)."""
        self._send = send
        self._now = now
        """Writes a frame at once if it can (``app.wsproto.SEND_NOW``), else says not."""
        self._queue: list[str] = []  # a few frames at most, usually one: a list is lighter than a deque
        self._writer: asyncio.Task[None] | None = None

    def push(self, text: str) -> None:
        """Queue a frame. If :data:`OUTBOX_FRAMES` frames wait already the
        client is too slow: nothing more is queued and the connection is
        closed with 1013 once those are sent."""
        if self.closed:
            return
        if self._writer is None and self._now is not None and self._now(text):
            return  # written at once: nothing waits
        if len(self._queue) >= OUTBOX_FRAMES:
            self.too_slow = True
            self._stop()
            return
        self._queue.append(text)
        if self._writer is None:
            self._writer = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        queue = self._queue
        try:
            while queue:
                async with asyncio.timeout(SEND_SECONDS):
                    await self._send(queue.pop(0))
        except Exception:  # the client has gone or stopped reading
            self.too_slow = True
            self._stop()
        finally:
            self._writer = None

    def _stop(self) -> None:
        if not self.closed:
            self.closed = True
            if self.cut is not None:
                self.cut()

    async def flush(self) -> None:
        """Wait until the frames queued so far are sent (or the send failed)."""
        if self._writer is not None:
            await asyncio.wait([self._writer])

    def end(self) -> None:
        """The room is gone (told ``no_such_room`` just before): close the
        connection with 4404, as a client that connects to no room is
        (``docs/protocol.md``, "Close codes")."""
        if self.cut is not None and not self.closed:
            self.closed = True
            self.cut("the room is no longer kept on the server", always=False, code=CLOSE_NO_SUCH_ROOM)

    def close(self) -> None:
        """No more frames will be queued; those queued are dropped."""
        self.closed = True
        self._now = None
        self._queue.clear()
        if self._writer is not None:
            self._writer.cancel()
            # Let go of it: a task cancelled before it first ran keeps the
            # error, whose traceback holds its frame and so this connection
            # (and its socket); with this reference they made a cycle that
            # only a full garbage collection frees (app.collector: the sweep).
            self._writer = None


async def serve(scope: Scope, receive: Receive, send: Send, flooded: Callable[[], None] | None = None,
                *, lobby: Lobby) -> None:
    """Run one websocket connection (ASGI ``scope`` of ``/ws/<room id>``)
    until it closes; ``flooded`` is called if it is closed for flooding
    (:data:`CLOSE_FLOOD`). The frames received are read straight from the
    server's ``receive`` (one coroutine less per socket than through
    Starlette's)."""
    websocket = WebSocket(scope, receive, send)
    room_id = scope["path"][4:]
    offered = scope.get("subprotocols") or ()
    token = next((p[len(SEAT_SUBPROTOCOL):] for p in offered if p.startswith(SEAT_SUBPROTOCOL)), None)
    await websocket.accept(SUBPROTOCOL if SUBPROTOCOL in offered else None)
    try:
        room = await lobby.room(room_id)
    except Unavailable:
        await websocket.send_text(error_text("unavailable", "the server cannot reach its storage just"
                                             " now: reconnecting later will work"))
        await websocket.close(CLOSE_UNAVAILABLE)
        return
    conn = None
    if room is not None:
        async with room.lock:
            crowded = len(room.connections) >= ROOM_CONNECTIONS
            seat = room.seat_of_token(token) if token and crowded else None
            full = len(room.connections) >= ROOM_CONNECTIONS + len(room.seats)
            if full and not room.closed and not _make_way(room, seat, lobby):
                await websocket.send_text(error_text("rate_limited", _CROWDED))
                await websocket.close(CLOSE_TOO_SLOW)
                return
            if not room.closed:
                reader = asyncio.current_task()
                conn = WsConnection(websocket.send_text, partial(_cut, websocket, reader),
                                    scope.get("extensions", {}).get(SEND_NOW))
                conn.address = address_key(websocket.client.host) if websocket.client else None
                room.attach(conn)
                lobby.touch(room)
                lobby.bots.poke(room)
                if crowded:
                    loop = asyncio.get_running_loop()
                    conn.claim_at = loop.time()
                    conn.token_seat = seat
                    loop.call_later(CLAIM_SECONDS, _claimed_or_closed, conn)
    if room is None or conn is None:
        await websocket.send_text(error_text("no_such_room", "there is no such room (it may have"
                                             " been closed after a long idle time)"))
        await websocket.close(CLOSE_NO_SUCH_ROOM)
        return
    try:
        await _Reader(websocket, conn, room, lobby.bots, flooded).run(
            receive, scope.get("extensions", {}).get(READ_INTO))
    except asyncio.CancelledError:
        if not conn.too_slow:
            raise
    finally:
        try:
            async with room.lock:
                _gone(room, conn, lobby)
        except asyncio.CancelledError:
            # Only when the server's loop is ending (it cancels every task
            # left): say it without waiting for a lock nobody will release.
            _gone(room, conn, lobby)
        conn.close()


def _gone(room: Room, conn: WsConnection, lobby: Lobby) -> None:
    """``conn`` has closed, or made way (:func:`_make_way`): the room, the
    lobby and the computer players learn it, once."""
    if conn not in room.connections:
        return
    room.detach(conn)
    lobby.touch(room)
    lobby.bots.poke(room)


_CROWDED = (f"this room already has {ROOM_CONNECTIONS} connections: only a player taking a seat"
            " (resume, or join a free one) may connect now; try again later")


def _make_way(room: Room, seat: str | None, lobby: Lobby) -> bool:
    """A connection comes to ``room`` with no place left, holding ``seat``'s
    token (checked) or none: make one place, if one may be made, by letting
    go (at once: :func:`_gone`) a connection let in to take a seat that has
    not taken one. For a connection with no token, the one let in longest
    ago, if it offered no token and has had :data:`CLAIM_FIRST` seconds.
    For a seat's player, whatever their ages: an earlier one with the same
    token, else one with no token, else one whose token is of a seat held
    now (its player is seated already); failing those, the connection
    holding ``seat`` (told ``replaced``: a dead socket that does not know it
    yet). So one token can hold one such place at a time, and cannot keep
    another seat's player out (verification pass: a seated player opening
    sockets with his own token kept the other out six times in ten).
    False if no place may be made."""
    waiting = [c for c in room.connections if isinstance(c, WsConnection) and c.seat is None
               and c.claim_at > 0.0 and not c.closed]
    if seat is None:
        before = asyncio.get_running_loop().time() - CLAIM_FIRST
        picks = [c for c in waiting if c.token_seat is None and c.claim_at <= before]
    else:
        picks = ([c for c in waiting if c.token_seat == seat]
                 or [c for c in waiting if c.token_seat is None]
                 or [c for c in waiting if c.token_seat in room.seat_conn])
    out = min(picks, key=lambda c: c.claim_at, default=None)
    why = ""
    if out is None and seat is not None:
        holder = room.seat_conn.get(seat)
        if isinstance(holder, WsConnection) and not holder.closed:
            out, why = holder, error_text("replaced", f"seat {seat} was taken back by another connection")
    if out is None:
        return False
    _claim_over(out, why)
    _gone(room, out, lobby)
    return True


def _claimed_or_closed(conn: WsConnection) -> None:
    """A connection let in beyond :data:`ROOM_CONNECTIONS` has had
    :data:`CLAIM_SECONDS`: unless it holds a seat now, it is told so and
    closed (1013)."""
    if conn.seat is not None:  # it claimed a seat: an ordinary connection from now on
        conn.claim_at = 0.0
    elif not conn.closed and conn.claim_at:
        _claim_over(conn)


def _claim_over(conn: WsConnection, why: str = "") -> None:
    """``conn``, let in to take a seat, has not: told so (or ``why``, an error
    frame) and closed (1013) once that frame is sent (verification pass: the
    close could overtake it). Nothing more is sent to it."""
    conn.claim_at = 0.0
    conn.push(why or error_text("rate_limited", _CROWDED))
    conn.too_slow = True  # ended by the server: its reader's cancellation is expected
    conn.closed = True
    cut = conn.cut
    if cut is not None:
        async def after_the_frame() -> None:
            await conn.flush()
            cut("the room is full", always=False)
        asyncio.get_running_loop().create_task(after_the_frame())


def _cut(websocket: WebSocket, reader: asyncio.Task[Any] | None,
         reason: str = "too many frames waiting: reconnect", always: bool = True,
         code: int = CLOSE_TOO_SLOW) -> None:
    """End a connection whose client stopped taking frames (or, with
    ``always`` false, one that has no place in a full room, or whose room is
    gone): close it with ``code``, 1013 by default (give up after a few
    seconds) and stop its reader (without ``always``, only if the close did
    not go through: a client that reads answers it, and its reader ends by
    itself)."""
    async def cut() -> None:
        closed = False
        try:
            async with asyncio.timeout(CUT_SECONDS):
                await websocket.close(code, reason)
                closed = True
        except Exception:
            pass
        if reader is not None and (always or not closed):
            reader.cancel()
    asyncio.get_running_loop().create_task(cut())


class _Reader:
    """What reads one connection's frames: each is rate-limited, checked and
    applied to the room (:func:`handle`), one after the other.

    Under :class:`app.wsproto.LeanProtocol` the frames are handed over as
    they come (``app.wsproto.READ_INTO``): a short-lived task handles those
    that have come and ends, so that between frames, which is most of a
    socket's life, nothing of it waits (not even a future: objects that the
    garbage collector would walk). While a frame is being handled the socket
    is not read (as uvicorn does). Under another server the frames are
    awaited from ASGI's ``receive``."""

    def __init__(self, websocket: WebSocket, conn: WsConnection, room: Room, bots: Bots,
                 flooded: Callable[[], None] | None) -> None:
        self.websocket, self.conn, self.room, self.bots = websocket, conn, room, bots
        self.flooded = flooded
        self.limiter = RateLimiter()
        self.flood = FloodGuard()
        self.backlog: list[Any] = []
        self.task: asyncio.Task[None] | None = None
        self.done: asyncio.Future[None] | None = None
        self.hold: Callable[[bool], None] | None = None

    async def run(self, receive: Receive, read_into: Callable[..., Callable[[bool], None]] | None
                  ) -> None:
        """Read until the client goes or the connection is to end."""
        if read_into is None:
            while await self.take(await receive()):
                pass
            return
        self.done = asyncio.get_running_loop().create_future()
        self.hold = read_into(self.put)
        try:
            await self.done
        finally:
            if self.task is not None:
                self.task.cancel()

    def put(self, message: Any) -> None:
        """A message has come (called by the protocol); none is read once
        the connection is to end."""
        if self.done is None or self.done.done():
            return
        if self.task is not None and message.get("text") == PING_TEXT and self.limiter.allow():
            # A ping while a frame before it waits (a slow save): answered at
            # once, as the path is what it asks about (docs/protocol.md, ping).
            self.conn.push(PONG_TEXT)
            return
        self.backlog.append(message)
        if self.task is None:
            self.task = asyncio.get_running_loop().create_task(self._drain())
        elif self.hold is not None:
            self.hold(True)  # busy with the one before: read no more for now

    async def _drain(self) -> None:
        backlog = self.backlog
        try:
            while backlog:
                if not await self.take(backlog.pop(0)):
                    self._end(None)
                    return
        except asyncio.CancelledError:
            self._end(None)
            raise
        except Exception as exc:  # the connection's task raises it (and uvicorn logs it)
            self._end(exc)
            return
        finally:
            self.task = None
        if self.hold is not None:
            self.hold(False)

    def _end(self, exc: Exception | None) -> None:
        done = self.done
        if done is not None and not done.done():
            if exc is None:
                done.set_result(None)
            else:
                done.set_exception(exc)

    async def take(self, message: Any) -> bool:
        """Handle one ASGI message; False once the connection is to end."""
        if message["type"] == "websocket.disconnect":
            return False
        conn = self.conn
        if not self.limiter.allow():
            verdict = self.flood.refused()
            if verdict is Verdict.CLOSE:  # read no more: send what is queued, then close
                if self.flooded is not None:
                    self.flooded()
                await conn.flush()
                await self.websocket.close(CLOSE_FLOOD, "too many frames after rate_limited")
                return False
            if verdict is Verdict.TELL:
                conn.push(error_text("rate_limited", f"too many frames: at most {RATE_FRAMES} in any"
                                     f" {RATE_SECONDS:g} seconds; frames are ignored until you slow down,"
                                     f" and {FLOOD_FRAMES} ignored in that time close the connection"))
            return True
        self.flood.accepted()
        try:
            frame = read_frame(message.get("text"), message.get("bytes"))
        except FrameError as exc:
            conn.push(error_text(exc.code, exc.message))
            return True
        del message  # not kept while the frame is handled
        if isinstance(frame, PingFrame):  # the room has no part in it
            conn.push(PONG_TEXT)
            return True
        await handle(self.room, conn, frame, self.bots)
        return True


Handler = Callable[[Room, WsConnection, Any], None]
"""A room action for a client frame (``ping`` has none: :meth:`take`
answers it)."""

HANDLERS: dict[type[ClientFrame], Handler] = {
    JoinFrame: lambda room, conn, f: room.join(conn, f.seat, f.name),
    ResumeFrame: lambda room, conn, f: room.resume(conn, f.token),
    MoveFrame: lambda room, conn, f: room.move(conn, f.move, f.version),
    ReadyFrame: lambda room, conn, f: room.ready(conn, f.version),
    NextDealFrame: lambda room, conn, f: room.next_deal(conn, f.version),
    RematchFrame: lambda room, conn, f: room.rematch(conn, f.version),
    LeaveFrame: lambda room, conn, f: room.leave(conn),
    AddBotFrame: lambda room, conn, f: room.add_bot(conn, f.seat, f.level or DEFAULT_LEVEL),
    RemoveBotFrame: lambda room, conn, f: room.remove_bot(conn, f.seat),
    NewTokenFrame: lambda room, conn, f: room.new_token(conn),
    WatchFrame: lambda room, conn, f: room.watch(conn, f.name),
    ChatFrame: lambda room, conn, f: room.chat(conn, f.text),
    MuteSpectatorsFrame: lambda room, conn, f: room.mute_spectators(conn, f.mute),
    PatchesFrame: lambda room, conn, f: room.take_patches(conn),
}
"""The room action for each client frame, by its model (one per ``type``)."""


async def handle(room: Room, conn: WsConnection, frame: ClientFrame, bots: Bots) -> None:
    """Apply one valid client frame to ``room`` through its commit point
    (:meth:`app.rooms.Room.act`), then poke its computer players (``bots``)
    unless a commit has (``Room.on_commit``): a frame may change who is
    connected without a new version. A refusal sends the error, then a fresh
    state, to ``conn`` alone."""
    handler = HANDLERS[type(frame)]
    version = room.version
    try:
        await room.act(lambda: handler(room, conn, frame), conn, versioned=hasattr(frame, "version"),
                       fresh=isinstance(frame, ResumeFrame))
    except Exception:
        log.exception("room %s failed on a %s frame", room.id, type(frame).__name__)
        conn.push(error_text("bad_frame", "the server could not handle this frame"))
    if room.version == version:
        bots.poke(room)
