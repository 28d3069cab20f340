"""The storage interface (app/storage/base.py) against both backends, memory
and SQLite on a temporary file, then what only SQLite has: its schema
version and migrations, files it refuses to open (newer, damaged, read-only)
with a message saying why, a write that fails (a full disk) and group commits."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import app.storage.sqlite as sqlite_module
from app.lobby import Lobby
from app.settings import Settings
from app.storage import (
    Entry,
    MemoryStorage,
    RoomMeta,
    SqliteStorage,
    Storage,
    StorageConflict,
    StorageError,
    StoredRoom,
)
from app.storage.base import Pending, StorageDamaged, compact_json
from app.storage.sqlite import SCHEMA_VERSION, SYNC_SECONDS, _unusable

ROOT = Path(__file__).resolve().parents[2]
DAY = 86400.0
NOW = 1_800_000_000.0

Scenario = Callable[[Storage], Awaitable[None]]


def meta(room_id: str, version: int = 0, *, at: float = NOW, **fields: Any) -> RoomMeta:
    """A room's meta at ``version``, created, updated and seen at ``at``."""
    return RoomMeta(room_id, "get-stuck", fields.pop("created", at), at, fields.pop("seen", at),
                    version, fields.pop("phase", "waiting"), **fields)


def action(version: int) -> dict[str, Any]:
    """A stand-in action for ``version`` (the storage never reads actions)."""
    if version == 0:
        return {"t": "create", "game": "get-stuck", "seed": 2**63 - 1, "options": {"deals": 2}}
    return {"t": "move", "seat": "red", "move": f"c{version}", "name": "Zoë ♥"}


async def done(pending: Pending) -> None:
    """Wait for a write to be durable (raising what it raised)."""
    await asyncio.wrap_future(pending)


async def make_room(storage: Storage, room_id: str, versions: int = 1, *, at: float = NOW,
                    **fields: Any) -> RoomMeta:
    """Store a room with its ``create`` entry and ``versions - 1`` more; its
    last meta carries ``fields``."""
    await done(storage.create(meta(room_id, 0, at=at), Entry(0, at, action(0))))
    last = meta(room_id, 0, at=at)
    for v in range(1, versions):
        last = meta(room_id, v, at=at, created=at, **(fields if v == versions - 1 else {}))
        await done(storage.append(last, Entry(v, at, action(v))))
    return last


@pytest.fixture(params=["memory", "sqlite", "sqlite-full"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Storage]:
    """Makes the storage under test (for SQLite, on the same file each time,
    synced lazily or at every commit)."""
    if request.param == "memory":
        one = MemoryStorage()
        return lambda: one
    sync = "FULL" if request.param == "sqlite-full" else "NORMAL"
    return lambda: SqliteStorage(tmp_path / "data" / "cardboard.db", sync)


def run(storage: Storage, scenario: Scenario) -> None:
    """Open ``storage``, run ``scenario`` on it, close it."""
    async def main() -> None:
        await storage.open()
        try:
            await scenario(storage)
        finally:
            await storage.close()
    asyncio.run(main())


def test_compact_json_is_the_standard_compact_json_of_what_is_stored() -> None:
    """Actions and notes are written by orjson, and by the standard library
    where orjson cannot: an integer past 64 bits, a key that is not a string.
    Either way the text reads back as the object, compact, signs kept."""
    import json

    for obj in ({"t": "move", "seat": "N", "move": "f3-e2", "hand_back": []},
                {"t": "chat", "text": "the 4♥ ♠ \u00e9", "at": 1796247540.48, "n": None, "ok": True},
                {"t": "create", "seed": 2**70, "options": {"players": 4}},
                {"t": "x", "keys": {1: "one"}}):
        text = compact_json(obj)
        assert text == json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
        assert json.loads(text) == json.loads(json.dumps(obj))
    entry = Entry(3, 1.5, {"t": "move", "seat": "N", "move": "♥"})
    assert Entry.parse(3, 1.5, entry.text()) == entry


# ---- the interface, both backends ---------------------------------------------------------
def test_create_then_load(backend: Callable[[], Storage]) -> None:
    async def scenario(s: Storage) -> None:
        assert await s.load("nothere1") is None
        last = await make_room(s, "room0001", 3, phase="playing")
        stored = await s.load("room0001")
        assert isinstance(stored, StoredRoom)
        assert stored.meta == last
        assert [e.version for e in stored.entries] == [0, 1, 2]
        assert [e.action for e in stored.entries] == [action(0), action(1), action(2)]
        assert stored.entries[0].action["seed"] == 2**63 - 1  # a 63-bit seed, exactly
        assert [r.id for r in await s.rooms()] == ["room0001"]
        assert await s.count_open() == 1
    run(backend(), scenario)


def test_a_room_survives_closing_and_opening_again(backend: Callable[[], Storage]) -> None:
    run(backend(), lambda s: make_room(s, "room0001", 4, phase="playing"))

    async def again(s: Storage) -> None:
        stored = await s.load("room0001")
        assert stored is not None and stored.meta.version == 3 and stored.meta.phase == "playing"
        assert [e.action for e in stored.entries] == [action(v) for v in range(4)]
    run(backend(), again)


def test_create_twice_is_a_conflict(backend: Callable[[], Storage]) -> None:
    async def scenario(s: Storage) -> None:
        await make_room(s, "room0001", 2)
        with pytest.raises(StorageConflict, match="room0001"):
            await done(s.create(meta("room0001"), Entry(0, NOW, {"t": "create", "other": True})))
        stored = await s.load("room0001")
        assert stored is not None and len(stored.entries) == 2
        assert stored.entries[0].action == action(0)
    run(backend(), scenario)


@pytest.mark.parametrize("version", [1, 2, 4, 0])
def test_append_out_of_order_is_a_conflict(backend: Callable[[], Storage], version: int) -> None:
    """Versions 1 and 2 exist already, 4 does not follow 2, 0 is the creation."""
    async def scenario(s: Storage) -> None:
        last = await make_room(s, "room0001", 3)
        with pytest.raises(StorageConflict, match="room0001"):
            await done(s.append(meta("room0001", version), Entry(version, NOW + 1, {"t": "x"})))
        stored = await s.load("room0001")
        assert stored is not None and stored.meta == last
        assert [e.action for e in stored.entries] == [action(0), action(1), action(2)]
        # The next version still follows.
        await done(s.append(meta("room0001", 3), Entry(3, NOW, action(3))))
    run(backend(), scenario)


def test_append_to_a_missing_room_is_a_conflict(backend: Callable[[], Storage]) -> None:
    async def scenario(s: Storage) -> None:
        with pytest.raises(StorageConflict):
            await done(s.append(meta("nothere1", 1), Entry(1, NOW, action(1))))
        assert await s.load("nothere1") is None
    run(backend(), scenario)


def test_append_updates_the_meta(backend: Callable[[], Storage]) -> None:
    async def scenario(s: Storage) -> None:
        await make_room(s, "room0001", 1)
        await s.touch("room0001", NOW + 50, True)
        later = meta("room0001", 1, at=NOW + 100, created=NOW, phase="match_over",
                     finished=NOW + 100, computer_only=True)
        await done(s.append(later, Entry(1, NOW + 100, action(1))))
        # A later action without a finish keeps the last finish.
        again = meta("room0001", 2, at=NOW + 200, created=NOW, phase="playing")
        await done(s.append(again, Entry(2, NOW + 200, action(2))))
        stored = await s.load("room0001")
        assert stored is not None
        m = stored.meta
        assert (m.version, m.phase, m.updated, m.finished, m.computer_only) == (
            2, "playing", NOW + 200, NOW + 100, False)
        assert (m.seen, m.opened, m.created) == (NOW + 50, True, NOW)  # kept from the touch
    run(backend(), scenario)


def test_touch(backend: Callable[[], Storage]) -> None:
    async def scenario(s: Storage) -> None:
        await make_room(s, "room0001")
        await s.touch("room0001", NOW + 10, True)
        await s.touch("room0001", NOW + 20, False)  # opened stays true
        await s.touch("nothere1", NOW, True)  # no such room: nothing happens
        stored = await s.load("room0001")
        assert stored is not None
        assert (stored.meta.seen, stored.meta.opened) == (NOW + 20, True)
        assert await s.load("nothere1") is None
    run(backend(), scenario)


def test_close_room_keeps_only_finished_matches(backend: Callable[[], Storage]) -> None:
    async def scenario(s: Storage) -> None:
        await make_room(s, "unfinish", 3, phase="playing")
        await make_room(s, "finished", 3, phase="match_over", finished=NOW)
        await make_room(s, "stillopn", 1)
        await s.close_room("unfinish")
        await s.close_room("finished")
        await s.close_room("nothere1")
        assert await s.load("unfinish") is None
        kept = await s.load("finished")
        assert kept is not None and kept.meta.closed and len(kept.entries) == 3
        assert [r.id for r in await s.rooms()] == ["stillopn"]
        assert [r.id for r in await s.rooms(closed=True)] == ["finished"]
        assert sorted(r.id for r in await s.rooms(closed=None)) == ["finished", "stillopn"]
        assert await s.count_open() == 1
    run(backend(), scenario)


def test_purge(backend: Callable[[], Storage]) -> None:
    """Idle open rooms go (kept closed if their match finished recently),
    closed rooms go once their match ended long enough ago; recent use, a
    connection seen lately and ``skip`` protect a room."""
    old, recent = NOW - 10 * DAY, NOW - DAY

    async def scenario(s: Storage) -> None:
        await make_room(s, "idle0000", 2, at=old)
        await make_room(s, "idlefin0", 2, at=recent, phase="match_over", finished=recent)
        await make_room(s, "idleold0", 2, at=old, phase="match_over", finished=old)
        await make_room(s, "busy0000", 2, at=NOW)
        await make_room(s, "seen0000", 2, at=old)
        await s.touch("seen0000", NOW, True)
        await make_room(s, "skipped0", 2, at=old)
        await make_room(s, "closedol", 2, at=old, phase="match_over", finished=old)
        await make_room(s, "closedre", 2, at=recent, phase="match_over", finished=recent)
        await s.close_room("closedol")
        await s.close_room("closedre")
        purged = await s.purge(NOW - 3600, NOW - 5 * DAY, frozenset({"skipped0"}))
        assert sorted(purged) == ["closedol", "idle0000", "idlefin0", "idleold0"]
        left = {m.id: m.closed for m in await s.rooms(closed=None)}
        assert left == {"idlefin0": True, "busy0000": False, "seen0000": False,
                        "skipped0": False, "closedre": True}
        assert await s.load("idle0000") is None and await s.load("closedol") is None
        kept = await s.load("idlefin0")
        assert kept is not None and len(kept.entries) == 2
        assert await s.purge(NOW - 3600, NOW - 5 * DAY, frozenset({"skipped0"})) == []
    run(backend(), scenario)


def test_the_sweep_keeps_finished_matches_keep_days(backend: Callable[[], Storage]) -> None:
    """``CARDBOARD_KEEP_DAYS`` through the lobby's sweep: a finished match is
    kept that many days after it ended, an unfinished idle room not at all."""
    async def scenario(s: Storage) -> None:
        lobby = Lobby(Settings(keep_days=30, room_idle_hours=1), storage=s)
        await make_room(s, "fin29day", 2, at=NOW - 29 * DAY, phase="match_over", finished=NOW - 29 * DAY)
        await make_room(s, "fin31day", 2, at=NOW - 31 * DAY, phase="match_over", finished=NOW - 31 * DAY)
        await make_room(s, "unfinish", 2, at=NOW - 2 * 3600)
        assert sorted(await lobby.sweep(wall=NOW)) == ["fin29day", "fin31day", "unfinish"]
        assert [(m.id, m.closed) for m in await s.rooms(closed=None)] == [("fin29day", True)]
        assert await lobby.sweep(wall=NOW + 2 * DAY) == ["fin29day"]
        assert await s.rooms(closed=None) == []
    run(backend(), scenario)


def test_entries_are_json() -> None:
    entry = Entry(3, NOW, {"t": "join", "seat": "red", "name": "Zoë ♥", "n": 2**63 - 1})
    assert Entry.parse(3, NOW, entry.text()) == entry
    with pytest.raises(StorageDamaged, match="version 1 is damaged: a stored action is not an object"):
        Entry.parse(1, NOW, "[1, 2]")
    with pytest.raises(StorageDamaged, match="version 2 is damaged"):
        Entry.parse(2, NOW, "{not json")


# ---- SQLite only ---------------------------------------------------------------------------
def sqlite_run(path: Path, scenario: Scenario) -> None:
    run(SqliteStorage(path), scenario)


def open_error(path: Path) -> str:
    """The message of the ``StorageError`` that opening ``path`` raises."""
    with pytest.raises(StorageError) as info:
        sqlite_run(path, lambda s: asyncio.sleep(0))
    return str(info.value)


def user_version(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])


def test_a_new_file_gets_the_schema(tmp_path: Path) -> None:
    path = tmp_path / "new" / "dir" / "rooms.db"
    sqlite_run(path, lambda s: make_room(s, "room0001"))
    assert user_version(path) == SCHEMA_VERSION >= 1
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"rooms", "actions"} <= tables


def test_a_move_does_not_touch_the_open_rooms_index(tmp_path: Path) -> None:
    """Schema 4: a file of schema 3 gets the open rooms indexed by
    ``closed`` alone, its rooms kept; counting the open rooms uses that
    index, and a move (a new version) changes no entry of it."""
    path = tmp_path / "three.db"
    with sqlite3.connect(path) as conn:
        for step in (st for migration in sqlite_module.MIGRATIONS[:3] for st in migration):
            if isinstance(step, str):
                conn.execute(step)
        conn.execute("PRAGMA user_version = 3")
    sqlite_run(path, lambda s: make_room(s, "room0001"))

    async def more(s: Storage) -> None:
        assert await s.count_open() == 1
        await done(s.append(meta("room0001", 1), Entry(1, NOW, action(1))))
    sqlite_run(path, more)
    assert user_version(path) == SCHEMA_VERSION == 4
    with sqlite3.connect(path) as conn:
        indexes = {r[1]: [c[2] for c in conn.execute(f"PRAGMA index_info({r[1]})")]
                   for r in conn.execute("PRAGMA index_list(rooms)") if not r[1].startswith("sqlite_")}
        plan = " ".join(r[-1] for r in conn.execute(
            "EXPLAIN QUERY PLAN SELECT count(*) FROM rooms WHERE closed = 0"))
    assert indexes == {"rooms_closed": ["closed"]}
    assert "rooms_closed" in plan


def test_an_empty_file_is_migrated(tmp_path: Path) -> None:
    """A file of 0 bytes (and an SQLite file at schema version 0 holding
    something else) is brought up to the current schema at start."""
    empty = tmp_path / "empty.db"
    empty.touch()
    sqlite_run(empty, lambda s: make_room(s, "room0001"))
    assert user_version(empty) == SCHEMA_VERSION
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
        conn.execute("INSERT INTO notes VALUES ('kept')")
    sqlite_run(other, lambda s: make_room(s, "room0001"))
    assert user_version(other) == SCHEMA_VERSION
    with sqlite3.connect(other) as conn:
        assert conn.execute("SELECT text FROM notes").fetchall() == [("kept",)]


def test_a_newer_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "rooms.db"
    sqlite_run(path, lambda s: make_room(s, "room0001"))
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    message = open_error(path)
    assert "schema version 99" in message and "newer" in message
    assert f"({SCHEMA_VERSION})" in message and "Upgrade the server" in message
    assert user_version(path) == 99  # left alone


def test_random_bytes_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "rooms.db"
    path.write_bytes(os.urandom(64 * 1024))
    before = path.read_bytes()
    message = open_error(path)
    assert "rooms.db" in message and "not a database" in message and "backup" in message
    assert path.read_bytes() == before


def test_a_damaged_database_is_refused(tmp_path: Path) -> None:
    """A real database whose pages after the first were overwritten."""
    path = tmp_path / "rooms.db"

    async def fill(s: Storage) -> None:
        for i in range(40):
            await make_room(s, f"room{i:04d}", 20)
    sqlite_run(path, fill)
    data = bytearray(path.read_bytes())
    assert len(data) > 8 * 4096
    page = 4096
    data[page: 8 * page] = os.urandom(7 * page)
    path.write_bytes(bytes(data))
    message = open_error(path)
    assert "rooms.db" in message and ("damaged" in message or "malformed" in message)
    assert "backup" in message


def test_a_database_missing_a_table_is_refused(tmp_path: Path) -> None:
    """A file of the current schema version without one of its tables (a hand
    edit): refused at start; the server used to start, then answer 503 to
    every room created (break-it pass)."""
    path = tmp_path / "rooms.db"
    sqlite_run(path, lambda s: make_room(s, "room0001"))
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE matches")
    message = open_error(path)
    assert "rooms.db" in message and "no table matches" in message and "backup" in message


def test_a_full_disk_at_start_says_to_free_space(tmp_path: Path) -> None:
    error = _unusable("the database 'rooms.db'", sqlite3.OperationalError("database or disk is full"),
                      tmp_path / "rooms.db")
    assert "Free some space" in str(error) and "restore a backup" not in str(error)


CHILD = """
import asyncio, concurrent.futures.thread, os, sys
sys.path.insert(0, {root!r})
from app.storage import SqliteStorage, StorageError
if os.getuid() == 0:
    # Drop to nobody only now: the interpreter may live where nobody cannot read.
    os.setgroups([]); os.setgid(65534); os.setuid(65534)
async def main():
    storage = SqliteStorage(sys.argv[1])
    try:
        await storage.open()
    except StorageError as exc:
        print(exc)
        sys.exit(3)
    await storage.close()
asyncio.run(main())
"""


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A temporary directory that user nobody may enter (pytest's are 0700)."""
    with tempfile.TemporaryDirectory(prefix="cardboard-ro-") as where:
        os.chmod(where, 0o755)
        yield Path(where)
        for p in Path(where).rglob("*"):
            p.chmod(0o755 if p.is_dir() else 0o644)


def open_unprivileged(path: Path) -> subprocess.CompletedProcess[str]:
    """Open ``path`` in a child process running as user nobody when we are
    root (who ignores file modes), as ourselves otherwise."""
    return subprocess.run([sys.executable, "-c", CHILD.format(root=str(ROOT)), str(path)],
                          capture_output=True, text=True, timeout=60, check=False)


def test_a_read_only_directory_is_refused(shared_dir: Path) -> None:
    ro = shared_dir / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    result = open_unprivileged(ro / "rooms.db")
    assert result.returncode == 3, result.stderr
    assert "rooms.db" in result.stdout and "writable" in result.stdout
    assert not (ro / "rooms.db").exists()


def test_a_database_in_a_read_only_directory_is_refused(shared_dir: Path) -> None:
    db_dir = shared_dir / "data"
    sqlite_run(db_dir / "rooms.db", lambda s: make_room(s, "room0001"))
    for p in db_dir.iterdir():
        p.chmod(0o644)
    db_dir.chmod(0o555)
    result = open_unprivileged(db_dir / "rooms.db")
    assert result.returncode == 3, result.stderr
    assert "read-only" in result.stdout and "writable" in result.stdout


def test_a_read_only_file_is_refused_at_start(shared_dir: Path) -> None:
    """A file the server may read but not write: refused at start, not at the
    first move."""
    db_dir = shared_dir / "data"
    sqlite_run(db_dir / "rooms.db", lambda s: make_room(s, "room0001"))
    db_dir.chmod(0o777)
    (db_dir / "rooms.db").chmod(0o444)
    result = open_unprivileged(db_dir / "rooms.db")
    assert result.returncode == 3, result.stderr
    assert "read-only" in result.stdout and "writable" in result.stdout


async def set_max_pages(s: Storage, extra: int | None) -> None:
    """Make the file full: at most ``extra`` more pages (``None``: no limit)."""
    assert isinstance(s, SqliteStorage)

    def limit(conn: sqlite3.Connection) -> None:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {2**31 - 2 if extra is None else pages + extra}")
    await s._call(limit)


def test_a_full_disk_fails_the_write_alone(tmp_path: Path) -> None:
    """A write that does not fit raises ``StorageError`` saying so, stores
    nothing, and the storage works again once there is space."""
    big = {"t": "move", "seat": "red", "move": "c4", "pad": "x" * 20_000}

    async def scenario(s: Storage) -> None:
        await make_room(s, "room0001", 2)
        await set_max_pages(s, 0)
        with pytest.raises(StorageError, match="disk is full") as info:
            await done(s.append(meta("room0001", 2), Entry(2, NOW, big)))
        assert not isinstance(info.value, StorageConflict)
        with pytest.raises(StorageError, match="disk is full"):
            await done(s.create(meta("room0002"), Entry(0, NOW, {**action(0), "pad": "x" * 20_000})))
        stored = await s.load("room0001")
        assert stored is not None and stored.meta.version == 1 and len(stored.entries) == 2
        assert await s.load("room0002") is None
        await set_max_pages(s, None)
        await done(s.append(meta("room0001", 2), Entry(2, NOW, big)))
        stored = await s.load("room0001")
        assert stored is not None and stored.entries[-1].action == big
    sqlite_run(tmp_path / "rooms.db", scenario)


def test_many_appends_share_commits(tmp_path: Path) -> None:
    """Writes that arrive together are committed together, each still
    checked on its own (one conflict fails alone)."""
    rooms = 100

    async def scenario(s: Storage) -> None:
        assert isinstance(s, SqliteStorage)
        for i in range(rooms):
            await make_room(s, f"room{i:04d}")
        before = s.commits
        writes = [s.append(meta(f"room{i:04d}", 1), Entry(1, NOW, action(1))) for i in range(rooms)]
        writes.append(s.append(meta("room0000", 1), Entry(1, NOW, action(1))))  # a conflict
        results = await asyncio.gather(*(done(w) for w in writes), return_exceptions=True)
        assert results[:rooms] == [None] * rooms
        assert isinstance(results[rooms], StorageConflict)
        used = s.commits - before
        assert 1 <= used < rooms // 4, used
        for i in range(rooms):
            stored = await s.load(f"room{i:04d}")
            assert stored is not None and stored.meta.version == 1 and len(stored.entries) == 2
    sqlite_run(tmp_path / "rooms.db", scenario)


@pytest.mark.parametrize("sync", ["NORMAL", "FULL"])
def test_where_commits_run(tmp_path: Path, sync: str) -> None:
    """With ``NORMAL`` the jobs an event loop queues run on the loop's own
    thread, together at the end of the turn (no thread to wake); with ``FULL`` (a sync per commit) they run
    in the sync thread. Jobs from outside the loop run in the sync thread in
    both cases, and see the loop's commits."""
    seen: list[int] = []

    def where(conn: sqlite3.Connection) -> int:
        seen.append(threading.get_ident())
        return int(conn.execute("SELECT count(*) FROM rooms").fetchone()[0])

    async def scenario(s: Storage) -> None:
        assert isinstance(s, SqliteStorage)
        loop_thread = threading.get_ident()
        before = s.commits
        writes = [s.create(meta(f"room{i:04d}", 0), Entry(0, NOW, action(0))) for i in range(5)]
        count = s._submit(where)
        assert isinstance(count, asyncio.Future)
        await asyncio.gather(*(done(w) for w in writes))
        assert await count == 5
        if sync == "NORMAL":
            assert s.commits - before == 1  # one transaction for the turn's six jobs
        def from_a_thread() -> int:
            future = s._submit(where)
            assert isinstance(future, concurrent.futures.Future)
            return future.result(timeout=5)
        assert await asyncio.to_thread(from_a_thread) == 5
        inline, other = seen
        assert other != loop_thread
        assert (inline == loop_thread) == (sync == "NORMAL")
    run(SqliteStorage(tmp_path / "rooms.db", sync), scenario)


def test_commits_reach_the_file_itself_within_a_second(tmp_path: Path) -> None:
    """With ``synchronous=NORMAL`` a commit is first in the write-ahead log
    only; within ``SYNC_SECONDS`` a checkpoint (which syncs the log) has put
    it in the database file itself."""
    path = tmp_path / "rooms.db"

    def in_main_file(name: str) -> list[str]:
        copy = tmp_path / name
        for _ in range(50):
            copy.write_bytes(path.read_bytes())  # the file alone, without its -wal
            conn = sqlite3.connect(copy)
            try:
                return [r[0] for r in conn.execute("SELECT id FROM rooms ORDER BY id")]
            except sqlite3.OperationalError:  # not even the schema is in the file yet
                return []
            except sqlite3.DatabaseError:
                # Copied while a checkpoint was writing pages into it (the
                # copy holds some of them, not all): copy it again.
                time.sleep(0.01)
            finally:
                conn.close()
        raise AssertionError("every copy of the file was torn: is it damaged?")

    async def scenario(s: Storage) -> None:
        await make_room(s, "room0001")
        # Within SYNC_SECONDS (and a margin) the commit is in the file itself;
        # the next commit, made just after that sync, is in the log only.
        deadline = time.monotonic() + SYNC_SECONDS + 1.5
        while in_main_file("a.db") != ["room0001"]:
            assert time.monotonic() < deadline, "the first commit never reached the file"
            await asyncio.sleep(0.02)
        await make_room(s, "room0002")
        assert in_main_file("b.db") == ["room0001"]  # only in the log so far
        await asyncio.sleep(SYNC_SECONDS + 1.5)
        assert in_main_file("c.db") == ["room0001", "room0002"]
    sqlite_run(path, scenario)


def test_the_log_starts_over_while_the_loop_keeps_committing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The loop commits while the sync thread checkpoints, so a checkpoint
    never reaches the end of a busy log; past ``WAL_LIMIT`` the loop's
    commits are held while a second checkpoint finishes, and the log file
    starts over instead of growing for as long as the load lasts: the file
    is cut back to ``WAL_LIMIT``, not below (a commit on the loop does not
    free the whole file to grow it again). No write is lost or reordered by
    the hold."""
    monkeypatch.setattr(sqlite_module, "WAL_LIMIT", 256 * 1024)
    path = tmp_path / "rooms.db"
    wal = Path(f"{path}-wal")

    async def scenario(s: Storage) -> None:
        assert isinstance(s, SqliteStorage)
        await make_room(s, "room0001")
        sizes: list[int] = []
        version = 0
        # A checkpoint syncs the log first, which takes long on a slow disk
        # with a large log: the deadline is generous, and the load stops
        # once the log has started over.
        deadline = time.monotonic() + 10 * SYNC_SECONDS
        shrank = False
        while not shrank:
            assert time.monotonic() < deadline, f"the log never started over: {max(sizes)} bytes"
            writes = []
            for _ in range(5):  # a few moves a turn, a short pause between turns
                version += 1
                writes.append(s.append(meta("room0001", version), Entry(version, NOW, action(version))))
            await asyncio.gather(*(done(w) for w in writes))
            sizes.append(wal.stat().st_size if wal.exists() else 0)
            shrank = len(sizes) > 1 and sizes[-1] < sizes[-2]
            await asyncio.sleep(0.001)
        assert s.holds >= 1
        assert sizes[-2] > sqlite_module.WAL_LIMIT == sizes[-1]
        stored = await s.load("room0001")
        assert stored is not None and stored.meta.version == version
        assert [e.version for e in stored.entries] == list(range(version + 1))
    sqlite_run(path, scenario)


def test_closed_storage_refuses_writes(tmp_path: Path) -> None:
    storage = SqliteStorage(tmp_path / "rooms.db")
    run(storage, lambda s: make_room(s, "room0001"))
    pending = storage.append(meta("room0001", 1), Entry(1, NOW, action(1)))
    with pytest.raises(StorageError, match="not open"):
        pending.result(timeout=1)


def test_meta_fields_round_trip(tmp_path: Path) -> None:
    """Every meta field comes back as it was written, in both backends."""
    full = replace(meta("room0001", 0), opened=True, finished=NOW, closed=False, computer_only=True)
    for storage in (MemoryStorage(), SqliteStorage(tmp_path / "rooms.db")):
        async def scenario(s: Storage) -> None:
            await done(s.create(full, Entry(0, NOW, action(0))))
            stored = await s.load("room0001")
            assert stored is not None and stored.meta == full
        run(storage, scenario)


@pytest.mark.parametrize("sync", ["NORMAL", "FULL"])
def test_a_file_removed_under_the_server_is_said_and_nothing_is_acknowledged(
        tmp_path: Path, sync: str, caplog: pytest.LogCaptureFixture) -> None:
    """The database file moved away (or deleted) while the server runs: SQLite
    would go on writing to the file it holds open, and what it acknowledged
    would be gone at the next restart. Every write is refused instead, with
    what happened and what to do, said once in the log; moved back, the file
    is written again, and it holds exactly what was acknowledged."""
    path = tmp_path / "cb.db"
    aside = tmp_path / "aside.db"
    storage = SqliteStorage(path, sync)

    async def main() -> None:
        await storage.open()
        try:
            await make_room(storage, "room0001", 2)
            path.rename(aside)
            for v in (2, 2):  # refused each time, the version not taken
                with pytest.raises(StorageError) as caught:
                    await done(storage.append(meta("room0001", v), Entry(v, NOW, action(v))))
                assert str(caught.value).startswith(  # the path once, not twice
                    f"the database file {str(path)!r} was removed or replaced while the server ran")
            with pytest.raises(StorageError, match="removed or replaced"):
                await done(storage.create(meta("room0002"), Entry(0, NOW, action(0))))
            aside.rename(path)
            await done(storage.append(meta("room0001", 2), Entry(2, NOW, action(2))))
        finally:
            await storage.close()

    with caplog.at_level("CRITICAL", logger="app.storage.sqlite"):
        asyncio.run(main())
    assert [r.getMessage() for r in caplog.records if r.levelname == "CRITICAL"] == [
        f"the database file {str(path)!r} was removed or replaced while the server ran: nothing more"
        " is saved. Put the file back, or restart the server"]

    async def check(s: Storage) -> None:
        stored = await s.load("room0001")
        assert stored is not None and [e.version for e in stored.entries] == [0, 1, 2]
        assert await s.load("room0002") is None
    sqlite_run(path, check)
