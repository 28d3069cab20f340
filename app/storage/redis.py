"""Rooms kept in Redis (``CARDBOARD_REDIS_URL``), shared by several server
processes (``docs/scaling.md``).

Keys, under a prefix (``CARDBOARD_REDIS_PREFIX``, ``cb:`` by default):

=============================  ================================================
``room:{id}:meta``             hash: the :class:`RoomMeta` fields
``room:{id}:log``              list: the record, entry *k* being version *k*,
                               each ``"{version} {at} {action JSON}"``
``rooms:open``                 set: ids of the rooms open for play
``rooms:active``               sorted set: open rooms by last use (Unix s)
``rooms:finished``             sorted set: closed rooms kept as history, by
                               the end of their last match
``room:{id}:notes``            set: the kinds of note the room has
``room:{id}:notes:{kind}``     list: its last :data:`NOTES_KEPT` notes of that
                               kind (chat, the spectators' mute), each
                               ``"{at} {data JSON}"``
``room:{id}:fence``            set: SHA-1s of entries given up on (below);
                               expires a day after the last one
=============================  ================================================

An append is one Lua script, so it is atomic: it adds the entry only if its
version is the next one (the list's length), else the write fails with
:class:`StorageConflict` (another process applied that version first). The
same script updates the meta and **publishes** ``"c {room} {version}"`` on
the bus channel (``{prefix}bus``, :mod:`app.bus`): a commit is stored and
announced in one step, so no process can die between the two. Only ids and
versions are published; the entries (seeds, hidden cards) stay in Redis.

An append (or a creation) whose answer never came (a time-out: Redis was slow or paused)
may still be carried out later, when Redis reads the command it had been
sent. The outcome is settled before anyone is told: a second script either
finds the entry in the record (it was saved: the action goes on as applied)
or puts the entry's SHA-1 in the room's fence set, which makes every copy of
that append still on its way a no-op (it was not saved, and never will be:
``unavailable`` then tells the truth). If even that cannot reach Redis
within :data:`SETTLE_SECONDS`, the outcome is unknown
(:class:`app.storage.base.StorageUnknown`).

Durability is Redis's: with ``appendonly yes`` and ``appendfsync everysec``
a crash of Redis itself can lose the last second of writes (a clean restart
loses nothing). Every Redis failure (refused connection, time-out, a Redis
still loading its file) raises :class:`StorageError`, which the room turns
into ``unavailable``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from app.logs import get_logger
from app.storage.base import (
    NOTES_KEPT,
    Entry,
    MatchRef,
    Note,
    Pending,
    RoomMeta,
    StorageConflict,
    StorageDamaged,
    StorageError,
    StorageUnknown,
    StoredRoom,
    match_index,
)

log = get_logger(__name__)

SOCKET_SECONDS = 2.0
"""A Redis command that has not answered in this long fails (``unavailable``)."""

SETTLE_SECONDS = 20.0
"""How long an append whose answer timed out keeps trying to learn its
outcome (see the module's docstring) before it is reported unknown."""

FENCE_SECONDS = 86400
"""How long a room's fence set is kept after its last entry."""

CONNECTIONS = 64
"""Connections to Redis one process opens at most; a command waits (up to
:data:`SOCKET_SECONDS`) for a free one rather than failing."""

_INDEX = """
local function index(match_key, matches_key, room, match)
  if match == '' then return end
  local n = redis.call('RPUSH', match_key, match)
  redis.call('HSET', matches_key, match, room .. ' ' .. (n - 1))
end
local function unindex(match_key, matches_key)
  for _, m in ipairs(redis.call('LRANGE', match_key, 0, -1)) do redis.call('HDEL', matches_key, m) end
  redis.call('DEL', match_key)
end
local function drop_notes(kinds_key)
  for _, kind in ipairs(redis.call('SMEMBERS', kinds_key)) do redis.call('DEL', kinds_key .. ':' .. kind) end
  redis.call('DEL', kinds_key)
end
"""
"""Lua helpers: a room's match ids in order (its ``matches`` list) and the
global ``matches`` hash, match id → "room number"; a room's notes (the set
of their kinds, each kind's list under the set's key and ``:{kind}``)."""

_NOTE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('RPUSH', KEYS[3], ARGV[2])
redis.call('LTRIM', KEYS[3], -tonumber(ARGV[3]), -1)
redis.call('PUBLISH', KEYS[4], 'n ' .. ARGV[4])
return 1
"""
"""KEYS: meta, the room's note kinds, that kind's list, the bus channel;
ARGV: kind, ``"{at} {data JSON}"``, how many to keep, the room id. Publishes
``"n {room}"`` (:mod:`app.bus`). 0 if there is no such room."""

_CREATE = _INDEX + """
if redis.call('SISMEMBER', KEYS[7], redis.sha1hex(ARGV[2])) == 1 then return -3 end
if redis.call('EXISTS', KEYS[1]) == 1 then
  if redis.call('LINDEX', KEYS[2], 0) == ARGV[2] then return 1 end
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('SADD', KEYS[3], ARGV[1])
redis.call('ZADD', KEYS[4], redis.call('HGET', KEYS[1], 'updated'), ARGV[1])
index(KEYS[5], KEYS[6], ARGV[1], ARGV[3])
return 1
"""
"""KEYS: meta, log, open, active, the room's matches, the matches hash, the
room's fence; ARGV: id, entry, match id ('' for none), then the meta's
field/value pairs. 1 when made (or made already by this very entry: a
copy of the command sent again after a time-out), 0 if the room exists,
-3 for a creation given up on (fenced)."""

_APPEND = _INDEX + """
if redis.call('SISMEMBER', KEYS[7], redis.sha1hex(ARGV[3])) == 1 then return -3 end
if redis.call('HGET', KEYS[1], 'closed') ~= '0' then return -1 end
local n = redis.call('LLEN', KEYS[2])
if n ~= tonumber(ARGV[2]) then
  if n > tonumber(ARGV[2]) and redis.call('LINDEX', KEYS[2], ARGV[2]) == ARGV[3] then return -2 end
  return n
end
redis.call('RPUSH', KEYS[2], ARGV[3])
redis.call('HSET', KEYS[1], 'version', ARGV[2], 'updated', ARGV[4], 'phase', ARGV[5],
           'computer_only', ARGV[7])
if ARGV[6] ~= '' then redis.call('HSET', KEYS[1], 'finished', ARGV[6]) end
redis.call('ZADD', KEYS[3], 'GT', ARGV[4], ARGV[1])
index(KEYS[5], KEYS[6], ARGV[1], ARGV[8])
redis.call('PUBLISH', KEYS[4], 'c ' .. ARGV[1] .. ' ' .. ARGV[2])
return -2
"""
"""KEYS: meta, log, active, bus channel, the room's matches, the matches
hash, the room's fence; ARGV: id, version, entry, updated, phase, finished
('' for none), computer_only, match id ('' for none). Returns -2 when
appended, or when this very entry is at that version already (a copy sent
again after a time-out, by redis-py's retry or by another attempt: the
append is idempotent), -1 for a closed or missing room, -3 for an entry
given up on (fenced), else the record's length (a conflict)."""

_SETTLE = """
if redis.call('LINDEX', KEYS[1], ARGV[1]) == ARGV[2] then return 1 end
redis.call('SADD', KEYS[2], redis.sha1hex(ARGV[2]))
redis.call('EXPIRE', KEYS[2], ARGV[3])
return 0
"""
"""KEYS: the room's log, its fence; ARGV: version, entry, seconds to keep the
fence. 1 if the entry is in the record at that version (it was saved), else
0: its SHA-1 is fenced, so that the append, wherever it is, never lands."""

_TOUCH = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local seen = tonumber(redis.call('HGET', KEYS[1], 'seen'))
if tonumber(ARGV[2]) > seen then
  redis.call('HSET', KEYS[1], 'seen', ARGV[2])
  if redis.call('HGET', KEYS[1], 'closed') == '0' then
    redis.call('ZADD', KEYS[2], 'GT', ARGV[2], ARGV[1])
  end
end
if ARGV[3] == '1' then redis.call('HSET', KEYS[1], 'opened', '1') end
return 1
"""
"""KEYS: meta, active; ARGV: id, seen, opened."""

_CLOSE = _INDEX + """
local finished = redis.call('HGET', KEYS[1], 'finished')
if not finished then return 0 end
if redis.call('HLEN', KEYS[6]) > 0 then return 0 end
redis.call('SREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('DEL', KEYS[7])
if finished ~= '' and tonumber(finished) >= tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[1], 'closed', '1')
  redis.call('ZADD', KEYS[5], finished, ARGV[1])
  return 1
end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[5], ARGV[1])
unindex(KEYS[8], KEYS[9])
drop_notes(KEYS[10])
return 2
"""
"""KEYS: meta, log, open, active, finished, the room's connections and its
seats (the presence hashes of :mod:`app.presence`), the room's matches, the
matches hash and the room's note kinds; ARGV: id, keep a finished match
ended at or after this time. A room with connections open on any process is
left alone (0); returns 1 if kept as history, 2 if deleted."""


def _never_sent(exc: RedisError) -> bool:
    """True if ``exc`` says no connection could be had (refused, or none free
    in the pool), so the command was never sent. (After redis-py's one retry
    this is the retry's failure: a first attempt that timed out and was then
    carried out by a Redis that died before answering is not seen.)"""
    text = str(exc)
    return "connecting to" in text or "No connection available" in text


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    return repr(value) if isinstance(value, float) else str(value)


def _meta_fields(meta: RoomMeta) -> list[str]:
    out = []
    for name in RoomMeta.__slots__:
        out += [name, _text(getattr(meta, name))]
    return out


def _meta(fields: dict[str, str]) -> RoomMeta:
    finished = fields.get("finished", "")
    return RoomMeta(fields["id"], fields["game"], float(fields["created"]), float(fields["updated"]),
                    float(fields["seen"]), int(fields["version"]), fields["phase"],  # type: ignore[arg-type]
                    fields.get("opened") == "1", float(finished) if finished else None,
                    fields.get("closed") == "1", fields.get("computer_only") == "1")


def entry_text(entry: Entry) -> str:
    """How an entry is kept in a room's list: version, time and action JSON."""
    return f"{entry.version} {entry.at!r} {entry.text()}"


def parse_entry(text: str) -> Entry:
    """The entry :func:`entry_text` wrote. Raises ``StorageDamaged`` if
    ``text`` is not one."""
    try:
        version, at, action = text.split(" ", 2)
        return Entry.parse(int(version), float(at), action)
    except ValueError:
        raise StorageDamaged(f"a stored entry is damaged: {text[:40]!r}") from None


class RedisStorage:
    """:class:`app.storage.base.Storage` in the Redis at ``url``, its keys
    under ``prefix``. ``client`` is the redis-py asyncio client (shared with
    :mod:`app.bus`)."""

    name = "redis"

    def __init__(self, url: str, prefix: str = "cb:") -> None:
        self.url = url
        self.prefix = prefix
        self.channel = f"{prefix}bus"
        pool = aioredis.BlockingConnectionPool.from_url(
            url, max_connections=CONNECTIONS, timeout=SOCKET_SECONDS, decode_responses=True,
            socket_timeout=SOCKET_SECONDS, socket_connect_timeout=SOCKET_SECONDS,
            health_check_interval=15, retry=Retry(ExponentialBackoff(cap=0.2, base=0.05), 1),
            retry_on_error=[RedisConnectionError, RedisTimeoutError])
        self.client: aioredis.Redis = aioredis.Redis.from_pool(pool)
        self._create = self.client.register_script(_CREATE)
        self._append = self.client.register_script(_APPEND)
        self._touch = self.client.register_script(_TOUCH)
        self._close = self.client.register_script(_CLOSE)
        self._note = self.client.register_script(_NOTE)
        self._settle = self.client.register_script(_SETTLE)
        self._writes: set[asyncio.Future[None]] = set()

    def key(self, *parts: str) -> str:
        """The key of ``parts`` under the prefix: ``key("room", id, "log")``."""
        return self.prefix + ":".join(parts)

    def _room_keys(self, room_id: str) -> tuple[str, str]:
        return self.key("room", room_id, "meta"), self.key("room", room_id, "log")

    def _error(self, exc: RedisError) -> StorageError:
        return StorageError(f"redis at {self._where()}: {exc}")

    def _where(self) -> str:
        kwargs = self.client.connection_pool.connection_kwargs
        return f"{kwargs.get('host', '?')}:{kwargs.get('port', '?')}"

    # ---- start and stop -------------------------------------------------------------------
    async def open(self) -> None:
        try:
            await self.client.ping()
            info = await self.client.info("persistence")
        except RedisError as exc:
            why = str(exc).rstrip(".")
            raise StorageError(f"cannot reach Redis at {self._where()} (CARDBOARD_REDIS_URL): {why}."
                               " Start Redis, or unset CARDBOARD_REDIS_URL to keep rooms in SQLite"
                               ) from None
        if str(info.get("aof_enabled", "0")) != "1":
            log.warning("Redis at %s runs without appendonly: a Redis restart loses every room"
                        " (set appendonly yes, appendfsync everysec)", self._where())

    async def close(self) -> None:
        if self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)
        await self.client.aclose()

    def _spawn(self, work: Any) -> Pending:
        future: asyncio.Future[None] = asyncio.ensure_future(work)
        self._writes.add(future)
        future.add_done_callback(self._writes.discard)
        return future

    # ---- the interface --------------------------------------------------------------------
    def create(self, meta: RoomMeta, first: Entry) -> Pending:
        return self._spawn(self._do_create(meta, first))

    async def _do_create(self, meta: RoomMeta, first: Entry) -> None:
        meta_key, log_key = self._room_keys(meta.id)
        text = entry_text(first)
        made = await self._write(
            self._create, meta.id, first.version, text, 1,
            keys=[meta_key, log_key, self.key("rooms", "open"), self.key("rooms", "active"),
                  *self._match_keys(meta.id), self._fence_key(meta.id)],
            args=[meta.id, text, match_index(meta.id, first, 0) or "", *_meta_fields(meta)])
        if made == -3:
            raise StorageError(f"room {meta.id}: its creation was given up on")
        if not made:
            raise StorageConflict(f"room {meta.id} exists already")

    def append(self, meta: RoomMeta, entry: Entry) -> Pending:
        return self._spawn(self._do_append(meta, entry))

    async def _do_append(self, meta: RoomMeta, entry: Entry) -> None:
        meta_key, log_key = self._room_keys(meta.id)
        text = entry_text(entry)
        result = await self._write(
            self._append, meta.id, entry.version, text, -2,
            keys=[meta_key, log_key, self.key("rooms", "active"), self.channel,
                  *self._match_keys(meta.id), self._fence_key(meta.id)],
            args=[meta.id, entry.version, text, _text(meta.updated), meta.phase,
                  _text(meta.finished), _text(meta.computer_only),
                  await self._match_of(meta.id, entry)])
        if result == -1:
            raise StorageConflict(f"room {meta.id} is closed or gone")
        if result == -3:
            raise StorageError(f"room {meta.id}: version {entry.version} was given up on")
        if result != -2:
            raise StorageConflict(f"room {meta.id}: version {entry.version} does not follow the stored"
                                  f" record (at version {int(result) - 1})")

    def _fence_key(self, room_id: str) -> str:
        return self.key("room", room_id, "fence")

    async def _write(self, script: Any, room_id: str, version: int, text: str, saved: int,
                     keys: list[str], args: list[Any]) -> Any:
        """Run ``script`` (the creation or an append of the entry ``text`` at
        ``version``) and return its answer; ``saved`` (its answer on success)
        if the answer never came but the entry is in the record after all.
        Raises :class:`StorageError` otherwise (see :meth:`_settle_write`)."""
        began = asyncio.get_running_loop().time()
        try:
            return await script(keys=keys, args=args)
        except (RedisTimeoutError, RedisConnectionError) as exc:
            # Unless it never left (no connection), the script may have been
            # sent: learn whether it was carried out.
            if not _never_sent(exc) and await self._settle_write(room_id, version, text, exc, began):
                return saved
            raise self._error(exc) from None
        except RedisError as exc:
            raise self._error(exc) from None

    async def _settle_write(self, room_id: str, version: int, text: str, failure: RedisError,
                            began: float) -> bool:
        """The outcome of a write of the entry ``text`` at ``version`` (0 for
        the creation) whose answer did not come (``failure``), sent at loop
        time ``began``: ``True`` if it is in the record, ``False`` if it is
        not and now never will be (fenced). Tries until
        :data:`SETTLE_SECONDS` after ``began``; raises
        :class:`StorageUnknown` if Redis did not answer by then."""
        log_key = self._room_keys(room_id)[1]
        loop = asyncio.get_running_loop()
        deadline = began + SETTLE_SECONDS
        pause = 0.1
        while True:
            try:
                # Each try ends by the deadline, however long redis-py's own
                # time-outs, reconnections and retry would wait on a Redis
                # that has stopped answering.
                saved = await asyncio.wait_for(
                    self._settle(keys=[log_key, self._fence_key(room_id)],
                                 args=[version, text, FENCE_SECONDS]),
                    max(0.05, deadline - loop.time()))
            except (TimeoutError, RedisError) as exc:
                failure = exc if isinstance(exc, RedisError) else RedisTimeoutError(
                    f"no answer within {SETTLE_SECONDS:g} s")
                if loop.time() + pause > deadline:
                    raise StorageUnknown(
                        f"redis at {self._where()}: version {version} of room {room_id} may or may not"
                        f" have been saved: {failure}") from None
                await asyncio.sleep(pause)
                pause = min(pause * 2, 1.0)
                continue
            log.warning("room %s: version %s %s after redis did not answer (%s)", room_id, version,
                        "was saved" if saved else "was not saved, and is fenced off", failure)
            return bool(saved)

    def note(self, room_id: str, note: Note) -> Pending:
        return self._spawn(self._do_note(room_id, note))

    def _notes_key(self, room_id: str) -> str:
        return self.key("room", room_id, "notes")

    async def _do_note(self, room_id: str, note: Note) -> None:
        kinds = self._notes_key(room_id)
        try:
            added = await self._note(
                keys=[self._room_keys(room_id)[0], kinds, f"{kinds}:{note.kind}", self.channel],
                args=[note.kind, f"{_text(note.at)} {note.text()}", NOTES_KEPT, room_id])
        except RedisError as exc:
            raise self._error(exc) from None
        if not added:
            raise StorageError(f"room {room_id}: no such room to add a note to")

    async def load(self, room_id: str) -> StoredRoom | None:
        meta_key, log_key = self._room_keys(room_id)
        kinds_key = self._notes_key(room_id)
        try:
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.hgetall(meta_key)
                pipe.lrange(log_key, 0, -1)
                pipe.smembers(kinds_key)
                fields, texts, kinds = await pipe.execute()
            notes = await self._notes_of(kinds_key, kinds)
        except RedisError as exc:
            raise self._error(exc) from None
        if not fields:
            return None
        return StoredRoom(_meta(fields), tuple(parse_entry(t) for t in texts), notes)

    async def notes(self, room_id: str) -> tuple[Note, ...]:
        """The room's stored notes (the last kept of each kind), oldest first;
        none for a room Redis does not hold. Raises ``StorageError`` (Redis
        unreachable) and ``StorageDamaged``."""
        kinds_key = self._notes_key(room_id)
        try:
            return await self._notes_of(kinds_key, await self.client.smembers(kinds_key))
        except RedisError as exc:
            raise self._error(exc) from None

    async def _notes_of(self, kinds_key: str, members: Any) -> tuple[Note, ...]:
        """The notes of the kinds ``members`` (the set under ``kinds_key``),
        oldest first. Raises ``RedisError`` and ``StorageDamaged``."""
        kinds = sorted(str(k) for k in members)
        async with self.client.pipeline(transaction=False) as pipe:
            for kind in kinds:
                pipe.lrange(f"{kinds_key}:{kind}", 0, -1)
            lists = await pipe.execute() if kinds else []
        notes = []
        for kind, items in zip(kinds, lists, strict=True):
            for item in items:
                at, _, data = str(item).partition(" ")
                notes.append(Note.parse(kind, float(at), data))
        notes.sort(key=lambda n: n.at)
        return tuple(notes)

    def _match_keys(self, room_id: str) -> tuple[str, str]:
        """The room's list of match ids and the global match index."""
        return self.key("room", room_id, "matches"), self.key("matches")

    async def _match_of(self, room_id: str, entry: Entry) -> str:
        """The id of the match ``entry`` begins, or ``""``; only a rematch that
        carries no id (an older record) costs a look-up of the room's count."""
        if entry.action.get("t") != "rematch" or entry.action.get("match"):
            return match_index(room_id, entry, 0) or ""
        number = int(await self.client.llen(self._match_keys(room_id)[0]))
        return match_index(room_id, entry, number) or ""

    async def find_match(self, match_id: str) -> MatchRef | None:
        try:
            where = await self.client.hget(self.key("matches"), match_id)
        except RedisError as exc:
            raise self._error(exc) from None
        if where is None:
            return None
        room, number = str(where).rsplit(" ", 1)
        return MatchRef(room, int(number))

    async def since(self, room_id: str, version: int) -> list[Entry]:
        _, log_key = self._room_keys(room_id)
        try:
            texts = await self.client.lrange(log_key, version + 1, -1)
        except RedisError as exc:
            raise self._error(exc) from None
        return [parse_entry(str(t)) for t in texts]

    async def touch(self, room_id: str, seen: float, opened: bool) -> None:
        meta_key, _ = self._room_keys(room_id)
        try:
            await self._touch(keys=[meta_key, self.key("rooms", "active")],
                              args=[room_id, _text(seen), _text(opened)])
        except RedisError as exc:
            raise self._error(exc) from None

    async def close_room(self, room_id: str) -> None:
        await self._close_one(room_id, 0.0)

    async def _close_one(self, room_id: str, keep_after: float) -> int:
        meta_key, log_key = self._room_keys(room_id)
        try:
            return int(await self._close(
                keys=[meta_key, log_key, self.key("rooms", "open"), self.key("rooms", "active"),
                      self.key("rooms", "finished"), self.key("room", room_id, "conns"),
                      self.key("room", room_id, "seats"), *self._match_keys(room_id),
                      self._notes_key(room_id)],
                args=[room_id, _text(keep_after)]))
        except RedisError as exc:
            raise self._error(exc) from None

    async def rooms(self, closed: bool | None = False) -> list[RoomMeta]:
        try:
            ids: set[str] = set()
            if closed is not True:
                ids |= {str(i) for i in await self.client.smembers(self.key("rooms", "open"))}
            if closed is not False:
                ids |= {str(i) for i in await self.client.zrange(self.key("rooms", "finished"), 0, -1)}
            async with self.client.pipeline(transaction=False) as pipe:
                for room_id in ids:
                    pipe.hgetall(self._room_keys(room_id)[0])
                rows = await pipe.execute()
        except RedisError as exc:
            raise self._error(exc) from None
        return [_meta(r) for r in rows if r]

    async def count_open(self) -> int:
        try:
            return int(await self.client.scard(self.key("rooms", "open")))
        except RedisError as exc:
            raise self._error(exc) from None

    async def purge(self, idle_before: float, finished_before: float,
                    skip: frozenset[str] = frozenset()) -> list[str]:
        try:
            idle = [str(i) for i in await self.client.zrangebyscore(
                self.key("rooms", "active"), "-inf", idle_before)]
            old = [str(i) for i in await self.client.zrangebyscore(
                self.key("rooms", "finished"), "-inf", f"({finished_before!r}")]
        except RedisError as exc:
            raise self._error(exc) from None
        done = []
        for room_id in idle:
            if room_id not in skip and await self._close_one(room_id, finished_before):
                done.append(room_id)
        for room_id in old:
            meta_key, log_key = self._room_keys(room_id)
            room_matches, matches = self._match_keys(room_id)
            kinds_key = self._notes_key(room_id)
            try:
                ids = [str(m) for m in await self.client.lrange(room_matches, 0, -1)]
                kinds = [str(k) for k in await self.client.smembers(kinds_key)]
                async with self.client.pipeline(transaction=True) as pipe:
                    pipe.delete(meta_key, log_key, room_matches, kinds_key,
                                *(f"{kinds_key}:{k}" for k in kinds))
                    pipe.zrem(self.key("rooms", "finished"), room_id)
                    if ids:
                        pipe.hdel(matches, *ids)
                    await pipe.execute()
            except RedisError as exc:
                raise self._error(exc) from None
            done.append(room_id)
        return done
