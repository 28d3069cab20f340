"""The storage interface: where rooms are kept durably.

A room is kept as its *record*: the actions that built it, in version order
(:mod:`app.table`), and a little *meta* that the server reads without
rebuilding the room (its game, phase and times). Appending an action is the
only write a move costs; a room is rebuilt by replaying its record.

Every backend also keeps an index of the room's *matches*: the id of each
``create`` and ``rematch`` action (:func:`app.table.match_id_of`) leads to
the room and the match's number in it (:meth:`Storage.find_match`), so that a
finished match's page (``/m/<id>``) finds its room without the room id. An
entry is indexed in the same write that stores its action, and forgotten
with its room.

Beside its record a room keeps *notes*: entries that do not change the game
and raise no version (a chat message, a player muting the spectators' chat).
Each note has a ``kind``; loading a room gives the last :data:`NOTES_KEPT`
notes of each kind.

Three backends implement :class:`Storage`: :mod:`app.storage.memory` (tests,
``CARDBOARD_DATABASE=:memory:``), :mod:`app.storage.sqlite` (the default) and,
with ``CARDBOARD_REDIS_URL``, :mod:`app.storage.redis`. Every method may raise
:class:`StorageError`; the room then refuses the action with the error code
``unavailable`` and applies nothing (``docs/protocol.md``).

Times are Unix seconds (``time.time()``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from app.table import Action, Phase, match_id_of

Pending = concurrent.futures.Future[None] | asyncio.Future[None]
"""A write under way: done once it is durable (or failed with
:class:`StorageError`). A backend that writes at once returns it done."""


class StorageError(Exception):
    """The storage could not do what was asked (a full disk, a lost
    connection, a damaged file). ``str()`` is a message for the log."""


class StorageConflict(StorageError):
    """An append whose version is not the next one of the room: another
    process (or a bug) has written that version already."""


class StorageDamaged(StorageError):
    """What the storage holds of a room cannot be read (a stored action or
    note that is not a JSON object): no retry will help, unlike the other
    errors. ``str()`` names the version or note."""


class StorageUnknown(StorageError):
    """A write whose outcome could not be learnt: it may or may not have
    been saved (Redis sent no answer, and could not be asked since). A
    write that was carried out after all is announced on the bus like any
    other, so the room catches up with it."""


@dataclass(frozen=True, slots=True)
class RoomMeta:
    """What the server knows of a stored room without rebuilding it.

    ``version`` and ``phase`` are those after the last action; ``updated`` is
    when the last action was stored; ``seen`` when a connection last opened or
    closed; ``opened`` whether anyone ever connected; ``finished`` when a match
    of the room last ended (``None`` if none has); ``closed`` whether the room
    is over for play (kept only as history); ``computer_only`` whether
    computer players hold every seat."""

    id: str
    game: str
    created: float
    updated: float
    seen: float
    version: int
    phase: Phase
    opened: bool = False
    finished: float | None = None
    closed: bool = False
    computer_only: bool = False


def compact_json(obj: dict[str, Any]) -> str:
    """A JSON object as compact text, UTF-8 characters kept, as the backends
    store it (an action is written at every move). orjson writes it, about a
    tenth of the time of the standard library's encoder; what orjson cannot
    write (an integer past 64 bits, a key that is not a string) the
    standard library does, so that everything writable is written."""
    try:
        return orjson.dumps(obj).decode()
    except TypeError:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def json_object(text: str, what: str) -> dict[str, Any]:
    """The JSON object stored as ``text``. Raises ``ValueError`` naming
    ``what`` if it is not one."""
    obj = json.loads(text)
    if not isinstance(obj, dict):
        raise ValueError(f"a stored {what} is not an object")
    return obj


@dataclass(frozen=True, slots=True)
class Entry:
    """One stored action: the ``version`` it produced, when (``at``) and the
    action itself."""

    version: int
    at: float
    action: Action

    def text(self) -> str:
        """The action as compact JSON."""
        return compact_json(self.action)

    @staticmethod
    def parse(version: int, at: float, text: str) -> Entry:
        """An entry from its stored JSON text. Raises :class:`StorageDamaged`
        if that is not a JSON object."""
        try:
            return Entry(int(version), float(at), json_object(text, "action"))
        except ValueError as exc:
            raise StorageDamaged(f"stored version {version} is damaged: {exc}") from None


NOTES_KEPT = 100
"""How many notes of each kind :meth:`Storage.load` gives back (the newest)."""


@dataclass(frozen=True, slots=True)
class Note:
    """One stored note of a room: its ``kind`` (``"chat"``, ``"mute"``), when
    (``at``) and its ``data`` (a JSON object)."""

    kind: str
    at: float
    data: dict[str, Any]

    def text(self) -> str:
        """The data as compact JSON."""
        return compact_json(self.data)

    @staticmethod
    def parse(kind: str, at: float, text: str) -> Note:
        """A note from its stored JSON text. Raises :class:`StorageDamaged`
        if that is not a JSON object."""
        try:
            return Note(str(kind), float(at), json_object(text, "note"))
        except ValueError as exc:
            raise StorageDamaged(f"a stored {kind} note is damaged: {exc}") from None


@dataclass(frozen=True, slots=True)
class MatchRef:
    """Where a match is kept: the ``room`` that played it and its ``number``
    among the room's matches (0 for the first, 1 after the first rematch, …)."""

    room: str
    number: int


def match_index(room_id: str, entry: Entry, number: int) -> str | None:
    """The match id under which a backend indexes ``entry`` of room
    ``room_id``, when ``number`` matches of the room are indexed already
    (``None`` for an action that begins no match)."""
    return match_id_of(room_id, entry.action, number)


@dataclass(frozen=True, slots=True)
class StoredRoom:
    """A room as stored: its meta, its record (entries in version order) and
    its notes (the last :data:`NOTES_KEPT` of each kind, oldest first)."""

    meta: RoomMeta
    entries: tuple[Entry, ...]
    notes: tuple[Note, ...] = ()


class Storage(Protocol):
    """Where rooms are kept. See the module docstring; all methods may raise
    :class:`StorageError`."""

    name: str
    """The backend's name for messages (``"sqlite"``, ``"memory"``, ``"redis"``)."""

    async def open(self) -> None:
        """Connect, check and migrate (at start). Raises :class:`StorageError`
        with a message for the person starting the server."""
        ...

    async def close(self) -> None:
        """Finish every write under way, then release the storage."""
        ...

    def create(self, meta: RoomMeta, first: Entry) -> Pending:
        """Start keeping a new room: its meta and its ``create`` entry
        (version 0). The write fails with :class:`StorageConflict` if the id
        is taken."""
        ...

    def append(self, meta: RoomMeta, entry: Entry) -> Pending:
        """Start adding ``entry`` (version ``meta.version``) to the room's
        record and updating its meta; the write is done once durable. It fails
        with :class:`StorageConflict` if that version is stored already or the
        previous one is missing (another process got there first). A backend
        that may send a write twice (Redis, after a time-out) takes the very
        same entry at its version as written already, not as a conflict."""
        ...

    def note(self, room_id: str, note: Note) -> Pending:
        """Start adding ``note`` to the room's notes; done once durable. It
        fails with :class:`StorageError` if no such room is kept."""
        ...

    async def load(self, room_id: str) -> StoredRoom | None:
        """The room's meta, whole record and last notes, or ``None`` if no
        such room is kept; a closed room (kept as history) is loaded too."""
        ...

    async def find_match(self, match_id: str) -> MatchRef | None:
        """Where the match with this id is kept (see the module docstring),
        or ``None`` if no kept room played it."""
        ...

    async def since(self, room_id: str, version: int) -> list[Entry]:
        """The room's entries after ``version``, in version order (empty if
        there are none, or no such room): what another process committed
        since this one last applied ``version``."""
        ...

    async def touch(self, room_id: str, seen: float, opened: bool) -> None:
        """Note that a connection opened or closed at ``seen`` (``opened``: one
        has opened at least once). Best effort: it may be written late."""
        ...

    async def close_room(self, room_id: str) -> None:
        """End a room for play: kept as history (``closed`` set) if a match of
        it has finished, else deleted with its record and notes."""
        ...

    async def rooms(self, closed: bool | None = False) -> list[RoomMeta]:
        """The meta of every room kept (only the open ones by default;
        ``closed=None`` for all)."""
        ...

    async def count_open(self) -> int:
        """How many rooms are kept open for play."""
        ...

    async def purge(self, idle_before: float, finished_before: float,
                    skip: frozenset[str] = frozenset()) -> list[str]:
        """Delete the open rooms nobody has used since ``idle_before`` that never
        finished a match, close (keep) the idle ones that did, and delete the
        closed rooms whose last match ended before ``finished_before``; ids in
        ``skip`` (rooms live in this process) are left alone. Returns the ids
        deleted or closed."""
        ...


def resolve(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    """Give ``future`` its ``result``, or ``error`` if not ``None``, unless it
    is done already (its waiter has given up)."""
    if future.done():
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)


def meta_json(meta: RoomMeta) -> dict[str, Any]:
    """``meta`` as a JSON object (for backends that store JSON)."""
    return {f: getattr(meta, f) for f in RoomMeta.__slots__}


def meta_from_json(data: dict[str, Any]) -> RoomMeta:
    """The :class:`RoomMeta` that :func:`meta_json` wrote."""
    return RoomMeta(**{f: data[f] for f in RoomMeta.__slots__ if f in data})
