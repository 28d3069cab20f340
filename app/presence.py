"""Presence across server processes: who is connected to which seat, kept in
Redis so that every process serving a room shows the same seats connected,
hands seats over to computer players at the same moment and tells a
connection it was ``replaced`` when its seat is resumed on another process
(``docs/scaling.md``, "Presence").

Keys, under the prefix (``cb:``):

=============================  ================================================
``room:{id}:seats``            hash: seat → ``"{process} {connection}"`` while
                               its holder is connected, ``"- {unix time}"``
                               once they are away (since then)
``room:{id}:conns``            hash: ``"{process}:{connection}"`` → ``1`` for
                               every connection open on the room, spectators
                               included (rooms are watched, and not swept,
                               while it is not empty), or ``"n {name}"`` for
                               one that watches under that name
``proc:{process}:rooms``       set: rooms where that process has connections
``procs``                      sorted set: process → its last heartbeat (ms)
=============================  ================================================

Every change is one Lua script that also publishes ``"p {room}"`` on the bus
channel; each process that has the room loaded then reads the two hashes
again (:meth:`RedisPresence.refresh`) and reconciles its own connections with
them: a seat now held by another process's connection means that its own
connection there was replaced. A process whose heartbeat is older than
:data:`DEAD_MS` is dead: the first process to notice (the one whose ``ZREM``
removes it) marks its seats away and drops its connections, in the same
script (:meth:`RedisPresence.bury`).

The writes of one process go through one queue, in order, so that a refresh
never reads the hashes before this process's own earlier writes; a refresh
read before one of them (queued earlier) does not count against the seat
that write takes. A write that fails (Redis down or stalled) is not retried
as it was: the process writes its whole presence again once Redis answers
(:meth:`RedisPresence.reassert`), which also takes out what closed meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError

from app.logs import get_logger
from app.protocol import error_text

if TYPE_CHECKING:
    import redis.asyncio as aioredis

    from app.rooms import Connection, Room

log = get_logger(__name__)

HEARTBEAT_MS = 1000
"""How often a process says it is alive."""

DEAD_MS = 5000
"""A process silent this long is taken for dead: its seats show away."""

_ATTACH = """
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('SADD', KEYS[2], ARGV[2])
redis.call('PUBLISH', KEYS[3], 'p ' .. ARGV[2])
"""
"""KEYS: conns, proc rooms, channel; ARGV: connection field, room id, its
value."""

_NAMED = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  redis.call('PUBLISH', KEYS[2], 'p ' .. ARGV[3])
end
"""
"""KEYS: conns, channel; ARGV: connection field, its value, room id. Only
while the connection is listed (a name never brings back one gone)."""

_DETACH = """
redis.call('HDEL', KEYS[1], ARGV[1])
if ARGV[3] ~= '' and redis.call('HGET', KEYS[2], ARGV[3]) == ARGV[4] then
  redis.call('HSET', KEYS[2], ARGV[3], '- ' .. ARGV[5])
end
if ARGV[6] == '1' then redis.call('SREM', KEYS[3], ARGV[2]) end
if redis.call('EXISTS', KEYS[5]) == 0 then redis.call('DEL', KEYS[1], KEYS[2]) end
redis.call('PUBLISH', KEYS[4], 'p ' .. ARGV[2])
"""
"""KEYS: conns, seats, proc rooms, channel, the room's meta; ARGV: connection
field, room id, seat ('' if none), this connection's seat value, unix time,
last ('1': no connection of this process is left on the room). A room
Redis no longer holds (its files lost) keeps no presence either: written
back by a closing socket, it stayed for ever (verification pass)."""

_SEATED = """
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PUBLISH', KEYS[2], 'p ' .. ARGV[3])
"""
"""KEYS: seats, channel; ARGV: seat, this connection's seat value, room id."""

_UNSEATED = """
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then redis.call('HDEL', KEYS[1], ARGV[1]) end
redis.call('PUBLISH', KEYS[2], 'p ' .. ARGV[3])
"""
"""KEYS: seats, channel; ARGV: seat, this connection's seat value, room id."""

_BURY = """
local beat = redis.call('ZSCORE', KEYS[3], ARGV[2])
if not beat or tonumber(beat) >= tonumber(ARGV[4]) then return false end
redis.call('ZREM', KEYS[3], ARGV[2])
local rooms = redis.call('SMEMBERS', KEYS[1])
for _, room in ipairs(rooms) do
  local conns = ARGV[1] .. 'room:' .. room .. ':conns'
  local seats = ARGV[1] .. 'room:' .. room .. ':seats'
  local c = redis.call('HKEYS', conns)
  for _, field in ipairs(c) do
    if string.sub(field, 1, #ARGV[2] + 1) == ARGV[2] .. ':' then redis.call('HDEL', conns, field) end
  end
  local s = redis.call('HGETALL', seats)
  for i = 1, #s, 2 do
    if string.sub(s[i + 1], 1, #ARGV[2] + 1) == ARGV[2] .. ' ' then
      redis.call('HSET', seats, s[i], '- ' .. ARGV[3])
    end
  end
  redis.call('PUBLISH', KEYS[2], 'p ' .. room)
end
redis.call('DEL', KEYS[1])
return #rooms
"""
"""KEYS: the dead process's rooms, channel, procs; ARGV: prefix, dead
process, unix time, heartbeat cutoff (ms; a process stopping buries itself
with a cutoff no heartbeat reaches). Only if the process's heartbeat
is still older than the cutoff, it is removed and buried at once (a process
that beat since, perhaps writing its presence again, keeps it). (Room keys
are built in the script: one Redis, not a cluster.)"""


_ASSERT = """
if redis.call('EXISTS', KEYS[5]) == 0 then
  redis.call('DEL', KEYS[1], KEYS[2])
  redis.call('SREM', KEYS[3], ARGV[2])
  return 0
end
local n = tonumber(ARGV[4])
local open, held = {}, {}
for i = 5, 4 + 2 * n, 2 do open[ARGV[i]] = ARGV[i + 1] end
for i = 5 + 2 * n, #ARGV, 2 do held[ARGV[i]] = ARGV[i + 1] end
local mine = ARGV[1] .. ':'
for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(field, 1, #mine) == mine and not open[field] then redis.call('HDEL', KEYS[1], field) end
end
for field, value in pairs(open) do redis.call('HSET', KEYS[1], field, value) end
local own = ARGV[1] .. ' '
local s = redis.call('HGETALL', KEYS[2])
for i = 1, #s, 2 do
  if not held[s[i]] and string.sub(s[i + 1], 1, #own) == own then
    redis.call('HSET', KEYS[2], s[i], '- ' .. ARGV[3])
  end
end
for seat, value in pairs(held) do redis.call('HSET', KEYS[2], seat, value) end
if n > 0 then redis.call('SADD', KEYS[3], ARGV[2]) else redis.call('SREM', KEYS[3], ARGV[2]) end
redis.call('PUBLISH', KEYS[4], 'p ' .. ARGV[2])
return 1
"""
"""KEYS: conns, seats, proc rooms, channel, the room's meta; ARGV: process,
room id, unix time, n, then n pairs (connection field, value) for this
process's connections open on the room, then pairs (seat, value) for the
seats they hold. Makes the room's presence say exactly that of this process:
its other connections are taken out and its other seats marked away (their
closing was written while Redis could not take it), and the room is in (or
out of) the process's rooms. A room Redis no longer holds keeps none."""

REPAIR_SECONDS = (0.5, 30.0)
"""After a presence write failed, the whole presence is written again in
0.5 s, then, while that fails too, after twice as long each time, up to 30 s."""


class RedisPresence:
    """The presence of process ``proc``'s connections in Redis (``client``,
    keys under ``prefix``, events on ``channel``); implements
    :class:`app.rooms.Presence`. ``dead`` is the set of processes whose
    heartbeat has lapsed, kept by :mod:`app.bus` through :meth:`lapsed` (any
    other counts as alive: a process just started may not have been seen
    yet); ``poke`` is called with a room after its presence changed (the
    computer players' poke)."""

    def __init__(self, client: aioredis.Redis, prefix: str, channel: str, proc: str) -> None:
        self.client = client
        self.prefix = prefix
        self.channel = channel
        self.proc = proc
        self.dead: set[str] = set()
        self._counted_out: dict[str, Room] = {}
        """Rooms whose presence was last applied with seats or connections
        of a process in ``dead`` left out, by id: read again once one of
        those processes is no longer dead (:meth:`lapsed`)."""
        self.poke: Callable[[Room], None] = lambda room: None
        self.rooms: Callable[[], list[Room]] = list
        """The rooms this process has loaded (given by :mod:`app.bus`)."""
        self._repair_in = REPAIR_SECONDS[0]
        self._repair: asyncio.TimerHandle | None = None
        self._failing = False
        self._ids: dict[Connection, str] = {}
        self._count = itertools.count(1)
        self._queue: asyncio.Queue[Callable[[], Awaitable[Any]]] = asyncio.Queue()
        self._jobs = 0
        self._seated_at: dict[Connection, int] = {}
        self._worker: asyncio.Task[None] | None = None
        self._attach = client.register_script(_ATTACH)
        self._detach = client.register_script(_DETACH)
        self._seated = client.register_script(_SEATED)
        self._unseated = client.register_script(_UNSEATED)
        self._named = client.register_script(_NAMED)
        self._bury = client.register_script(_BURY)
        self._assert = client.register_script(_ASSERT)

    def _key(self, *parts: str) -> str:
        return self.prefix + ":".join(parts)

    def start(self) -> None:
        """Start the writer (in the running loop)."""
        self._worker = asyncio.get_running_loop().create_task(self._write(), name="presence writer")

    async def stop(self) -> None:
        """Finish the writes queued, then stop."""
        if self._repair is not None:
            self._repair.cancel()
            self._repair = None
        if self._worker is None:
            return
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._queue.join(), 2.0)
        self._worker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._worker
        self._worker = None

    async def _write(self) -> None:
        while True:
            job = await self._queue.get()
            try:
                await job()
            except RedisError as exc:
                self._lost(exc)
            except Exception:
                log.exception("presence: a write failed")
            finally:
                self._queue.task_done()

    def _lost(self, exc: RedisError) -> None:
        """A write or read failed: the whole presence is written and read
        again once Redis answers (:data:`REPAIR_SECONDS`)."""
        if not self._failing:
            log.warning("presence: Redis is unreachable (%s); it is written again once it is back", exc)
            self._failing = True
        if self._repair is None and self._worker is not None:
            delay, self._repair_in = self._repair_in, min(REPAIR_SECONDS[1], self._repair_in * 2)
            self._repair = asyncio.get_running_loop().call_later(delay, self._try_repair)

    def _try_repair(self) -> None:
        self._repair = None
        self.reassert(self.rooms())

    def _do(self, job: Callable[[], Awaitable[Any]]) -> int:
        """Queue ``job``; returns its number (jobs run in that order)."""
        self._jobs += 1
        self._queue.put_nowait(job)
        return self._jobs

    def conn_id(self, conn: Connection) -> str:
        """This process's id for ``conn`` (given on first use)."""
        known = self._ids.get(conn)
        if known is None:
            known = self._ids[conn] = str(next(self._count))
        return known

    def _mine(self, conn: Connection) -> str:
        """``conn``'s value in a ``seats`` hash while it holds the seat."""
        return f"{self.proc} {self.conn_id(conn)}"

    def _field(self, conn: Connection) -> str:
        """``conn``'s field in a ``conns`` hash."""
        return f"{self.proc}:{self.conn_id(conn)}"

    # ---- app.rooms.Presence ---------------------------------------------------------------
    def attached(self, room: Room, conn: Connection) -> None:
        keys = [self._key("room", room.id, "conns"), self._key("proc", self.proc, "rooms"), self.channel]
        args = [self._field(conn), room.id, _watcher(room.watch_names.get(conn))]
        self._do(lambda: self._attach(keys=keys, args=args))

    def named(self, room: Room, conn: Connection, name: str | None) -> None:
        keys = [self._key("room", room.id, "conns"), self.channel]
        args = [self._field(conn), _watcher(name), room.id]
        self._do(lambda: self._named(keys=keys, args=args))

    def detached(self, room: Room, conn: Connection, seat: str | None) -> None:
        mine = self._mine(conn)
        field = self._field(conn)
        self._ids.pop(conn, None)
        self._seated_at.pop(conn, None)
        last = "1" if not room.connections else "0"
        keys = [self._key("room", room.id, "conns"), self._key("room", room.id, "seats"),
                self._key("proc", self.proc, "rooms"), self.channel, self._key("room", room.id, "meta")]
        args = [field, room.id, seat or "", mine, repr(time.time()), last]
        self._do(lambda: self._detach(keys=keys, args=args))

    def seated(self, room: Room, conn: Connection, seat: str) -> None:
        keys = [self._key("room", room.id, "seats"), self.channel]
        args = [seat, self._mine(conn), room.id]
        self._seated_at[conn] = self._do(lambda: self._seated(keys=keys, args=args))

    def unseated(self, room: Room, conn: Connection, seat: str) -> None:
        keys = [self._key("room", room.id, "seats"), self.channel]
        args = [seat, self._mine(conn), room.id]
        self._do(lambda: self._unseated(keys=keys, args=args))

    # ---- reading ----------------------------------------------------------------------------
    def refresh(self, room: Room) -> None:
        """Read ``room``'s presence again (after this process's queued
        writes) and apply it: see :meth:`apply`."""
        async def job() -> None:
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.hgetall(self._key("room", room.id, "seats"))
                pipe.hgetall(self._key("room", room.id, "conns"))
                seats, conns = await pipe.execute()
            self.apply(room, seats, conns, number)
        number = self._do(job)

    def apply(self, room: Room, seats: dict[str, str], conns: dict[str, str],
              read: int | None = None) -> None:
        """Make ``room`` agree with its presence hashes: ``remote_seats`` (held
        by a connection of another live process), ``remote_watchers``, the
        ``away_since`` and ``away_at`` of seats whose holder is away, and a connection here
        whose seat is now held by another connection is told ``replaced`` and
        becomes a spectator, unless it was seated after job ``read`` (the
        read) was queued. Sends fresh states if a seat view changed."""
        if room.closed:
            return
        now_mono, now_wall = time.monotonic(), time.time()
        before = (set(room.remote_seats), dict(room.away_since))
        remote: set[str] = set()
        counted_out = any(field.partition(":")[0] in self.dead for field in conns)
        for seat, value in seats.items():
            if seat not in room.seats:
                continue
            owner, _, rest = value.partition(" ")
            local = room.seat_conn.get(seat)
            if owner == "-":
                if local is None:
                    with contextlib.suppress(ValueError):
                        at = min(now_wall, float(rest))
                        room.mark_away(seat, now_mono - (now_wall - at), at)
                continue
            if local is not None and (value == self._mine(local) or read is None
                                      or self._seated_at.get(local, 0) > read):
                continue
            if owner == self.proc:
                continue  # an older connection of ours: this process knows better
            if owner in self.dead:
                counted_out = True
                if local is None and seat not in room.away_since:
                    room.mark_away(seat, now_mono, now_wall)
                continue
            if local is not None:
                self._replaced(room, seat, local)
            remote.add(seat)
            room.mark_back(seat)
        room.remote_seats = remote
        others = [(field, value) for field, value in conns.items()
                  if field.partition(":")[0] not in (self.proc, "", *self.dead)]
        room.remote_watchers = len(others)
        holding = set(seats.values())
        spectators = tuple(value[2:] if value.startswith("n ") else None for field, value in others
                           if field.replace(":", " ", 1) not in holding)
        if spectators != room.remote_spectators:
            room.remote_spectators = spectators
            room.spectators_changed()
        if counted_out:
            self._counted_out[room.id] = room
        else:
            self._counted_out.pop(room.id, None)
        if (room.remote_seats, room.away_since) != before:
            room.broadcast()
        self.poke(room)

    def _replaced(self, room: Room, seat: str, conn: Connection) -> None:
        del room.seat_conn[seat]
        conn.seat = None
        conn.push(error_text("replaced", f"seat {seat} was taken back by another connection; you are"
                             " now watching as a spectator"))
        room.send_state(conn)

    # ---- processes --------------------------------------------------------------------------
    def lapsed(self, dead: set[str]) -> None:
        """The processes whose heartbeat has lapsed are now ``dead``. If one
        that was dead is not any more (it was taken for dead, and wrote its
        presence again: perhaps while this process still counted it out, and
        then nothing would read the room again), every room that left some
        of its seats or connections out is read again."""
        revived = bool(self.dead - dead)
        self.dead = dead
        if revived:
            rooms, self._counted_out = self._counted_out, {}
            for room in rooms.values():
                if not room.closed:
                    self.refresh(room)

    async def bury(self, dead: str, cutoff: int) -> int | None:
        """Remove the process ``dead`` from the heartbeats, mark its seats
        away and drop its connections in every room where it had some, if
        its last heartbeat is still older than ``cutoff`` (ms). Returns how
        many rooms, or ``None`` if it was not buried (by this process)."""
        keys = [self._key("proc", dead, "rooms"), self.channel, self._key("procs")]
        rooms = await self._bury(keys=keys, args=[self.prefix, dead, repr(time.time()), cutoff])
        return None if rooms is None else int(rooms)

    def reassert(self, rooms: list[Room]) -> None:
        """Write this process's presence again as it is (after Redis lost
        writes, or after this process was taken for dead): in each of
        ``rooms`` and each room Redis lists for this process, its open
        connections and the seats they hold, and nothing else of it (what
        closed meanwhile is taken out); then read every room's presence
        again. If that fails too, it is tried again later."""
        loaded = {room.id: room for room in rooms if not room.closed}

        async def job() -> None:
            listed = await self.client.smembers(self._key("proc", self.proc, "rooms"))
            now = repr(time.time())
            for room_id in sorted(set(loaded) | {str(r) for r in listed}):
                room = loaded.get(room_id)
                opened: list[tuple[str, str]] = []
                seated: list[tuple[str, Connection]] = []
                if room is not None:  # (else: none of it is open here any more)
                    opened = [(self._field(c), _watcher(room.watch_names.get(c))) for c in room.connections]
                    seated = list(room.seat_conn.items())
                held = [(seat, self._mine(c)) for seat, c in seated]
                keys = [self._key("room", room_id, "conns"), self._key("room", room_id, "seats"),
                        self._key("proc", self.proc, "rooms"), self.channel,
                        self._key("room", room_id, "meta")]
                args = [self.proc, room_id, now, str(len(opened)),
                        *(x for pair in opened for x in pair), *(x for pair in held for x in pair)]
                await self._assert(keys=keys, args=args)
                for _, conn in seated:
                    self._seated_at[conn] = number
            if self._failing:
                log.warning("presence: Redis answers again; this process's presence is written again")
            self._failing = False
            self._repair_in = REPAIR_SECONDS[0]
            for room in loaded.values():
                self.refresh(room)
        number = self._do(job)


def _watcher(name: str | None) -> str:
    """A connection's value in the ``conns`` hash: ``"n {name}"`` for one
    that watches under ``name``, else ``"1"``."""
    return "1" if name is None else f"n {name}"
