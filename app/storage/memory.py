"""Rooms kept in this process's memory (``CARDBOARD_DATABASE=:memory:``):
lost when the process ends. For tests, and for a server that wants no file."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from dataclasses import replace

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
)


def _done(write: Callable[[], None]) -> Pending:
    """A future already done with what ``write`` did (or raised)."""
    future: concurrent.futures.Future[None] = concurrent.futures.Future()
    try:
        write()
    except Exception as exc:
        future.set_exception(exc)
    else:
        future.set_result(None)
    return future


class MemoryStorage:
    """:class:`app.storage.base.Storage` in dicts. ``fail`` set to an
    exception makes every write raise it (tests of a failing store)."""

    name = "memory"

    def __init__(self) -> None:
        self._meta: dict[str, RoomMeta] = {}
        self._entries: dict[str, list[Entry]] = {}
        self._notes: dict[str, list[Note]] = {}
        self._matches: dict[str, MatchRef] = {}
        self._room_matches: dict[str, list[str]] = {}
        self.fail: Exception | None = None

    def _check(self) -> None:
        if self.fail is not None:
            raise self.fail

    async def open(self) -> None:
        return None

    async def close(self) -> None:
        return None

    def create(self, meta: RoomMeta, first: Entry) -> Pending:
        def write() -> None:
            self._check()
            if meta.id in self._meta:
                raise StorageConflict(f"room {meta.id} exists already")
            self._meta[meta.id] = meta
            self._entries[meta.id] = [first]
            self._room_matches[meta.id] = []
            self._index(meta.id, first)
        return _done(write)

    def _index(self, room_id: str, entry: Entry) -> None:
        ids = self._room_matches[room_id]
        match_id = match_index(room_id, entry, len(ids))
        if match_id is not None:
            self._matches[match_id] = MatchRef(room_id, len(ids))
            ids.append(match_id)

    def append(self, meta: RoomMeta, entry: Entry) -> Pending:
        def write() -> None:
            self._check()
            entries = self._entries.get(meta.id)
            if entries is None or entries[-1].version != entry.version - 1:
                raise StorageConflict(f"room {meta.id}: version {entry.version} does not follow"
                                      " the record")
            old = self._meta[meta.id]
            entries.append(entry)
            self._index(meta.id, entry)
            self._meta[meta.id] = replace(
                meta, seen=old.seen, opened=old.opened or meta.opened,
                finished=meta.finished if meta.finished is not None else old.finished)
        return _done(write)

    def note(self, room_id: str, note: Note) -> Pending:
        def write() -> None:
            self._check()
            if room_id not in self._meta:
                raise StorageError(f"room {room_id}: no such room to add a note to")
            notes = self._notes.setdefault(room_id, [])
            notes.append(note)
            same = [i for i, n in enumerate(notes) if n.kind == note.kind]
            if len(same) > NOTES_KEPT:  # as the other backends: the last of each kind
                del notes[same[0]]
        return _done(write)

    async def load(self, room_id: str) -> StoredRoom | None:
        meta = self._meta.get(room_id)
        if meta is None:
            return None
        notes = self._notes.get(room_id, [])
        kept: list[Note] = []
        counts: dict[str, int] = {}
        for n in reversed(notes):
            counts[n.kind] = counts.get(n.kind, 0) + 1
            if counts[n.kind] <= NOTES_KEPT:
                kept.append(n)
        return StoredRoom(meta, tuple(self._entries[room_id]), tuple(reversed(kept)))

    async def find_match(self, match_id: str) -> MatchRef | None:
        return self._matches.get(match_id)

    async def since(self, room_id: str, version: int) -> list[Entry]:
        return [e for e in self._entries.get(room_id, ()) if e.version > version]

    async def touch(self, room_id: str, seen: float, opened: bool) -> None:
        meta = self._meta.get(room_id)
        if meta is not None:
            self._meta[room_id] = replace(meta, seen=seen, opened=meta.opened or opened)

    async def close_room(self, room_id: str) -> None:
        self._check()
        meta = self._meta.get(room_id)
        if meta is not None:
            self._close(meta, keep=meta.finished is not None)

    def _close(self, meta: RoomMeta, keep: bool) -> None:
        if keep:
            self._meta[meta.id] = replace(meta, closed=True)
        else:
            del self._meta[meta.id]
            del self._entries[meta.id]
            self._notes.pop(meta.id, None)
            for match_id in self._room_matches.pop(meta.id, []):
                self._matches.pop(match_id, None)

    async def rooms(self, closed: bool | None = False) -> list[RoomMeta]:
        return [m for m in self._meta.values() if closed is None or m.closed == closed]

    async def count_open(self) -> int:
        return sum(1 for m in self._meta.values() if not m.closed)

    async def purge(self, idle_before: float, finished_before: float,
                    skip: frozenset[str] = frozenset()) -> list[str]:
        self._check()
        done = []
        for meta in list(self._meta.values()):
            if meta.id in skip:
                continue
            recent = meta.finished is not None and meta.finished >= finished_before
            if meta.closed and not recent:
                self._close(meta, keep=False)
            elif not meta.closed and max(meta.updated, meta.seen) < idle_before:
                self._close(meta, keep=recent)
            else:
                continue
            done.append(meta.id)
        return done
