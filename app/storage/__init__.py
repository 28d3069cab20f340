"""Durable room storage: one interface (:mod:`app.storage.base`), several
backends. :func:`open_storage` picks the one the settings ask for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.storage.base import (
    Entry,
    MatchRef,
    Note,
    RoomMeta,
    Storage,
    StorageConflict,
    StorageDamaged,
    StorageError,
    StorageUnknown,
    StoredRoom,
)
from app.storage.memory import MemoryStorage
from app.storage.sqlite import SqliteStorage

if TYPE_CHECKING:
    from app.settings import Settings

__all__ = ["Entry", "MatchRef", "MemoryStorage", "Note", "RoomMeta", "SqliteStorage", "Storage",
           "StorageConflict", "StorageDamaged", "StorageError", "StorageUnknown", "StoredRoom",
           "make_storage"]


def make_storage(settings: Settings) -> Storage:
    """The storage ``settings`` ask for: Redis at ``settings.redis_url`` if
    set, else SQLite at ``settings.database``, or memory for ``":memory:"``
    (not opened yet: call ``open()``)."""
    if settings.redis_url:
        from app.storage.redis import RedisStorage

        return RedisStorage(settings.redis_url, settings.redis_prefix)
    if settings.database == ":memory:":
        return MemoryStorage()
    return SqliteStorage(settings.database)
