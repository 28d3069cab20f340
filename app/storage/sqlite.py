"""Rooms kept in an SQLite file (the default, ``CARDBOARD_DATABASE``).

The standard library's :mod:`sqlite3` in WAL mode, driven by **one writer
thread** that owns the only connection: the event loop never blocks on the
disk. Calls queue a job and await its future. The thread takes every job
waiting at once and runs them in one transaction (a *group commit*: one
fsync for all the moves that arrived together), each job under its own
savepoint so that one failing job fails alone. A write's future resolves only
after its transaction is committed (``synchronous=FULL``: on disk, so neither
``kill -9`` nor a power cut loses an acknowledged action).

The schema has a version (``PRAGMA user_version``); :data:`MIGRATIONS` bring
an older file up to date at start, and a file newer than this code is refused.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import queue
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from app.storage.base import Entry, Pending, RoomMeta, StorageConflict, StorageError, StoredRoom

log = logging.getLogger(__name__)

T = TypeVar("T")

MIGRATIONS: tuple[tuple[str, ...], ...] = (
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
)
"""The schema, one tuple of statements per version: ``MIGRATIONS[k]`` takes a
file from version ``k`` to ``k + 1``."""

SCHEMA_VERSION = len(MIGRATIONS)

BATCH = 512
"""Jobs run in one transaction at most."""

_COLUMNS = "id, game, created, updated, seen, version, phase, opened, finished, closed, computer_only"


class _Job:
    __slots__ = ("fn", "future")

    def __init__(self, fn: Callable[[sqlite3.Connection], Any]) -> None:
        self.fn = fn
        self.future: concurrent.futures.Future[Any] = concurrent.futures.Future()


_STOP = object()


def _meta(row: tuple[Any, ...]) -> RoomMeta:
    (room_id, game, created, updated, seen, version, phase, opened, finished, closed,
     computer_only) = row
    return RoomMeta(room_id, game, created, updated, seen, version, phase, bool(opened), finished,
                    bool(closed), bool(computer_only))


class SqliteStorage:
    """:class:`app.storage.base.Storage` in the SQLite file at ``path`` (its
    directory is made if missing)."""

    name = "sqlite"

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self.commits = 0
        """Transactions committed so far (each may hold many writes)."""

    # ---- the writer thread ----------------------------------------------------------------
    async def open(self) -> None:
        if self._thread is not None:
            return
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._run, args=(ready,), name="sqlite-writer",
                                        daemon=True)
        self._thread.start()
        try:
            await asyncio.wrap_future(ready)
        except BaseException:
            self._thread.join()
            self._thread = None
            raise

    def _connect(self) -> sqlite3.Connection:
        where = f"the database {str(self.path)!r}"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot make the directory of {where}: {exc.strerror}") from None
        try:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open {where}: {exc}. Check that its directory exists and is"
                               " writable, or set CARDBOARD_DATABASE to another file") from None
        try:
            conn.execute("PRAGMA busy_timeout = 5000")
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StorageError(f"{where} cannot use write-ahead logging (journal mode {mode})")
            conn.execute("PRAGMA synchronous = FULL")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StorageError(
                    f"{where} has schema version {version}, newer than this server knows"
                    f" ({SCHEMA_VERSION}): it was written by a newer Cardboard. Upgrade the server,"
                    " or point CARDBOARD_DATABASE at another file")
            for step in range(version, SCHEMA_VERSION):
                conn.execute("BEGIN IMMEDIATE")
                for statement in MIGRATIONS[step]:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {step + 1}")
                conn.execute("COMMIT")
                log.info("%s: schema migrated to version %d", self.path, step + 1)
            conn.execute("SELECT count(*) FROM rooms").fetchone()
            if conn.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                raise StorageError(f"{where} is damaged (PRAGMA quick_check failed): restore a"
                                   " backup, or point CARDBOARD_DATABASE at another file")
            # One harmless write, so that a file the server may read but not
            # write is refused now rather than at the first move.
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except StorageError:
            conn.close()
            raise
        except sqlite3.Error as exc:
            conn.close()
            if "readonly" in str(exc) or "read-only" in str(exc):
                raise StorageError(f"{where} is read-only: make its file and directory writable by"
                                   " the server") from None
            raise StorageError(f"{where} cannot be used: {exc}. If the file is damaged, restore a"
                               " backup, or point CARDBOARD_DATABASE at another file") from None
        return conn

    def _run(self, ready: concurrent.futures.Future[None]) -> None:
        try:
            conn = self._connect()
        except BaseException as exc:
            ready.set_exception(exc)
            return
        ready.set_result(None)
        stop = False
        while not stop:
            jobs = [self._queue.get()]
            while len(jobs) < BATCH:
                try:
                    jobs.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            if _STOP in jobs:
                stop = True
                jobs = [j for j in jobs if j is not _STOP]
            if jobs:
                self._batch(conn, jobs)
        conn.close()

    def _batch(self, conn: sqlite3.Connection, jobs: list[_Job]) -> None:
        """Run ``jobs`` in one transaction, each under its own savepoint, and
        resolve their futures once it is committed. Never raises: the thread
        must live on, or every later write would wait forever."""
        results: list[tuple[_Job, Any, BaseException | None]] = []
        try:
            conn.execute("BEGIN IMMEDIATE")
            for job in jobs:
                conn.execute("SAVEPOINT job")
                try:
                    result = job.fn(conn)
                except Exception as exc:
                    if not conn.in_transaction:
                        # SQLite rolled the whole transaction back itself (a
                        # full disk, an I/O error): every job of it fails, with
                        # this message rather than "no such savepoint".
                        raise
                    conn.execute("ROLLBACK TO job")
                    conn.execute("RELEASE job")
                    results.append((job, None, exc))
                else:
                    conn.execute("RELEASE job")
                    results.append((job, result, None))
            conn.execute("COMMIT")
            self.commits += 1
        except Exception as exc:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            failure = StorageError(f"{self.path}: {exc}")
            for job in jobs:
                job.future.set_exception(failure)
            return
        for job, result, error in results:
            if error is None:
                job.future.set_result(result)
            else:
                job.future.set_exception(_storage_error(self.path, error))

    def _submit(self, fn: Callable[[sqlite3.Connection], T]) -> concurrent.futures.Future[T]:
        job = _Job(fn)
        if self._thread is None:
            job.future.set_exception(StorageError(f"{self.path}: the storage is not open"))
            return job.future
        self._queue.put(job)
        return job.future

    async def _call(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        result: T = await asyncio.wrap_future(self._submit(fn))
        return result

    async def close(self) -> None:
        thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(_STOP)
            await asyncio.to_thread(thread.join)

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
        return self._submit(run)

    async def load(self, room_id: str) -> StoredRoom | None:
        def run(conn: sqlite3.Connection) -> StoredRoom | None:
            row = conn.execute(f"SELECT {_COLUMNS} FROM rooms WHERE id = ?", (room_id,)).fetchone()
            if row is None:
                return None
            rows = conn.execute("SELECT version, at, action FROM actions WHERE room = ?"
                                " ORDER BY version", (room_id,)).fetchall()
            return StoredRoom(_meta(row), tuple(Entry.parse(*r) for r in rows))
        return await self._call(run)

    async def touch(self, room_id: str, seen: float, opened: bool) -> None:
        def run(conn: sqlite3.Connection) -> None:
            conn.execute("UPDATE rooms SET seen = max(seen, ?), opened = max(opened, ?) WHERE id = ?",
                         (seen, int(opened), room_id))
        self._submit(run)  # best effort: not awaited

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


def _close(conn: sqlite3.Connection, room_id: str, keep: bool) -> None:
    if keep:
        conn.execute("UPDATE rooms SET closed = 1 WHERE id = ?", (room_id,))
    else:
        conn.execute("DELETE FROM actions WHERE room = ?", (room_id,))
        conn.execute("DELETE FROM rooms WHERE id = ?", (room_id,))


def _storage_error(path: Path, error: BaseException) -> BaseException:
    if isinstance(error, StorageError):
        return error
    return StorageError(f"{path}: {error}")
