"""Who hears a commit, and what server processes share: the bus.

With one server process (SQLite or memory storage) there is nothing to share:
:class:`LocalBus` does nothing, computer players need no lease and the room
creation limit is the lobby's own. With Redis (``CARDBOARD_REDIS_URL``)
several processes serve the same rooms, and :class:`RedisBus` connects them
(``docs/scaling.md``):

* **Commits.** The storage's append script publishes ``"c {room} {version}"``
  on the channel ``{prefix}bus`` as it stores the version
  (:mod:`app.storage.redis`). Every process that has the room loaded reads
  the entries it has not applied yet from Redis, in version order, and
  sends each of its own connections its own view of each version
  (:meth:`app.rooms.Room.sync`). A gap (a lost message) is healed by the
  same read: it always starts at the room's own version. Only ids and
  versions are published: the entries stay on the server side.
* **Notes.** ``"n {room}"``: a chat message or the spectators' mute was
  stored somewhere. Every process that has the room loaded reads its notes
  again and sends its own connections what is new to them
  (:meth:`app.rooms.Room.take_notes`), so the chat and the mute are the same
  whichever process a socket reaches.
* **Presence.** ``"p {room}"``: a connection opened or closed, or a seat was
  taken, somewhere; see :mod:`app.presence`.
* **Heartbeats.** Every process writes its heartbeat each second; a process
  silent for 5 s is dead, and its connections are dropped from the presence
  (judged by a process that has beaten steadily for those 5 s itself).
* **Leases.** A computer player's turn (or a "next deal" between computer
  players) is claimed with ``SET lease:{room}:{purpose}:{version} NX PX``
  (:data:`LEASE_MS`), renewed while the computer thinks: exactly one process
  thinks about it; if that process dies the lease expires and another takes
  the turn over (:meth:`RedisBus.hold`).
* **Room creation per address** is one token bucket per address in Redis, so
  the limit holds whichever process a client reaches.

If Redis cannot be reached, the bus reconnects with backoff and then catches
every loaded room up and writes its presence again.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from redis.exceptions import RedisError

from app.bots import Lease, LocalLeases
from app.logs import get_logger
from app.presence import DEAD_MS, HEARTBEAT_MS, RedisPresence
from app.storage.base import Storage, StorageError

if TYPE_CHECKING:
    from app.lobby import Lobby
    from app.rooms import Presence, Room
    from app.settings import Settings
    from app.storage.redis import RedisStorage

log = get_logger(__name__)

STALL_MS = DEAD_MS - HEARTBEAT_MS
"""Two heartbeats of this process further apart than this (Redis time) mean
a stall long enough that a live process's heartbeat may look lapsed: see
:meth:`RedisBus._beat_once`. Shorter hiccups do not count (verification
pass: with 2 s as the limit, Redis pausing 1.5 s every 4 s kept a dead
process from ever being found)."""

LEASE_MS = 5000
"""How long a computer player's claim on a turn lasts unless renewed."""

CHECK_TRIES = 60
CHECK_RETRY_SECONDS = 0.5
"""A room's check against Redis after the subscription came back is tried
again so often, this far apart, while Redis answers with errors (loading
its files after a restart)."""

CATCH_UP_RETRY_SECONDS = (0.5, 30.0)
"""A catch-up that failed (Redis stalled or away) is tried again after the
first delay, doubled at each failure up to the second, until it succeeds or
the room is freed: a commit heard but not read would otherwise leave this
process a version behind until the room's next commit, which may never come
if the player to move sees the table through this process (break-it pass)."""

RENEW_SECONDS = LEASE_MS / 3000
"""How often a claim is renewed while the computer thinks."""

RETRY_SECONDS = LEASE_MS / 2000
"""How often a process that did not get a claim looks again (to take the
turn over if the claim's process died)."""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""

_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local burst, rate, give = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3] == 'give'
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens, at = tonumber(b[1]) or burst, tonumber(b[2]) or now
tokens = math.min(burst, tokens + (now - at) * rate)
local wait = 0
if give then tokens = math.min(burst, tokens + 1)
elseif tokens < 1 then wait = (1 - tokens) / rate else tokens = tokens - 1 end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate) + 1000)
return tostring(wait)
"""
"""A token bucket: KEYS: the address's bucket; ARGV: burst, tokens per ms,
and ``take`` or ``give`` (one back). Returns the ms to wait (0: a room may
be created; always 0 for ``give``), on Redis's own clock."""


class Bus(Protocol):
    """What :class:`app.lobby.Lobby` needs from the bus (see the module
    docstring). ``presence`` is given to every room (``None``: one process)."""

    presence: Presence | None
    retry_seconds: float

    async def open(self, lobby: Lobby) -> None:
        """Start (after the storage has opened)."""
        ...

    async def close(self) -> None:
        """Stop (before the storage closes)."""
        ...

    async def loaded(self, room: Room) -> None:
        """``room`` has just been loaded in this process: catch it up and read
        its presence."""
        ...

    async def creation_wait(self, address: str) -> float | None:
        """Take one room creation for ``address`` from the shared limit: 0 if
        allowed, else seconds to wait; ``None`` if the limit is not shared
        (the lobby's own applies). Raises ``StorageError``."""
        ...

    async def creation_refund(self, address: str) -> bool:
        """Give back the room creation taken for ``address`` by
        :meth:`creation_wait` when no room was made after all; False if the
        limit is not shared (the lobby's own applies). Raises
        ``StorageError``."""
        ...

    def hold(self, room_id: str, purpose: str,
             version: int) -> contextlib.AbstractAsyncContextManager[Lease]:
        """Claim computer-player work (``purpose`` in ``room_id`` at
        ``version``) for as long as the context lasts: see :class:`app.bots.Lease`."""
        ...


class LocalBus(LocalLeases):
    """The bus of a single server process: nothing to tell anyone."""

    presence: Presence | None = None

    async def open(self, lobby: Lobby) -> None:
        return None

    async def close(self) -> None:
        return None

    async def loaded(self, room: Room) -> None:
        return None

    async def creation_wait(self, address: str) -> float | None:
        return None

    async def creation_refund(self, address: str) -> bool:
        return False


def make_bus(settings: Settings, storage: Storage) -> Bus:
    """A :class:`RedisBus` over a Redis storage, else a :class:`LocalBus`."""
    from app.storage.redis import RedisStorage

    if isinstance(storage, RedisStorage):
        return RedisBus(storage, settings)
    return LocalBus()


class RedisBus:
    """The bus between the server processes that share ``storage``'s Redis."""

    retry_seconds = RETRY_SECONDS

    def __init__(self, storage: RedisStorage, settings: Settings) -> None:
        self.storage = storage
        self.settings = settings
        self.client = storage.client
        self.prefix = storage.prefix
        self.channel = storage.channel
        self.proc = secrets.token_hex(6)
        """This process's id in Redis (fresh at every start)."""
        self.redis_presence = RedisPresence(self.client, self.prefix, self.channel, self.proc)
        self.presence: Presence | None = self.redis_presence
        self.lobby: Lobby | None = None
        self.up = False
        """True while the bus is subscribed."""
        self.closing = False
        """True once :meth:`close` began: nothing new is started (a shutdown
        drops the subscription, which redis-py would otherwise report as a
        connection restored, starting a catch-up of every room on a client
        being closed)."""
        self._beat_at = 0  # Redis time (ms) of this process's last heartbeat
        self._steady_since = 0  # ... and of the first of those since a stall
        self._tasks: list[asyncio.Task[None]] = []
        self._background: set[asyncio.Task[None]] = set()  # catch-ups and note reads
        self._syncing: dict[str, int | None] = {}
        self._checking: set[str] = set()  # rooms whose next catch-up also checks the storage
        self._noting: dict[str, bool] = {}  # rooms whose notes are being read: read again after?
        self._release = self.client.register_script(_RELEASE)
        self._renew = self.client.register_script(_RENEW)
        self._take = self.client.register_script(_TAKE)

    def _key(self, *parts: str) -> str:
        return self.prefix + ":".join(parts)

    # ---- start and stop -------------------------------------------------------------------
    async def open(self, lobby: Lobby) -> None:
        self.lobby = lobby
        self.redis_presence.poke = lobby.bots.poke
        self.redis_presence.rooms = self._rooms
        self.redis_presence.start()
        await self._beat_once(first=True)
        loop = asyncio.get_running_loop()
        subscribed = loop.create_future()
        self._tasks = [loop.create_task(self._listen(subscribed), name="bus listener"),
                       loop.create_task(self._beat(), name="bus heartbeat")]
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(subscribed), 5.0)

    async def close(self) -> None:
        self.closing = True
        tasks = [*self._tasks, *self._background]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks = []
        await self.redis_presence.stop()
        # Out of the heartbeats, with whatever presence of this process is
        # still written (a closing written while Redis could not take it would
        # be counted for ever: no one buries a process that is not listed).
        with contextlib.suppress(RedisError):
            await self.redis_presence.bury(self.proc, 2**53)

    # ---- commits and presence -------------------------------------------------------------
    async def _listen(self, subscribed: asyncio.Future[None]) -> None:
        delay, again = 0.1, False
        while True:
            pubsub = self.client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self.channel)
                # redis-py connects the subscription again by itself when a
                # read fails (Redis restarted): hear of it, to catch up.
                if pubsub.connection is not None:
                    pubsub.connection.register_connect_callback(self._reconnected)
                self.up = True
                if not subscribed.done():
                    subscribed.set_result(None)
                if again:
                    log.warning("bus: subscribed again; catching every room up")
                    self._resync()
                delay = 0.1
                while True:
                    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                    if message is not None and message.get("type") == "message":
                        self._on(str(message["data"]))
            except (RedisError, OSError) as exc:
                if self.up or not again:
                    log.warning("bus: Redis is unreachable (%s); retrying", exc)
                self.up, again = False, True
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
            await asyncio.sleep(delay)
            delay = min(2.0, delay * 2)

    async def _reconnected(self, _connection: object) -> None:
        """The subscription was connected again by redis-py itself (after it
        re-subscribed): commits may have gone unheard, and Redis may have
        lost writes, so every room catches up as after a lost subscription."""
        if self.closing:
            return
        log.warning("bus: Redis connection restored; catching every room up")
        self._resync()

    def _on(self, data: str) -> None:
        kind, _, rest = data.partition(" ")
        room_id, _, version = rest.partition(" ")
        room = self._room(room_id)
        if room is None:
            return
        if kind == "c":
            with contextlib.suppress(ValueError):
                self.sync(room, int(version))
        elif kind == "p":
            self.redis_presence.refresh(room)
        elif kind == "n":
            self.read_notes(room)

    def read_notes(self, room: Room) -> None:
        """Read ``room``'s notes (chat, the spectators' mute) from Redis in the
        background and bring the room up to them (:meth:`app.rooms.Room.take_notes`),
        one read per room at a time: a note told during a read is read after it."""
        if self.closing:
            return
        if room.id in self._noting:
            self._noting[room.id] = True
            return
        self._noting[room.id] = False
        self._spawn(self._read_notes(room), f"room {room.id}: notes")

    async def _read_notes(self, room: Room) -> None:
        try:
            while True:
                try:
                    notes = await self.storage.notes(room.id)
                except StorageError as exc:
                    log.warning("room %s: cannot read its notes (%s); read on the next one", room.id, exc)
                    return
                if not room.closed:
                    room.take_notes(notes)
                if not self._noting.get(room.id):
                    return
                self._noting[room.id] = False
        finally:
            self._noting.pop(room.id, None)

    def _room(self, room_id: str) -> Room | None:
        if self.lobby is None:
            return None
        room = self.lobby.store.get(room_id)
        return None if room is None or room.closed else room

    def sync(self, room: Room, version: int | None, check: bool = False) -> None:
        """Catch ``room`` up to ``version`` (``None``: whatever is stored) in
        the background, one catch-up per room at a time; with ``check``, also
        notice a storage that has gone back (:meth:`app.rooms.Room.sync`)."""
        if self.closing:
            return
        if check:
            self._checking.add(room.id)
        elif version is not None and version <= room.version:
            return
        if room.id in self._syncing:
            wanted = self._syncing[room.id]
            self._syncing[room.id] = None if version is None or wanted is None else max(wanted, version)
            return
        self._syncing[room.id] = version
        self._spawn(self._sync(room), f"room {room.id}: catch up")

    def _spawn(self, work: Coroutine[Any, Any, None], name: str) -> None:
        """Run ``work`` in the background until it ends or :meth:`close`
        cancels it."""
        task = asyncio.get_running_loop().create_task(work, name=name)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _sync(self, room: Room) -> None:
        failed_checks = 0
        delay, told = CATCH_UP_RETRY_SECONDS[0], False
        try:
            while room.id in self._syncing:
                version = self._syncing[room.id]
                check = room.id in self._checking
                self._checking.discard(room.id)
                try:
                    await room.sync(version, check=check)
                except StorageError as exc:
                    if check and failed_checks < CHECK_TRIES:
                        # Redis answers, but may still be loading its files.
                        failed_checks += 1
                        self._checking.add(room.id)
                        await asyncio.sleep(CHECK_RETRY_SECONDS)
                        continue
                    if room.closed or self.closing:
                        return
                    if not told:
                        log.warning("room %s: cannot catch up (%s); trying again", room.id, exc)
                        told = True
                    if check:
                        self._checking.add(room.id)
                    await asyncio.sleep(delay)
                    delay = min(CATCH_UP_RETRY_SECONDS[1], delay * 2)
                    continue
                if told:
                    log.warning("room %s: caught up", room.id)
                    delay, told = CATCH_UP_RETRY_SECONDS[0], False
                if self._syncing.get(room.id) == version and room.id not in self._checking:
                    break
        finally:
            self._syncing.pop(room.id, None)

    def _resync(self) -> None:
        """After a lost subscription: catch every loaded room up, write this
        process's presence again and read everyone's. Redis may have
        restarted and lost its last writes (or everything): a room the
        storage holds fewer versions of is rebuilt from it, as the other
        processes' rooms are, and one it no longer holds is closed, so that
        no two processes go on serving different tables of one room."""
        if self.closing:
            return
        rooms = self._rooms()
        for room in rooms:
            self.sync(room, None, check=True)
            self.read_notes(room)
        self.redis_presence.reassert(rooms)

    def _ids(self) -> list[str]:
        return self.lobby.store.ids() if self.lobby is not None else []

    def _rooms(self) -> list[Room]:
        """The rooms this process has loaded."""
        return [r for r in (self._room(i) for i in self._ids()) if r is not None]

    async def loaded(self, room: Room) -> None:
        try:
            await room.sync(None)
        except StorageError as exc:
            log.warning("room %s: cannot catch up after loading (%s)", room.id, exc)
        self.redis_presence.refresh(room)

    # ---- heartbeats -----------------------------------------------------------------------
    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_MS / 1000)
            try:
                await self._beat_once()
            except RedisError as exc:
                log.debug("heartbeat: %s", exc)

    async def _beat_once(self, first: bool = False) -> None:
        """Say this process is alive; note who else is; bury the dead."""
        procs = self._key("procs")
        now = int(await self._now_ms())
        added = await self.client.zadd(procs, {self.proc: now})
        if added and not first:
            log.warning("bus: this process was taken for dead; writing its presence again")
            self._resync()
        # After a stall (Redis's, or this process's own), the others' heartbeats
        # are old because they could not write them either: judge nobody until
        # this process has beaten steadily for DEAD_MS, time enough for every
        # live one to beat again (break-it pass: a 25 s Redis stall made one
        # live process bury the other, whose player showed away for a moment).
        if now - self._beat_at > STALL_MS:
            self._steady_since = now
        self._beat_at = now
        if now - self._steady_since < DEAD_MS:
            return
        lapsed = {str(p) for p in await self.client.zrangebyscore(procs, "-inf", f"({now - DEAD_MS}")}
        self.redis_presence.lapsed(lapsed)
        for dead in lapsed:
            rooms = await self.redis_presence.bury(dead, now - DEAD_MS)
            if rooms is not None:
                log.warning("bus: server process %s stopped answering; its connections to %d rooms"
                            " are dropped", dead, rooms)

    async def _now_ms(self) -> float:
        sec, usec = await self.client.time()
        return float(sec) * 1000 + float(usec) / 1000

    # ---- leases ---------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def hold(self, room_id: str, purpose: str, version: int) -> AsyncIterator[Lease]:
        key = self._key("lease", room_id, purpose.replace(" ", "_"), str(version))
        lease = Lease(held=False)
        try:
            lease.held = bool(await self.client.set(key, self.proc, nx=True, px=LEASE_MS))
        except RedisError as exc:
            log.info("room %s: cannot claim the %s (%s)", room_id, purpose, exc)
        if not lease.held:
            yield lease
            return
        renew = asyncio.get_running_loop().create_task(self._renewing(key))
        try:
            yield lease
        finally:
            renew.cancel()
            if not lease.kept:
                with contextlib.suppress(RedisError):
                    await self._release(keys=[key], args=[self.proc])

    async def _renewing(self, key: str) -> None:
        while True:
            await asyncio.sleep(RENEW_SECONDS)
            with contextlib.suppress(RedisError):
                if not await self._renew(keys=[key], args=[self.proc, LEASE_MS]):
                    log.warning("lease %s was lost (taken over after an expiry)", key)
                    return

    # ---- limits ---------------------------------------------------------------------------
    async def creation_wait(self, address: str) -> float | None:
        return float(await self._bucket(address, "take")) / 1000.0

    async def creation_refund(self, address: str) -> bool:
        await self._bucket(address, "give")
        return True

    async def _bucket(self, address: str, what: str) -> str:
        """Run the creation token bucket of ``address`` (``_TAKE``)."""
        rate = self.settings.room_create_per_hour / 3_600_000.0
        try:
            return str(await self._take(keys=[self._key("create", address)],
                                        args=[self.settings.room_create_burst, repr(rate), what]))
        except RedisError as exc:
            raise StorageError(f"redis: {exc}") from None
