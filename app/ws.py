"""The room websocket ``/ws/{room}`` (``docs/protocol.md``).

Each connection runs two tasks: a reader that checks every frame
(:func:`app.protocol.read_frame`, after the rate limit) and applies it to the
room under the room's lock, and a writer that sends the frames queued for the
connection in order. Queuing never waits, so the lock is held only while the
room changes; a client that stops reading is disconnected once
:data:`OUTBOX_FRAMES` frames wait for it. After every change (a frame, a
connection opening or closing) the room's computer players are poked
(:meth:`app.bots.Bots.poke`).
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable

import anyio
from anyio import CancelScope
from starlette.websockets import WebSocket

from app.bots import Bots
from app.limits import CLOSE_FLOOD, FLOOD_FRAMES, FloodGuard, Verdict
from app.lobby import Lobby
from app.protocol import (
    DEFAULT_LEVEL,
    RATE_FRAMES,
    RATE_SECONDS,
    AddBotFrame,
    ClientFrame,
    FrameError,
    JoinFrame,
    LeaveFrame,
    MoveFrame,
    NextDealFrame,
    RematchFrame,
    RemoveBotFrame,
    ResumeFrame,
    error_text,
    read_frame,
)
from app.rooms import Room, RoomError

log = logging.getLogger(__name__)

OUTBOX_FRAMES = 1000
"""Frames that may wait for a slow client before it is disconnected."""

SEND_SECONDS = 20.0
"""A client that has not taken one frame in this long is disconnected (its
socket buffer is full: it stopped reading)."""

ROOM_CONNECTIONS = 100
"""Connections one room accepts at once; more are told so and closed."""

CLOSE_NO_SUCH_ROOM = 4404
CLOSE_TOO_SLOW = 1013


class RateLimiter:
    """At most ``limit`` frames in any ``window`` seconds. Frames refused do
    not count. ``clock`` returns seconds (``time.monotonic``)."""

    def __init__(self, limit: int = RATE_FRAMES, window: float = RATE_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window = window
        self.clock = clock
        self._times: deque[float] = deque()

    def allow(self) -> bool:
        """True if one more frame may pass now (and count it)."""
        now = self.clock()
        times = self._times
        while times and now - times[0] >= self.window:
            times.popleft()
        if len(times) >= self.limit:
            return False
        times.append(now)
        return True


class WsConnection:
    """One websocket client of a room: the seat it holds and its queue of
    frames to send (see :class:`app.rooms.Connection`)."""

    def __init__(self) -> None:
        self.seat: str | None = None
        self.too_slow = False
        self.close_with: tuple[int, str] | None = None
        self._send, self.outbox = anyio.create_memory_object_stream[str](OUTBOX_FRAMES)

    def push(self, text: str) -> None:
        """Queue a frame. If the queue is full the client is too slow: the
        queue is closed and the connection ends once it is drained."""
        try:
            self._send.send_nowait(text)
        except anyio.WouldBlock:
            self.too_slow = True
            self._send.close()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    def close(self) -> None:
        """No more frames will be queued."""
        self._send.close()

    def end(self, code: int, reason: str) -> None:
        """Close the connection with ``code`` and ``reason`` once the frames
        queued so far are sent; nothing more is queued."""
        self.close_with = (code, reason)
        self._send.close()


async def serve(websocket: WebSocket, room_id: str, lobby: Lobby) -> None:
    """Run one websocket connection to room ``room_id`` until it closes."""
    await websocket.accept()
    room = lobby.store.get(room_id)
    conn = None
    if room is not None:
        async with room.lock:
            if not room.closed and len(room.connections) >= ROOM_CONNECTIONS:
                await websocket.send_text(error_text(
                    "rate_limited", f"this room already has {ROOM_CONNECTIONS} connections: try later"))
                await websocket.close(CLOSE_TOO_SLOW)
                return
            if not room.closed:
                conn = WsConnection()
                room.attach(conn)
                lobby.bots.poke(room)
    if room is None or conn is None:
        await websocket.send_text(error_text("no_such_room", "there is no such room (it may have"
                                             " been closed after a long idle time)"))
        await websocket.close(CLOSE_NO_SUCH_ROOM)
        return
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_write, websocket, conn, tg.cancel_scope)
            await _read(websocket, conn, room, lobby.bots)
            tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            async with room.lock:
                room.detach(conn)
                lobby.bots.poke(room)
            conn.close()


async def _write(websocket: WebSocket, conn: WsConnection, scope: CancelScope) -> None:
    try:
        async with conn.outbox:
            async for text in conn.outbox:
                with anyio.fail_after(SEND_SECONDS):
                    await websocket.send_text(text)
        if conn.too_slow:
            await websocket.close(CLOSE_TOO_SLOW, "too many frames waiting: reconnect")
        elif conn.close_with is not None:
            await websocket.close(*conn.close_with)
    except Exception:  # the client has gone
        pass
    scope.cancel()


async def _read(websocket: WebSocket, conn: WsConnection, room: Room, bots: Bots) -> None:
    limiter = RateLimiter()
    flood = FloodGuard()
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return
        if not limiter.allow():
            verdict = flood.refused()
            if verdict is Verdict.CLOSE:  # read no more: the writer closes once it has sent the rest
                conn.end(CLOSE_FLOOD, "too many frames after rate_limited")
                await anyio.sleep_forever()
            if verdict is Verdict.TELL:
                conn.push(error_text("rate_limited", f"too many frames: at most {RATE_FRAMES} in any"
                                     f" {RATE_SECONDS:g} seconds; frames are ignored until you slow down, and"
                                     f" {FLOOD_FRAMES} ignored in that time close the connection"))
            continue
        flood.accepted()
        try:
            frame = read_frame(message.get("text"), message.get("bytes"))
        except FrameError as exc:
            conn.push(error_text(exc.code, exc.message))
            continue
        await handle(room, conn, frame, bots)


async def handle(room: Room, conn: WsConnection, frame: ClientFrame, bots: Bots) -> None:
    """Apply one valid client frame to ``room`` under its lock, then poke its
    computer players (``bots``). A refusal sends the error, then a fresh
    state, to ``conn`` alone."""
    async with room.lock:
        try:
            if isinstance(frame, JoinFrame):
                room.join(conn, frame.seat, frame.name)
            elif isinstance(frame, ResumeFrame):
                room.resume(conn, frame.token)
            elif isinstance(frame, MoveFrame):
                room.move(conn, frame.move, frame.version)
            elif isinstance(frame, NextDealFrame):
                room.next_deal(conn, frame.version)
            elif isinstance(frame, RematchFrame):
                room.rematch(conn, frame.version)
            elif isinstance(frame, LeaveFrame):
                room.leave(conn)
            elif isinstance(frame, AddBotFrame):
                room.add_bot(conn, frame.seat, frame.level or DEFAULT_LEVEL)
            elif isinstance(frame, RemoveBotFrame):
                room.remove_bot(conn, frame.seat)
        except RoomError as exc:
            room.refuse(conn, exc)
        except Exception:
            log.exception("room %s failed on a %s frame", room.id, type(frame).__name__)
            conn.push(error_text("bad_frame", "the server could not handle this frame"))
        bots.poke(room)
