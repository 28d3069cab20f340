"""Rooms kept in an SQLite file (the default, ``CARDBOARD_DATABASE``).

The standard library's :mod:`sqlite3` in WAL mode. Calls queue a job and
await its future; the jobs queued together run in one transaction (a *group
commit*), each under its own savepoint if one of them fails, so that it fails
alone. A write's future resolves only after its transaction is committed.

**Where the work runs.** With the default ``synchronous=NORMAL`` a commit
only writes the write-ahead log into the operating system's page cache: it
never waits for the disk. So the jobs an event loop queues during one turn
are committed **on the loop itself**, at the end of that turn, through the
loop's own connection: no thread to wake, no lock to hand over (on a
virtual machine a thread's wake-up costs more than the commit; see
``bench/storage.py``). Everything that waits for the disk runs in the
**sync thread**, which has a connection of its own: the checkpoints that
sync the log (below), the commits of ``synchronous=FULL`` (one sync each),
and the jobs of callers outside that loop.

**What a crash can lose.** With ``synchronous=NORMAL`` a commit is in the
write-ahead log, in the operating system's hands, when its future resolves,
so ``kill -9`` (or any end of the server process) loses no acknowledged
action. The sync thread puts the log on the disk at most
:data:`SYNC_SECONDS` after a commit (a checkpoint, which SQLite precedes by a
sync), so a power cut or a crash of the whole machine can lose the actions
acknowledged in the last second or so, never more, and never leaves a
damaged file: the server comes back at a slightly older state.
``synchronous="FULL"`` loses nothing even then, at the price of one sync per
commit: a few milliseconds on every move's round trip on ordinary disks
(``bench/storage.py``).

The schema has a version (``PRAGMA user_version``); :data:`MIGRATIONS` bring
an older file up to date at start, and a file newer than this code is refused.
Version 2 adds the index of matches (``matches``: match id → room and number),
filled for the rooms already kept from their ``create`` and ``rematch``
actions; version 3 the notes; version 4 indexes the open rooms by ``closed``
alone, which a move does not change.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import fcntl
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from app.logs import get_logger
from app.storage.base import (
    NOTES_KEPT,
    Entry,
    MatchRef,
    Note,
    Pending,
    RoomMeta,
    StorageConflict,
    StorageError,
    StoredRoom,
    match_index,
    resolve,
)

log = get_logger(__name__)

T = TypeVar("T")

def _index_stored_matches(conn: sqlite3.Connection) -> None:
    """Migration 2: index the matches of the rooms kept already (their
    actions carry no match id: :func:`app.table.fallback_match_id`)."""
    rows = conn.execute(
        "SELECT room, version, at, action FROM actions"
        " WHERE json_extract(action, '$.t') IN ('create', 'rematch') ORDER BY room, version")
    counts: dict[str, int] = {}
    for room_id, version, at, text in rows.fetchall():
        _index(conn, room_id, Entry.parse(version, at, text), counts.get(room_id, 0))
        counts[room_id] = counts.get(room_id, 0) + 1


def _index(conn: sqlite3.Connection, room_id: str, entry: Entry, number: int | None = None) -> None:
    """Index ``entry`` if it begins a match (``number``: the room's matches
    indexed already, counted if not given)."""
    if entry.action.get("t") not in ("create", "rematch"):
        return
    if number is None:
        number = int(conn.execute("SELECT count(*) FROM matches WHERE room = ?",
                                  (room_id,)).fetchone()[0])
    match_id = match_index(room_id, entry, number)
    if match_id is not None:
        conn.execute("INSERT OR REPLACE INTO matches (id, room, number) VALUES (?,?,?)",
                     (match_id, room_id, number))


Step = str | Callable[[sqlite3.Connection], None]
"""A migration step: an SQL statement, or a function run on the connection."""

MIGRATIONS: tuple[tuple[Step, ...], ...] = (
    # 1: rooms and their actions.
    (
        """CREATE TABLE rooms (
            id TEXT PRIMARY KEY,
            game TEXT NOT NULL,
            created REAL NOT NULL,
            updated REAL NOT NULL,
            seen REAL NOT NULL,
            version INTEGER NOT NULL,
            phase TEXT NOT NULL,
            opened INTEGER NOT NULL DEFAULT 0,
            finished REAL,
            closed INTEGER NOT NULL DEFAULT 0,
            computer_only INTEGER NOT NULL DEFAULT 0
        )""",
        "CREATE INDEX rooms_open ON rooms (closed, updated)",
        """CREATE TABLE actions (
            room TEXT NOT NULL,
            version INTEGER NOT NULL,
            at REAL NOT NULL,
            action TEXT NOT NULL,
            PRIMARY KEY (room, version)
        ) WITHOUT ROWID""",
    ),
    # 2: the index of matches.
    (
        """CREATE TABLE matches (
            id TEXT PRIMARY KEY,
            room TEXT NOT NULL,
            number INTEGER NOT NULL
        ) WITHOUT ROWID""",
        "CREATE INDEX matches_room ON matches (room)",
        _index_stored_matches,
    ),
    # 3: notes (chat and the like), which raise no version.
    (
        """CREATE TABLE room_notes (
            n INTEGER PRIMARY KEY AUTOINCREMENT,
            room TEXT NOT NULL,
            kind TEXT NOT NULL,
            at REAL NOT NULL,
            data TEXT NOT NULL
        )""",
        "CREATE INDEX room_notes_room ON room_notes (room, kind, n)",
    ),
    # 4: the open rooms indexed by ``closed`` alone. Indexed with ``updated``
    # too, every move moved the room's entry in the index: 4.2 pages written
    # per move, against 2.6 without (no query ordered by it).
    (
        "DROP INDEX rooms_open",
        "CREATE INDEX rooms_closed ON rooms (closed)",
    ),
)
"""The schema, one tuple of statements per version: ``MIGRATIONS[k]`` takes a
file from version ``k`` to ``k + 1``."""

SCHEMA_VERSION = len(MIGRATIONS)

BATCH = 512
"""Jobs run in one transaction at most."""

SYNC_SECONDS = 1.0
"""With ``synchronous=NORMAL``, the longest a commit waits before the log is
synced to the disk: what a power cut can lose."""

WAL_LIMIT = 64 * 1024 * 1024
"""Bytes of write-ahead log past which a checkpoint holds the loop's commits
for a moment to finish (see :meth:`SqliteStorage._sync`): under a steady
load of 500 rooms, once every dozen seconds (at 4 MB it was every second,
and the moves held then were one in a hundred)."""

_COLUMNS = "id, game, created, updated, seen, version, phase, opened, finished, closed, computer_only"


class _Job:
    __slots__ = ("fn", "future")

    def __init__(self, fn: Callable[[sqlite3.Connection], Any],
                 future: asyncio.Future[Any] | concurrent.futures.Future[Any]) -> None:
        self.fn = fn
        self.future = future


class _Redo(Exception):
    """A job of a transaction without savepoints failed: run them again, each
    under its own savepoint."""


_STOP = object()
_NOTHING: list[_Job] = []  # wakes the sync thread (a checkpoint is due)


TABLES = ("rooms", "actions", "matches", "room_notes")
"""The tables of the schema: a file whose schema version says it has them
all, but lacks one, is damaged."""


def _unusable(where: str, exc: sqlite3.Error, path: Path | None = None) -> StorageError:
    """The error for a file SQLite refuses, saying what to do about it
    (``path``: the file, to tell a directory the server may not write)."""
    text = str(exc)
    if path is not None and "unable to open" in text and (  # its log files cannot be made
            not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK))):
        text = "readonly"
    if "readonly" in text or "read-only" in text:
        return StorageError(f"{where} is read-only: make its file and directory writable by"
                            " the server")
    if "disk is full" in text or "disk I/O error" in text:
        return StorageError(f"{where} cannot be written: {exc}. Free some space on its disk, or"
                            " point CARDBOARD_DATABASE at another disk")
    return StorageError(f"{where} cannot be used: {exc}. If the file is damaged, restore a"
                        " backup, or point CARDBOARD_DATABASE at another file")


def _set_up(conn: sqlite3.Connection, where: str, steps: Callable[[sqlite3.Connection], None],
            path: Path | None = None) -> sqlite3.Connection:
    """``conn`` once ``steps`` ran on it; if they fail, ``conn`` is closed and
    :class:`StorageError` raised (``where``: the file, for its message)."""
    try:
        steps(conn)
    except StorageError:
        conn.close()
        raise
    except sqlite3.Error as exc:
        conn.close()
        raise _unusable(where, exc, path) from None
    return conn


def _meta(row: tuple[Any, ...]) -> RoomMeta:
    (room_id, game, created, updated, seen, version, phase, opened, finished, closed,
     computer_only) = row
    return RoomMeta(room_id, game, created, updated, seen, version, phase, bool(opened), finished,
                    bool(closed), bool(computer_only))


_CLAIMS: dict[str, list[int]] = {}
"""Lock files this process holds: path → [descriptor, stores using it]."""
_CLAIMS_LOCK = threading.Lock()


class SqliteStorage:
    """:class:`app.storage.base.Storage` in the SQLite file at ``path`` (its
    directory is made if missing), written with SQLite's ``synchronous``
    level: ``"NORMAL"`` (synced within :data:`SYNC_SECONDS`) or ``"FULL"``
    (synced at every commit); see the module docstring."""

    name = "sqlite"

    def __init__(self, path: str | os.PathLike[str], synchronous: str = "NORMAL") -> None:
        if synchronous.upper() not in ("NORMAL", "FULL"):
            raise ValueError(f"synchronous must be NORMAL or FULL, not {synchronous!r}")
        self.path = Path(path)
        self.synchronous = synchronous.upper()
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._outbox: list[_Job] = []
        self._flush_loop: asyncio.AbstractEventLoop | None = None
        self._conn: sqlite3.Connection | None = None  # the loop's (NORMAL only)
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop that owns it
        self._turn: list[_Job] = []  # its jobs of this turn, committed at the turn's end
        self._sync_asked = False
        self._held = False  # the loop's commits wait for a checkpoint to finish
        self.commits = 0
        """Transactions committed so far (each may hold many writes)."""
        self.holds = 0
        """Times the loop's commits were held for a checkpoint to finish."""
        self._lock: str | None = None  # the lock file held (see _claim)
        self._file: tuple[int, int] | None = None  # the file opened: (device, inode)
        self._file_lost = False  # _check_file has said so

    def _claim(self) -> None:
        """Hold ``<file>.lock`` (an exclusive ``flock``; ``<file>`` with
        symbolic links resolved) while open: a second
        server process on the same file (``--workers 2``, or two servers with
        one ``CARDBOARD_DATABASE``) would serve rooms the other has moved on,
        so it refuses to start. The lock goes with the process, however it
        ends; stores of one process share it. Raises :class:`StorageError` if
        another process holds it; a lock file that cannot be made (a
        read-only directory) is skipped, and opening the database says what
        is wrong."""
        if str(self.path) == ":memory:":
            return
        # Beside the file the path leads to: a second path to it (a symbolic
        # link, a link to its directory) finds the same lock.
        key = os.path.realpath(self.path) + ".lock"
        with _CLAIMS_LOCK:
            held = _CLAIMS.get(key)
            if held is not None:
                held[1] += 1
                self._lock = key
                return
            try:
                fd = os.open(key, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError:
                return
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise StorageError(
                    f"the database {str(self.path)!r} is in use by another server process: run one"
                    " process per SQLite file, or set CARDBOARD_REDIS_URL to run several") from None
            _CLAIMS[key] = [fd, 1]
            self._lock = key

    def _unclaim(self) -> None:
        key, self._lock = self._lock, None
        if key is None:
            return
        with _CLAIMS_LOCK:
            held = _CLAIMS[key]
            held[1] -= 1
            if held[1] == 0:
                del _CLAIMS[key]
                os.close(held[0])  # and the lock with it

    # ---- the sync thread and the loop's connection -----------------------------------------
    async def open(self) -> None:
        """Open the file (migrating it if need be) in the sync thread, then,
        with ``synchronous=NORMAL``, the loop's own connection. Raises
        :class:`StorageError` if the file cannot be used."""
        if self._thread is not None:
            return
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._run, args=(ready,), name="sqlite-sync",
                                        daemon=True)
        self._thread.start()
        try:
            await asyncio.wrap_future(ready)
            if self.synchronous == "NORMAL":
                self._conn = self._open_connection()
                # Checkpoints sync the disk: the sync thread makes them.
                self._conn.execute("PRAGMA wal_autocheckpoint = 0")
                # The log file shrinks back to this when it starts over.
                self._conn.execute(f"PRAGMA journal_size_limit = {WAL_LIMIT}")
                self._loop = asyncio.get_running_loop()
        except BaseException:
            self._queue.put(_STOP)
            self._thread.join()
            self._thread = None
            self._unclaim()
            raise

    def _open_connection(self) -> sqlite3.Connection:
        """A connection to the file in WAL mode at this store's ``synchronous``
        level. Raises :class:`StorageError` if that cannot be had."""
        where = f"the database {str(self.path)!r}"
        try:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open {where}: {exc}. Check that its directory exists and is"
                               " writable, or set CARDBOARD_DATABASE to another file") from None

        def wal(conn: sqlite3.Connection) -> None:
            conn.execute("PRAGMA busy_timeout = 5000")
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StorageError(f"{where} cannot use write-ahead logging (journal mode {mode})")
            conn.execute(f"PRAGMA synchronous = {self.synchronous}")
        return _set_up(conn, where, wal, self.path)

    def _connect(self) -> sqlite3.Connection:
        """The sync thread's connection: the file opened (its directory made),
        migrated to :data:`SCHEMA_VERSION`, checked and written once.
        Raises :class:`StorageError` with what to do if it cannot be used."""
        where = f"the database {str(self.path)!r}"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot make the directory of {where}: {exc.strerror}") from None
        self._claim()

        def migrate(conn: sqlite3.Connection) -> None:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StorageError(
                    f"{where} has schema version {version}, newer than this server knows"
                    f" ({SCHEMA_VERSION}): it was written by a newer Cardboard. Upgrade the server,"
                    " or point CARDBOARD_DATABASE at another file")
            for step in range(version, SCHEMA_VERSION):
                conn.execute("BEGIN IMMEDIATE")
                for statement in MIGRATIONS[step]:
                    if callable(statement):
                        statement(conn)
                    else:
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {step + 1}")
                conn.execute("COMMIT")
                log.info("%s: schema migrated to version %d", self.path, step + 1)
            conn.execute("SELECT count(*) FROM rooms").fetchone()
            have = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            missing = [t for t in TABLES if t not in have]
            if missing:
                raise StorageError(f"{where} is damaged (no table {', '.join(missing)}): restore a"
                                   " backup, or point CARDBOARD_DATABASE at another file")
            if conn.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                raise StorageError(f"{where} is damaged (PRAGMA quick_check failed): restore a"
                                   " backup, or point CARDBOARD_DATABASE at another file")
            # One harmless write, so that a file the server may read but not
            # write is refused now rather than at the first move.
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        conn = _set_up(self._open_connection(), where, migrate, self.path)
        self._file = _identity(self.path)
        return conn

    def _check_file(self) -> None:
        """Raise :class:`StorageError` if the file at :attr:`path` is no longer
        the one opened (removed, or replaced by another): SQLite would go on
        writing to the file it holds open, which nobody can find again, and
        every later commit would be lost with the next restart. Logged once;
        a file moved back in place is written again."""
        if self._file is None or _identity(self.path) == self._file:
            self._file_lost = False
            return
        message = (f"the database file {str(self.path)!r} was removed or replaced while the server"
                   " ran: nothing more is saved. Put the file back, or restart the server")
        if not self._file_lost:
            self._file_lost = True
            log.critical("%s", message)
        raise StorageError(message)

    def _run(self, ready: concurrent.futures.Future[None]) -> None:
        try:
            conn = self._connect()
        except BaseException as exc:
            ready.set_exception(exc)
            return
        # Counted before the loop may commit (after ``ready``), or its first
        # commits would count as synced.
        synced, commits = time.monotonic(), self.commits
        ready.set_result(None)
        stop = False
        lazy = self.synchronous != "FULL"
        while not stop:
            items: list[Any] = []
            try:
                if lazy and self.commits != commits:  # wait no longer than the sync is due
                    items.append(self._queue.get(timeout=max(0.0, synced + SYNC_SECONDS - time.monotonic())))
                else:
                    items.append(self._queue.get())
            except queue.Empty:
                pass
            while items and len(items) < BATCH:
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            jobs: list[_Job] = []
            for item in items:
                if item is _STOP:
                    stop = True
                elif isinstance(item, list):
                    jobs.extend(item)
                else:
                    jobs.append(item)
            if jobs:
                self._batch(conn, jobs)
            if lazy and self.commits != commits and time.monotonic() - synced >= SYNC_SECONDS:
                # What is committed before this point is in the checkpoint;
                # a later commit asks again (or is seen at the next turn).
                self._sync_asked = False
                done = self.commits
                self._sync(conn)
                synced, commits = time.monotonic(), done
        conn.close()  # the last connection closing checkpoints and syncs

    def _sync(self, conn: sqlite3.Connection) -> None:
        """Put every commit so far on the disk: a checkpoint, which SQLite
        begins by syncing the write-ahead log.

        The loop goes on committing meanwhile, so the checkpoint does not
        reach the commits made during it, and the log can start over (at the
        loop's next commit) only once a checkpoint has reached its end. So
        when the log is over :data:`WAL_LIMIT`, the loop's commits are held
        (queued, not refused) while a second checkpoint copies what the first
        left: a pause of one short checkpoint (a few milliseconds), once the
        log has grown past :data:`WAL_LIMIT`. The file is cut back to that
        size, not less: it is written over from its start again, and a
        commit on the loop never has to free (truncate) or grow (allocate)
        tens of megabytes of file, which took 40-75 ms."""
        try:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            loop = self._loop  # None once the store is closing
            if loop is None or not self._wal_over_limit():
                return
            held: concurrent.futures.Future[None] = concurrent.futures.Future()
            try:
                loop.call_soon_threadsafe(self._hold, held)
                held.result(timeout=SYNC_SECONDS)
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            finally:
                with contextlib.suppress(RuntimeError):  # the loop has closed
                    loop.call_soon_threadsafe(self._release)
        except (sqlite3.Error, concurrent.futures.TimeoutError, RuntimeError) as exc:
            log.warning("%s: the write-ahead log could not be synced: %s", self.path, exc)

    def _wal_over_limit(self) -> bool:
        try:
            return os.path.getsize(f"{self.path}-wal") > WAL_LIMIT
        except OSError:
            return False

    def _hold(self, held: concurrent.futures.Future[None]) -> None:
        """In the loop, between two turns' commits: hold the next ones."""
        self._held = True
        self.holds += 1
        held.set_result(None)

    def _release(self) -> None:
        """In the loop: commit what waited during :meth:`_hold`."""
        self._held = False
        if self._turn:
            self._commit_turn()

    def _batch(self, conn: sqlite3.Connection, jobs: list[_Job], here: bool = False) -> None:
        """Run ``jobs`` in one transaction and resolve their futures once it
        is committed. The jobs run straight, one after the other; if one
        fails, the transaction is rolled back and they run again, each under
        its own savepoint, so that it fails alone. Never raises: the thread
        must live on, or every later write would wait forever."""
        try:
            self._check_file()  # once a batch, not again for its rerun with savepoints
            try:
                outcomes = self._transaction(conn, jobs, savepoints=False)
            except _Redo:
                outcomes = self._transaction(conn, jobs, savepoints=True)
        except Exception as exc:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            # _check_file's error names the file already.
            failure = exc if isinstance(exc, StorageError) else StorageError(f"{self.path}: {exc}")
            outcomes = [(None, failure)] * len(jobs)
        self._resolve(jobs, outcomes, here)

    def _transaction(self, conn: sqlite3.Connection, jobs: list[_Job],
                     savepoints: bool) -> list[tuple[Any, BaseException | None]]:
        """Run ``jobs`` in one committed transaction: the result or the error
        of each. Without ``savepoints`` a failing job rolls everything back
        and raises :class:`_Redo`."""
        outcomes: list[tuple[Any, BaseException | None]] = []
        conn.execute("BEGIN IMMEDIATE")
        for job in jobs:
            if savepoints:
                conn.execute("SAVEPOINT job")
            try:
                result = job.fn(conn)
            except Exception as exc:
                if not conn.in_transaction:
                    # SQLite rolled the whole transaction back itself (a full
                    # disk, an I/O error): every job of it fails, with this
                    # message rather than "no such savepoint".
                    raise
                if not savepoints:
                    conn.execute("ROLLBACK")
                    raise _Redo from None
                conn.execute("ROLLBACK TO job")
                conn.execute("RELEASE job")
                outcomes.append((None, _storage_error(self.path, exc)))
            else:
                if savepoints:
                    conn.execute("RELEASE job")
                outcomes.append((result, None))
        conn.execute("COMMIT")
        self.commits += 1
        return outcomes

    @staticmethod
    def _resolve(jobs: list[_Job], outcomes: list[tuple[Any, BaseException | None]],
                 here: bool = False) -> None:
        """Hand each job its outcome; the futures of an event loop all in one
        call (one wake-up of the loop per transaction, not one per job), or
        at once if ``here`` (called in their loop)."""
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], Any,
                                                             BaseException | None]]] = {}
        for job, (result, error) in zip(jobs, outcomes, strict=True):
            future = job.future
            if isinstance(future, concurrent.futures.Future):
                if error is None:
                    future.set_result(result)
                else:
                    future.set_exception(error)
            else:
                by_loop.setdefault(future.get_loop(), []).append((future, result, error))
        for loop, items in by_loop.items():
            if here:
                _set_all(items)
                continue
            with contextlib.suppress(RuntimeError):  # that loop has closed
                loop.call_soon_threadsafe(_set_all, items)

    def _submit(self, fn: Callable[[sqlite3.Connection], T]
                ) -> asyncio.Future[T] | concurrent.futures.Future[T]:
        """Queue ``fn`` to run in the next transaction: a future of its
        result. Called in the loop that owns the loop's connection
        (``NORMAL``), ``fn`` runs there at the end of this turn, with the other
        jobs of the turn (:meth:`_commit_turn`). Called in another loop, the
        future is that loop's and ``fn`` runs in the sync thread: the first job
        of a turn at once, the others of that turn together at the next turn.
        Called outside any loop, the future is a ``concurrent.futures`` one."""
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        future: asyncio.Future[T] | concurrent.futures.Future[T] = (
            concurrent.futures.Future() if loop is None else loop.create_future())
        if self._thread is None:
            future.set_exception(StorageError(f"{self.path}: the storage is not open"))
            return future
        job = _Job(fn, future)
        if loop is not None and loop is self._loop:
            # The loop's own connection, at the end of this turn.
            if not self._turn:
                loop.call_soon(self._commit_turn)
            self._turn.append(job)
            return future
        if self._flush_loop is not None and self._flush_loop.is_closed():
            self._flush()
        if loop is None or self._flush_loop not in (None, loop):
            self._queue.put(job)
        elif self._flush_loop is None:
            # The first job of this turn goes at once (a lone move waits for
            # nothing); the others of the turn follow together.
            self._flush_loop = loop
            loop.call_soon(self._flush)
            self._queue.put(job)
        else:
            self._outbox.append(job)
        return future

    def _commit_turn(self) -> None:
        """In the loop: commit the jobs it queued during its last turn, on its
        own connection, and ask the sync thread for a checkpoint within
        :data:`SYNC_SECONDS`."""
        if self._held:  # a checkpoint is finishing: _release commits them
            return
        jobs, self._turn = self._turn, []
        if not jobs:  # committed already (by close)
            return
        if self._conn is None:  # closed meanwhile
            self._queue.put(jobs)
            return
        self._batch(self._conn, jobs, here=True)
        if not self._sync_asked:
            self._sync_asked = True
            self._queue.put(_NOTHING)

    def _flush(self) -> None:
        """Hand the jobs queued in this turn of the loop to the sync thread."""
        jobs, self._outbox, self._flush_loop = self._outbox, [], None
        if jobs:
            self._queue.put(jobs)

    async def _call(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        result: T = await asyncio.wrap_future(self._submit(fn))
        return result

    async def close(self) -> None:
        self._held = False
        if self._turn:
            self._commit_turn()
        conn, self._conn, self._loop = self._conn, None, None
        if conn is not None:
            conn.close()
        thread, self._thread = self._thread, None
        if thread is not None:
            self._flush()
            self._queue.put(_STOP)
            await asyncio.to_thread(thread.join)
        self._unclaim()

    # ---- the interface --------------------------------------------------------------------
    def create(self, meta: RoomMeta, first: Entry) -> Pending:
        def run(conn: sqlite3.Connection) -> None:
            try:
                conn.execute(f"INSERT INTO rooms ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                             (meta.id, meta.game, meta.created, meta.updated, meta.seen, meta.version,
                              meta.phase, meta.opened, meta.finished, meta.closed, meta.computer_only))
            except sqlite3.IntegrityError:
                raise StorageConflict(f"room {meta.id} exists already") from None
            conn.execute("INSERT INTO actions (room, version, at, action) VALUES (?,?,?,?)",
                         (meta.id, first.version, first.at, first.text()))
            _index(conn, meta.id, first, 0)
        return self._submit(run)

    def append(self, meta: RoomMeta, entry: Entry) -> Pending:
        def run(conn: sqlite3.Connection) -> None:
            changed = conn.execute(
                "UPDATE rooms SET updated = ?, version = ?, phase = ?,"
                " finished = coalesce(?, finished), computer_only = ? WHERE id = ? AND version = ?",
                (meta.updated, meta.version, meta.phase, meta.finished, meta.computer_only, meta.id,
                 entry.version - 1)).rowcount
            if changed != 1:
                raise StorageConflict(f"room {meta.id}: version {entry.version} does not follow the"
                                      " stored record")
            conn.execute("INSERT INTO actions (room, version, at, action) VALUES (?,?,?,?)",
                         (meta.id, entry.version, entry.at, entry.text()))
            _index(conn, meta.id, entry)
        return self._submit(run)

    def note(self, room_id: str, note: Note) -> Pending:
        def run(conn: sqlite3.Connection) -> None:
            added = conn.execute(
                "INSERT INTO room_notes (room, kind, at, data) SELECT ?, ?, ?, ?"
                " WHERE EXISTS (SELECT 1 FROM rooms WHERE id = ?)",
                (room_id, note.kind, note.at, note.text(), room_id)).rowcount
            if added != 1:
                raise StorageError(f"room {room_id}: no such room to add a note to")
            # Only the last NOTES_KEPT of a kind are ever loaded: forget the
            # rest, so that a chatty room's notes do not grow for ever.
            conn.execute(
                "DELETE FROM room_notes WHERE room = ? AND kind = ? AND n <= (SELECT n FROM room_notes"
                " WHERE room = ? AND kind = ? ORDER BY n DESC LIMIT 1 OFFSET ?)",
                (room_id, note.kind, room_id, note.kind, NOTES_KEPT))
        return self._submit(run)

    async def load(self, room_id: str) -> StoredRoom | None:
        def run(conn: sqlite3.Connection) -> StoredRoom | None:
            row = conn.execute(f"SELECT {_COLUMNS} FROM rooms WHERE id = ?", (room_id,)).fetchone()
            if row is None:
                return None
            rows = conn.execute("SELECT version, at, action FROM actions WHERE room = ?"
                                " ORDER BY version", (room_id,)).fetchall()
            notes = conn.execute(
                "SELECT kind, at, data FROM (SELECT n, kind, at, data, row_number() OVER"
                " (PARTITION BY kind ORDER BY n DESC) AS back FROM room_notes WHERE room = ?)"
                " WHERE back <= ? ORDER BY n", (room_id, NOTES_KEPT)).fetchall()
            return StoredRoom(_meta(row), tuple(Entry.parse(*r) for r in rows),
                              tuple(Note.parse(*n) for n in notes))
        return await self._call(run)

    async def find_match(self, match_id: str) -> MatchRef | None:
        def run(conn: sqlite3.Connection) -> MatchRef | None:
            row = conn.execute("SELECT room, number FROM matches WHERE id = ?", (match_id,)).fetchone()
            return None if row is None else MatchRef(str(row[0]), int(row[1]))
        return await self._call(run)

    async def since(self, room_id: str, version: int) -> list[Entry]:
        def run(conn: sqlite3.Connection) -> list[Entry]:
            rows = conn.execute("SELECT version, at, action FROM actions WHERE room = ? AND version > ?"
                                " ORDER BY version", (room_id, version)).fetchall()
            return [Entry.parse(*r) for r in rows]
        return await self._call(run)

    async def touch(self, room_id: str, seen: float, opened: bool) -> None:
        def run(conn: sqlite3.Connection) -> None:
            conn.execute("UPDATE rooms SET seen = max(seen, ?), opened = max(opened, ?) WHERE id = ?",
                         (seen, int(opened), room_id))
        self._submit(run).add_done_callback(_forget)  # best effort: not awaited

    async def close_room(self, room_id: str) -> None:
        def run(conn: sqlite3.Connection) -> None:
            row = conn.execute("SELECT finished FROM rooms WHERE id = ?", (room_id,)).fetchone()
            if row is not None:
                _close(conn, room_id, keep=row[0] is not None)
        await self._call(run)

    async def rooms(self, closed: bool | None = False) -> list[RoomMeta]:
        def run(conn: sqlite3.Connection) -> list[RoomMeta]:
            if closed is None:
                rows = conn.execute(f"SELECT {_COLUMNS} FROM rooms").fetchall()
            else:
                rows = conn.execute(f"SELECT {_COLUMNS} FROM rooms WHERE closed = ?",
                                    (int(closed),)).fetchall()
            return [_meta(r) for r in rows]
        return await self._call(run)

    async def count_open(self) -> int:
        def run(conn: sqlite3.Connection) -> int:
            return int(conn.execute("SELECT count(*) FROM rooms WHERE closed = 0").fetchone()[0])
        return await self._call(run)

    async def purge(self, idle_before: float, finished_before: float,
                    skip: frozenset[str] = frozenset()) -> list[str]:
        def run(conn: sqlite3.Connection) -> list[str]:
            done = []
            rows = conn.execute(
                "SELECT id, closed, finished FROM rooms WHERE (closed = 0 AND max(updated, seen) < ?)"
                " OR (closed = 1 AND coalesce(finished, 0) < ?)", (idle_before, finished_before))
            for room_id, closed, finished in rows.fetchall():
                if room_id in skip:
                    continue
                keep = not closed and finished is not None and finished >= finished_before
                _close(conn, room_id, keep)
                done.append(room_id)
            return done
        return await self._call(run)


def _identity(path: Path) -> tuple[int, int] | None:
    """The file at ``path`` as (device, inode), or ``None`` if there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _close(conn: sqlite3.Connection, room_id: str, keep: bool) -> None:
    if keep:
        conn.execute("UPDATE rooms SET closed = 1 WHERE id = ?", (room_id,))
    else:
        conn.execute("DELETE FROM actions WHERE room = ?", (room_id,))
        conn.execute("DELETE FROM room_notes WHERE room = ?", (room_id,))
        conn.execute("DELETE FROM matches WHERE room = ?", (room_id,))
        conn.execute("DELETE FROM rooms WHERE id = ?", (room_id,))


def _storage_error(path: Path, error: BaseException) -> BaseException:
    if isinstance(error, StorageError):
        return error
    return StorageError(f"{path}: {error}")


def _set_all(items: list[tuple[asyncio.Future[Any], Any, BaseException | None]]) -> None:
    """In the loop: resolve futures with their results or errors."""
    for future, result, error in items:
        resolve(future, result, error)


def _forget(future: asyncio.Future[Any] | concurrent.futures.Future[Any]) -> None:
    """Mark a best-effort write's failure as seen."""
    if not future.cancelled():
        future.exception()
