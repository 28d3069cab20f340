"""The rooms this process has loaded. :class:`RoomStore` is the interface;
:class:`MemoryRoomStore` keeps them in a dict. What survives a restart is the
storage's (``app.storage``): the lobby loads a room from there the first time
it is asked for it here (``Lobby.room``) and frees it after
``CARDBOARD_ROOM_IDLE_HOURS`` without a connection (``Lobby.sweep``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from app.rooms import Room


class RoomStore(Protocol):
    """A registry of rooms by id."""

    def get(self, room_id: str) -> Room | None:
        """The room with this id, or ``None``."""
        ...

    def add(self, room: Room) -> None:
        """Keep ``room`` under ``room.id`` (replacing any room of that id)."""
        ...

    def remove(self, room_id: str) -> None:
        """Forget the room with this id; no error if there is none."""
        ...

    def ids(self) -> list[str]:
        """The ids of every room kept."""
        ...

    def __len__(self) -> int:
        """How many rooms are kept."""
        ...


class MemoryRoomStore:
    """Rooms in a dict, lost when the process ends."""

    def __init__(self) -> None:
        self._rooms: dict[str, Room] = {}

    def get(self, room_id: str) -> Room | None:
        return self._rooms.get(room_id)

    def add(self, room: Room) -> None:
        self._rooms[room.id] = room

    def remove(self, room_id: str) -> None:
        self._rooms.pop(room_id, None)

    def ids(self) -> list[str]:
        return list(self._rooms)

    def __len__(self) -> int:
        return len(self._rooms)
