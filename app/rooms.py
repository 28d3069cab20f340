"""A room: one match of one game, its seats, its connections and its version.

A :class:`Room` is the live, in-process half of a room: its connections, its
lock, who is connected to which seat, presence and idle times. The durable
half is its :class:`app.table.Table` (``room.table``), which only changes
through the **one commit point**:

    check  →  apply (a new table)  →  write (``journal.append``, durable)
      →  new version  →  tell the subscribers (every connection its own view,
      then ``on_commit``: the computer players)

Room actions (:meth:`Room.join`, :meth:`Room.move`, …) are synchronous: they
check, build the action and the table it makes, and hand both to
:meth:`Room._stage`. When the journal has already written the action (the
memory backend does so at once), the change is applied there and then; else
the caller awaits :meth:`Room.commit`, which waits for the write and then
applies it. A refused action raises :class:`RoomError` and changes nothing; a
write that fails raises ``unavailable`` and changes nothing either: nothing
is sent that was not stored. Callers hold ``room.lock`` from the check to the
end of the commit.

Connections are anything with a ``seat`` and a ``push(text)`` that queues a
frame for sending (:class:`Connection`); the websocket layer is in
:mod:`app.ws`.

Phase (``docs/protocol.md``): ``match_over`` once the match has ended, else
``waiting`` while a seat is free, else ``deal_over`` between deals, else
``playing``. The first deal is dealt at creation and starts when the last seat
is taken.

Computer players (:meth:`Room.add_bot`) hold seats like people do. The room
only records them; :mod:`app.bots` makes them think and act, through
:meth:`Room.computer_move` and :meth:`Room.computer_continue`, which run the
same checks as a person's ``move``, ``next_deal`` and ``rematch``; it also
plays the passes that are a person's only legal move (:meth:`Room.forced_pass`)
and starts the next deal once the table is ready (:meth:`Room.go_on_if_ready`).

Between deals the table goes on when it is ready (:meth:`Room.ready`): every
seated person has said so, except those away for :attr:`Room.ready_away_seconds`;
computer players are always ready. Each "ready" is an action of the table
(``app.table``), so a restart and every server process know it.

Chat messages and the spectators' mute are *notes* (:meth:`Room.chat`): they
pass through the same commit point, stored before they are sent, but change
no table and raise no version. Spectators (who watches, under which name) are
presence: a ``spectators`` frame tells everyone, at most every
:data:`PRESENCE_DELAY` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from app.limits import trim
from app.logs import get_logger
from app.patch import state_patch
from app.protocol import (
    CHAT_HISTORY,
    CHAT_RATE,
    CHAT_SECONDS,
    ChatMessage,
    FrameError,
    JoinedFrame,
    LogEntry,
    Phase,
    SpectatorsFrame,
    computer_like,
    dump,
    error_text,
    name_key,
)
from app.storage.base import (
    Entry,
    Note,
    Pending,
    RoomMeta,
    Storage,
    StorageConflict,
    StorageError,
    StorageUnknown,
    StoredRoom,
    resolve,
)
from app.storage.memory import MemoryStorage
from app.table import (
    AUTO_PASS,
    SPECTATOR_CHAT,
    Action,
    BadRecord,
    SeatHolder,
    Table,
    new_match_id,
    token_hash,
)
from engine.base import Game, IllegalMove, MalformedMove, MoveError
from engine.match import Match

log = get_logger(__name__)

RoomError = FrameError
"""A refused action: ``code`` and ``message`` as in the protocol."""

UNAVAILABLE = ("the server could not save this just now, so nothing was changed: try again in a"
               " moment")
UNKNOWN = ("the server could not confirm that this was saved: if it was, everyone will see it"
           " shortly; if not, nothing was changed and you may try again")

PASS = "pass"
"""The pass, in the notation of every game that has one (``docs/notation.md``)."""

PRESENCE_DELAY = 0.5
"""Seconds a change of the spectators waits before it is sent, so that a
page that reconnects and resumes its seat at once never shows as a spectator."""

SPECTATOR_NAMES = 20
"""The most spectator names a state or a ``spectators`` frame lists."""

BETWEEN_DEALS: tuple[Phase, ...] = ("deal_over", "match_over")

CONFLICT_RETRIES = 3
"""Times an action is judged again on a fresher table after another server
process committed the same version first (:class:`Conflict`)."""


class Conflict(RoomError):
    """The storage refused a commit because another server process had
    committed that version first (``StorageConflict``): the room is behind.
    :meth:`Room.act` catches up and judges the action again. ``version`` is
    the one the action was judged on, which the game has moved past."""

    def __init__(self, version: int) -> None:
        super().__init__("stale_version", f"the game moved on past version {version} just as this"
                         " arrived: here is the state now")


class Presence(Protocol):
    """Where a room reports who is connected, for the other server processes
    that serve it (:mod:`app.presence`; no such thing in one process). Each
    call is told, it never waits."""

    def attached(self, room: Room, conn: Connection) -> None:
        """``conn`` opened on ``room`` (as a spectator)."""
        ...

    def detached(self, room: Room, conn: Connection, seat: str | None) -> None:
        """``conn`` closed; it held ``seat`` (or none)."""
        ...

    def seated(self, room: Room, conn: Connection, seat: str) -> None:
        """``conn`` now holds ``seat`` (joined or resumed)."""
        ...

    def unseated(self, room: Room, conn: Connection, seat: str) -> None:
        """``conn`` no longer holds ``seat`` (it left, or the seat was freed)."""
        ...

    def named(self, room: Room, conn: Connection, name: str | None) -> None:
        """``conn`` now watches as ``name`` (``None``: with no name)."""
        ...


class Connection(Protocol):
    """One client of a room. ``seat`` is the seat it holds (``None`` for a
    spectator); ``push`` queues one frame of JSON text for it, in order,
    without waiting."""

    seat: str | None

    def push(self, text: str) -> None:
        """Queue ``text`` to be sent."""
        ...


@dataclass(frozen=True)
class Holder(SeatHolder):
    """Who holds a seat, as the live room sees it: the durable
    :class:`app.table.SeatHolder`, plus ``connection`` while a human is
    connected and ``away_since`` (monotonic seconds) while they are not. A
    computer player always counts as connected."""

    connection: Connection | None = None
    away_since: float | None = None

    @property
    def connected(self) -> bool:
        """True while a human holder has a connection, always for a computer."""
        return self.kind == "computer" or self.connection is not None


def new_room_id() -> str:
    """A fresh room id: 96 random bits, URL-safe (16 characters)."""
    return secrets.token_urlsafe(12)


def _seconds(n: float) -> str:
    """``n`` seconds in words, whole ones gone by: "1 second" (for 1.9),
    "0 seconds", "90 seconds"; a fraction below one is kept ("0.5 seconds")."""
    value = f"{n:g}" if 0 < n < 1 else str(int(n))
    return f"{value} second{'' if value == '1' else 's'}"


def new_token() -> str:
    """A fresh seat token: 192 random bits, URL-safe."""
    return secrets.token_urlsafe(24)


class Room:
    """A live room over its durable ``table``, writing to ``journal``.

    Create one with :meth:`create`, or :meth:`rebuild` for a stored one.
    Attributes besides the table's: ``connections``; ``lock``; ``idle_since``
    (monotonic time since when no connection is open, or ``None``);
    ``closed`` (set once the room is freed); ``visited`` (anyone ever
    connected); ``handover_seconds`` (how long a human must have been away,
    mid-deal, before their seat may be handed to a computer player;
    ``Settings.handover_seconds``); ``clock`` (monotonic seconds, for
    ``idle_since``, ``away_since`` and handing over: ``time.monotonic``
    unless the lobby gives its own); ``on_commit`` (called with the room
    after every committed change: the computer players' poke); ``presence``
    (told of connections, for other server processes, or ``None``); and,
    from those processes, ``remote_seats`` (seats whose holder is connected
    to another process), ``remote_watchers`` (connections open there) and
    ``remote_spectators`` (the name of each of those that holds no seat, or
    ``None``: it gave none).
    """

    def __init__(self, table: Table, journal: Storage, *, now: float | None = None) -> None:
        self.table = table
        self.journal = journal
        self.game: Game = table.game
        self.seats: tuple[str, ...] = table.seats
        self.sides = self.game.sides(self.options)
        self.connections: set[Connection] = set()
        self.seat_conn: dict[str, Connection] = {}
        self.away_since: dict[str, float] = {}
        self.lock = asyncio.Lock()
        self.clock: Callable[[], float] = time.monotonic
        self.idle_since: float | None = self.clock() if now is None else now
        self.closed = False
        self.visited = False
        self.handover_seconds = 120.0
        self.ready_away_seconds = 60.0
        self.on_commit: Callable[[Room], None] | None = None
        self.admit_computers: Callable[[Room, str | None], None] | None = None
        """Called (with the address key of whoever asks) before a computer
        player sits in this room while none plays in it: raises
        ``RoomError`` if the server's caps on rooms with computer players in
        use allow no more (``app.lobby.Lobby``)."""
        self.presence: Presence | None = None
        self.remote_seats: set[str] = set()
        self.remote_watchers = 0
        self.remote_spectators: tuple[str | None, ...] = ()
        self._pending: tuple[Pending, Table | None, Callable[[], None], bool] | None = None
        self._waiters: list[asyncio.Future[None]] = []
        self._watching = False
        self._texts_sent = (-1, 0)
        self._legal_of: object = None
        self._legal: dict[str, tuple[str, ...]] = {}
        """The legal moves by seat on the state ``_legal_of``: one dict,
        emptied for each new state (not a new one at every move)."""
        self._fresh: set[Connection] | None = None
        """Connections whose next state is to carry every sentence of the
        log (they have just resumed: docs/protocol.md, "log"); ``None`` for
        none (most of a room's life: no empty set kept per room)."""
        self._patch_bases: dict[Connection, str] = {}
        """Connection that takes patches -> the last state it was sent (with
        every sentence): the base of its next patch."""
        self._sides = [{"side": name, "seats": list(ss)} for name, ss in self.sides]
        self._ids_json = f'"room":{_encode(table.id)},"game":{_encode(table.game_id)},'
        """The room's id and game as a state frame writes them (they never change)."""
        self._results: tuple[object, object, str] = (None, None, "")
        """The ended deals and the current deal's outcome that
        :meth:`_results_text` last wrote, and what it wrote."""
        self._log_json: tuple[tuple[str, str, str, str] | None, int, str] = (None, 0, "")
        """The start of this deal's log as JSON, without sentences: its last
        entry, how many entries, and their JSON (:meth:`_log_text`)."""
        self.away_at: dict[str, float] = {}
        """Seat → when (Unix seconds) its human holder lost their connection."""
        self.left_names: dict[str, str] = {}
        """Free seat → the name of the person who gave it up."""
        self.watch_names: dict[Connection, str] = {}
        self.chat_log: list[ChatMessage] = []
        """The last :data:`CHAT_HISTORY` chat messages, oldest first
        (:meth:`keep_chat`; a list, as an empty deque is 600 bytes in every room)."""
        self.muted_by: str | None = None
        """The name of the player who muted the spectators' chat, or ``None``."""
        self._chat_times: dict[object, list[float]] = {}
        self._presence_sent: tuple[int, tuple[str, ...]] | None = None  # (count, names)
        self._spectators_framed: dict[str, Any] = {}  # the last state frames' "spectators"
        self._presence_timer: asyncio.TimerHandle | None = None

    @staticmethod
    def create(game_id: str, raw_options: Mapping[str, Any], *, room_id: str | None = None,
               journal: Storage | None = None, bots: Mapping[str, str] | None = None,
               deal: tuple[int, str] | None = None, now: float | None = None) -> Room:
        """A new room with deal 1 dealt, its creation written to ``journal``
        (a fresh :class:`MemoryStorage` if none): await :meth:`commit` before
        using it. ``bots`` seats computer players (seat → level); ``deal``
        (``(deal seed, starter)``) deals an earlier deal again as deal 1.
        Raises ``KeyError`` for an unknown game and ``OptionError`` for a bad
        option, seat or deal (messages name them). The match seed is the
        ``seed`` option, else 63 random bits; the match id is fresh."""
        journal = journal if journal is not None else MemoryStorage()
        at = time.time()
        action = Table.create_action(room_id or new_room_id(), game_id, raw_options,
                                     secrets.randbits(63), at, bots, deal=deal)
        table = Table.new(action)
        room = Room(table, journal, now=now)
        room._stage(table, action, lambda: None, at=at, first=True)
        return room

    @staticmethod
    def rebuild(stored: StoredRoom, journal: Storage, *, now: float | None = None) -> Room:
        """The live room of a stored record, every human disconnected (away
        since ``now``) until they resume. Raises ``app.table.BadRecord`` if the
        record does not rebuild a room. Who left a seat is rebuilt too."""
        table, left = Room._replay(stored)
        room = Room(table, journal, now=now)
        room.left_names = left
        room.visited = stored.meta.opened
        wall = time.time()
        for seat, h in table.holders:
            if h.kind == "human":
                room.mark_away(seat, room.idle_since or 0.0, wall)
        room.take_notes(stored.notes)
        return room

    # ---- the table ----------------------------------------------------------------------
    @property
    def id(self) -> str:
        """The room id."""
        return self.table.id

    @property
    def game_id(self) -> str:
        """The game's id."""
        return self.table.game_id

    @property
    def options(self) -> dict[str, Any]:
        """The checked options (no seed)."""
        return dict(self.table.options)

    @property
    def seed_option(self) -> int | None:
        """The ``seed`` room option, or ``None``."""
        return self.table.seed_option

    @property
    def match(self) -> Match:
        """The match in play."""
        return self.table.match

    @property
    def version(self) -> int:
        """Raised by one on every change to the game or the seating."""
        return self.table.version

    @property
    def deal_started(self) -> int:
        """The version at which the current deal was dealt."""
        return self.table.deal_started

    @property
    def rematches(self) -> int:
        """How many rematches so far."""
        return self.table.rematches

    @property
    def moved_at(self) -> dict[str, int]:
        """Seat → the version its last accepted move of this match produced."""
        return dict(self.table.moved_at)

    @property
    def log(self) -> list[LogEntry]:
        """This deal's moves with their sentences."""
        return [LogEntry(seat=s, move=m, text=t, by=b or None) for s, m, t, b in self.table.log]

    @property
    def holders(self) -> dict[str, Holder]:
        """Seat → :class:`Holder` for every held seat (free seats absent)."""
        return {seat: self._holder(seat, h) for seat, h in self.table.holders}

    def _holder(self, seat: str, h: SeatHolder) -> Holder:
        return Holder(h.name, h.token_hash, h.kind, h.level, self.seat_conn.get(seat),
                      self.away_since.get(seat))

    # ---- derived ------------------------------------------------------------------------
    @property
    def phase(self) -> Phase:
        """``match_over``, ``waiting``, ``deal_over`` or ``playing``."""
        return self.table.phase

    def free_seats(self) -> list[str]:
        """The free seats, in seat order."""
        held = {s for s, _ in self.table.holders}
        return [s for s in self.seats if s not in held]

    @property
    def watched(self) -> bool:
        """True while any connection (seated or spectator) is open, on this
        process or another."""
        return bool(self.connections) or self.remote_watchers > 0

    def connected(self, seat: str) -> bool:
        """True while the holder of ``seat`` is connected, to this process or
        another (a computer player is not a connection)."""
        return seat in self.seat_conn or seat in self.remote_seats

    @property
    def computer_only(self) -> bool:
        """True when every seat is held by a computer player (and no absent
        human has a claim on any of them)."""
        return self.table.computer_only

    def legal_moves(self, seat: str) -> tuple[str, ...]:
        """``seat``'s legal moves on the current state (the engine's
        ``legal_moves``), computed once per state and seat: the state frames
        and the forced-pass check both ask after every move."""
        state = self.match.state
        if self._legal_of is not state:
            self._legal_of = state
            self._legal.clear()
        moves = self._legal.get(seat)
        if moves is None:
            moves = self._legal[seat] = tuple(self.game.legal_moves(state, seat))
        return moves

    def computer_plays(self, seat: str) -> bool:
        """True if a computer player makes ``seat``'s moves now."""
        holder = self.table.holder(seat)
        return holder is not None and holder.computer_plays

    def may_hand_over(self, seat: str, now: float | None = None) -> bool:
        """True if ``seat`` may be handed to a computer player now: a deal is
        in play and its human holder has been disconnected for more than
        :attr:`handover_seconds` (``docs/protocol.md``, "Computer players")."""
        holder = self.table.holder(seat)
        if holder is None or holder.kind != "human" or holder.computer_plays:
            return False
        since = self.away_since.get(seat)
        if self.connected(seat) or since is None or self.phase != "playing":
            return False
        now = self.clock() if now is None else now
        return now - since > self.handover_seconds

    # ---- the commit point ---------------------------------------------------------------
    async def act(self, action: Callable[[], None], conn: Connection | None = None, *,
                  versioned: bool = True, fresh: bool = False) -> bool:
        """Run one room action (a call of :meth:`join`, :meth:`move`, …)
        through the commit point, under the room's lock. True if it was
        committed. A refusal (``RoomError``, ``unavailable`` included) is sent
        to ``conn`` with a fresh state and gives False; without ``conn`` it is
        raised. An action that another server process's commit overtook is
        judged again on the table that commit made; refused there, an action
        made on a version (``versioned``: a move, ``ready``, ``rematch`` …)
        is told ``stale_version`` (it came too late: a double click sent to
        two processes), one without (``join``, ``leave`` …) why that table
        refuses it (``seat_taken``, ``not_playing`` …). With ``fresh``, a room
        other processes share first reads what they committed: for an action
        that commits nothing when it is taken (``resume``), so that it is not
        judged on a table they have changed (a token given up or replaced)."""
        async with self.lock:
            if self._pending is not None:
                # The commit of an action whose caller was cancelled: let it
                # finish first. Its refusal, if any, was that action's.
                with contextlib.suppress(Exception):
                    await self.commit()
            if fresh and self.presence is not None:
                with contextlib.suppress(StorageError):  # (then judged on the table here)
                    await self.catch_up(suspect=False)
            conflict: Conflict | None = None
            for attempt in range(CONFLICT_RETRIES + 1):
                try:
                    action()
                    await self.commit()
                except Conflict as exc:
                    # Another process committed this version first: catch up
                    # and judge the action again on the table it made (so
                    # simultaneous moves of two seats both count).
                    self._pending = None
                    conflict = exc
                    if await self._caught_up() and attempt < CONFLICT_RETRIES:
                        continue
                    error: RoomError = exc
                except RoomError as exc:
                    self._pending = None
                    # Refused on the table another process made: the action
                    # came too late (a double click sent to two processes).
                    error = (conflict if versioned and conflict is not None and exc.code != "unavailable"
                             else exc)
                else:
                    return True
                try:
                    if conn is None:
                        raise error
                    self.refuse(conn, error)
                    return False
                finally:
                    # The error's traceback holds this frame: without these
                    # names the two are no cycle for the collector to find.
                    del error, conflict
            raise AssertionError("unreachable")  # pragma: no cover

    async def sync(self, version: int | None = None, *, check: bool = False) -> int:
        """Under the lock, after any commit in flight: :meth:`catch_up`, if
        the room is behind ``version`` (always when ``None``). What another
        server process's commit of ``version`` calls (:mod:`app.bus`). With
        ``check`` (the storage may have lost writes: Redis restarted), a
        storage behind the room is noticed too (see :meth:`catch_up`).
        Returns how many versions were applied; raises ``StorageError``."""
        async with self.lock:
            if self._pending is not None:
                with contextlib.suppress(Exception):
                    await self.commit()
            if self.closed or (version is not None and version <= self.version):
                return 0
            return await self.catch_up(suspect=version is not None or check)

    async def _caught_up(self) -> bool:
        """:meth:`catch_up`, False if that failed (the storage is unreachable)."""
        try:
            await self.catch_up()
        except StorageError as exc:
            log.error("room %s: cannot catch up with the storage: %s", self.id, exc)
            return False
        return not self.closed

    async def catch_up(self, suspect: bool = True) -> int:
        """Apply what other server processes committed since :attr:`version`,
        read from the storage, one version at a time as if committed here
        (each connection gets every version's state; ``on_commit`` is told).
        Call it under the lock. Returns how many versions were applied. If
        nothing is newer and ``suspect`` (the storage said there was), the
        whole record is read: if it is shorter than the room (a storage that
        lost its last writes) the room is rebuilt from it; if it is gone the
        room is marked closed and its connections are told
        (``no_such_room``). Raises ``StorageError``."""
        entries = await self.journal.since(self.id, self.version)
        if not entries and suspect:
            stored = await self.journal.load(self.id)
            if stored is None or stored.meta.closed:
                self.closed = True
                if self.connections:
                    log.error("room %s: the storage no longer holds it: closed", self.id)
                    gone = error_text("no_such_room", "this room is no longer kept on the server")
                    for conn in list(self.connections):
                        conn.push(gone)
                        # then closed (4404) where the connection can be
                        # (app.ws.WsConnection.end; break-it pass: the sockets
                        # stayed open on a dead room)
                        end = getattr(conn, "end", None)
                        if end is not None:
                            end()
            elif stored.entries and stored.entries[-1].version < self.version:
                log.error("room %s: the storage holds version %d, behind this room's %d: rebuilt from"
                          " the storage", self.id, stored.entries[-1].version, self.version)
                self.table, self.left_names = Room._replay(stored)
                self._after_remote()
                return 1
            return 0
        applied = 0
        for entry in entries:
            if entry.version <= self.version:
                continue
            if entry.version != self.version + 1:
                raise StorageError(f"room {self.id}: the stored record skips from version"
                                   f" {self.version} to {entry.version}")
            before = self.table
            try:
                self.table = self.table.apply(entry.action)
            except (BadRecord, ValueError) as exc:
                raise StorageError(f"room {self.id}: stored version {entry.version} does not apply:"
                                   f" {exc}") from exc
            applied += 1
            _follow_left(self.left_names, entry.action, before)
            self._after_remote(before)
        return applied

    @staticmethod
    def _replay(stored: StoredRoom) -> tuple[Table, dict[str, str]]:
        """The table a stored record builds, and who left which free seat
        (:attr:`left_names`). Raises ``app.table.BadRecord``."""
        left: dict[str, str] = {}
        actions = [e.action for e in stored.entries]
        table: Table | None = None
        for action, after in zip(actions, Table.replay_steps(actions), strict=True):
            if table is not None:
                _follow_left(left, action, table)
            table = after
        assert table is not None  # replay_steps refuses an empty record
        return table, left

    def _after_remote(self, before: Table | None = None) -> None:
        """The live side of a version committed elsewhere (on the table
        ``before`` it, if known): a connection here whose seat has been freed,
        or whose seat's token has changed (``new_token`` or a new holder),
        no longer holds it and is told ``replaced`` (break-it pass: a player
        resuming through a process that had not yet heard of a ``leave``, a
        ``remove_bot`` or a ``new_token`` was told ``joined``, then lost the
        seat without a word); then everyone's state and the computer
        players' poke, as after a commit here."""
        for seat, conn in list(self.seat_conn.items()):
            now = self.table.holder(seat)
            was = before.holder(seat) if before is not None else None
            if now is not None and (was is None or was.token_hash == now.token_hash):
                continue
            self._unsit(seat)
            conn.push(error_text("replaced", f"seat {seat} is no longer yours: it was freed, or given"
                                 " a new link, meanwhile; you are now watching as a spectator"))
        self.broadcast()
        if self.on_commit is not None:
            self.on_commit(self)

    def _stage(self, table: Table, action: Action, then: Callable[[], None], *,
               at: float | None = None, first: bool = False, quiet: bool = False) -> None:
        """Write ``action`` (which makes ``table``) to the journal, then apply
        it: at once if the journal has written it already, else in
        :meth:`commit`. ``then`` makes the live changes that go with it (who
        is connected where, frames for one connection) once it is applied.
        Raises ``unavailable`` if the write has failed already (unless
        ``quiet``: then the failure is only logged). Who left a seat is kept
        as for an action committed elsewhere (:func:`_follow_left`)."""
        at = time.time() if at is None else at
        meta = self._meta(table, at)
        entry = Entry(table.version, at, action)
        pending = self.journal.create(meta, entry) if first else self.journal.append(meta, entry)
        before = self.table

        def applied() -> None:
            _follow_left(self.left_names, action, before)
            then()

        self._pending = (pending, table, applied, quiet)
        if pending.done():
            self._settle()

    async def commit(self) -> None:
        """Finish the change staged by the last action, if any: wait until it
        is durable, then apply it and tell everyone. Raises ``unavailable``
        (nothing applied) if the write failed. The change is applied by a
        callback of the write itself, so if the caller is cancelled meanwhile
        it is applied all the same (and the next :meth:`act` waits for it):
        the room never falls behind what is stored."""
        if self._pending is None:
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(done)
        if not self._watching:
            self._watching = True
            asyncio.wrap_future(self._pending[0]).add_done_callback(self._written)
        await done

    def _written(self, write: asyncio.Future[None]) -> None:
        """The staged write is done (durable, or failed): apply it or not, then
        tell every waiter of :meth:`commit`."""
        if not write.cancelled():
            write.exception()  # seen: _settle reads the outcome
        # The list is kept, emptied: a new one every commit would live on
        # to the next, one more object for the garbage collector to walk.
        waiters = tuple(self._waiters)
        self._waiters.clear()
        self._watching = False
        error: RoomError | None = None
        try:
            self._settle()
        except RoomError as exc:
            error = exc
        for waiter in waiters:
            resolve(waiter, None, error)

    def _settle(self) -> None:
        assert self._pending is not None
        pending, table, then, quiet = self._pending
        self._pending = None
        error = (asyncio.CancelledError("the write was cancelled") if pending.cancelled()
                 else pending.exception())
        if error is not None:
            conflict = isinstance(error, StorageConflict)
            what = "a note" if table is None else f"version {table.version}"
            (log.info if conflict else log.error)("room %s: %s was not saved: %s", self.id, what, error)
            if quiet:
                self.broadcast()
                return
            if conflict and table is not None:
                raise Conflict(table.version - 1)
            raise RoomError("unavailable", UNKNOWN if isinstance(error, StorageUnknown) else UNAVAILABLE)
        if table is None:
            then()
            return
        self.table = table
        then()
        self.broadcast()
        if self.on_commit is not None:
            self.on_commit(self)

    def _meta(self, table: Table, at: float) -> RoomMeta:
        phase = table.phase
        return RoomMeta(table.id, table.game_id, table.created, at, at, table.version, phase,
                        opened=self.visited, finished=at if phase == "match_over" else None,
                        computer_only=table.computer_only)

    def _note(self, kind: str, data: dict[str, Any], then: Callable[[], None],
              at: float | None = None) -> None:
        """Write a note (no version, no table change) to the journal, then run
        ``then``: at once if the journal has written it already, else in
        :meth:`commit`. Raises ``unavailable`` if the write has failed already."""
        pending = self.journal.note(self.id, Note(kind, time.time() if at is None else at, data))
        self._pending = (pending, None, then, False)
        if pending.done():
            self._settle()

    def _apply(self, action: Action, then: Callable[[], None] = lambda: None) -> None:
        """Check that ``action`` applies to the table (the engine's verdict on a
        move), then stage it."""
        try:
            table = self.table.apply(action)
        except MalformedMove as exc:
            raise RoomError("malformed_move", str(exc)) from None
        except (IllegalMove, MoveError) as exc:
            raise RoomError("illegal_move", str(exc)) from None
        self._stage(table, action, then)

    # ---- frames -------------------------------------------------------------------------
    def state_frames(self, seats: set[str | None], texts_from: int = 0) -> dict[str | None, str]:
        """The state frame (``app.protocol.StateFrame``) as JSON text for each
        of ``seats`` (``None`` is a spectator). The shared part is built and
        encoded once; the engine's view and the legal moves once per seat.
        Log entries before ``texts_from`` leave out their sentence
        (``docs/protocol.md``, "log": a client keeps the sentences it was
        sent)."""
        table, game = self.table, self.game
        match = table.match
        phase = table.phase
        to_move = list(game.to_move(match.state)) if phase == "playing" else []
        secret_moves = game.info.secret_moves
        held = dict(table.holders)
        common: dict[str, Any] = {
            "title": game.info.title,
            "seats": [self._seat_view(s, held.get(s)) for s in self.seats],
            "sides": self._sides,
            "options": dict(table.options),
            "deal": match.deal_number,
            "totals": match.totals(),
            "match_winners": list(match.winners()),
            "seed": match.seed if match.over else None,
            "deals": game.deals_in_match(self.options),
            "ready": self.ready_view(),
            "spectators": (spectators := self.spectators_view()),
            "chat": self.chat_view(),
            "room_options": dict(self.table.room_options),
            "seeded": self.table.seeded,
            "match_id": self.table.match_id if match.over else None,
            "earlier": [{"number": e.number, "match_id": e.match_id, "totals": dict(e.totals),
                         "winners": list(e.winners)} for e in table.earlier],
        }
        self._spectators_framed = spectators
        shared = f"{_encode(common)[1:-1]},{self._results_text(match)}"
        if secret_moves:
            log = (_log_entries(table.log[:texts_from], sentences=False)
                   + _log_entries(table.log[texts_from:], sentences=True))
        else:
            shared += ',"log":' + self._log_text(texts_from)
        head = f'{{"type":"state","version":{table.version},{self._ids_json}'
        tail = f'"phase":"{phase}","to_move":{_encode(to_move)},'
        # Without hidden information every seat sees the same board.
        public = None if game.info.hidden_information else _encode(game.view(match.state, None))
        out: dict[str | None, str] = {}
        for seat in seats:
            legal = moves = "[]"
            if seat is not None and seat in to_move and not self.computer_plays(seat):
                names = list(self.legal_moves(seat))
                legal = _encode(names)
                moves = _encode(game.move_structures(match.state, seat, names))
            view = shared
            if secret_moves:
                view += ',"log":' + _encode(self._public_log(log, seat))
            board = public if public is not None else _encode(game.view(match.state, seat))
            you = _YOU.get(seat) or _you(seat)
            out[seat] = (f'{head}{you}{tail}"legal_moves":{legal},'
                         f'"moves":{moves},"view":{{{view},"board":{board}}}}}')
        return out

    def _results_text(self, match: Match) -> str:
        """A state frame's ``outcome`` (the current deal's, once over) and
        ``history`` (every ended deal's) as JSON text. They change only
        when a deal ends or the next is dealt, so the text is kept while
        the match's ended deals and the current deal's outcome are the
        same objects (a breakdown of scores is most of a frame's text, and
        was encoded again at every move)."""
        finished, outcome = match.finished, match.current.outcome
        was_finished, was_outcome, text = self._results
        if was_finished is finished and was_outcome is outcome:
            return text
        outcomes = [o.to_json() for o in match.outcomes]
        text = _encode({"outcome": outcomes[-1] if outcome is not None else None,
                        "history": [{"deal": i + 1, "outcome": o} for i, o in enumerate(outcomes)]})[1:-1]
        self._results = (finished, outcome, text)
        return text

    def _log_text(self, texts_from: int) -> str:
        """This deal's log as JSON text, as a state frame's ``log`` holds it:
        the entries before ``texts_from`` without their sentence, the others
        with it. The log only grows within a deal, so the first part is
        encoded once and kept, each later frame adding only the new entries
        (the whole log was encoded again at every move)."""
        log = self.table.log
        upto = min(texts_from, len(log))
        last, count, text = self._log_json
        if not (0 < count <= upto and log[count - 1] is last):
            count, text = 0, ""  # another deal, or a frame from further back
        if count < upto:
            more = _encode(_log_entries(log[count:upto], sentences=False))[1:-1]
            text = f"{text},{more}" if text else more
            self._log_json = (log[upto - 1], upto, text)
        rest = _encode(_log_entries(log[upto:], sentences=True))[1:-1]
        return f"[{text},{rest}]" if text and rest else f"[{text or rest}]"

    def _public_log(self, entries: list[dict[str, Any]], viewer: str | None) -> list[dict[str, Any]]:
        """This deal's log as ``viewer`` may see it: a move still secret from
        them (``Game.public_move`` gives ``None``) shows as ``null``; the
        sentences are written to be shown to everyone."""
        state, game = self.match.state, self.game
        out = []
        for e in entries:
            move = e["move"]
            shown = game.public_move(state, e["seat"], move, viewer) if move is not None else None
            out.append(e if shown == move else {**e, "move": shown})
        return out

    def _seat_view(self, seat: str, h: SeatHolder | None) -> dict[str, Any]:
        """A seat held by ``h`` (``None``: free) as ``app.protocol.SeatView``
        writes it."""
        if h is None:
            view: dict[str, Any] = {"seat": seat, "name": None, "kind": None, "connected": False}
            left = self.left_names.get(seat)
            if left is not None:
                view["left"] = left
            return view
        if h.level is not None:
            view = {"seat": seat, "name": self.table.computer_name(seat, h.level), "kind": "computer",
                    "connected": True, "level": h.level}
            if h.kind == "human":
                view["stand_in_for"] = h.name
            return view
        connected = self.connected(seat)
        view = {"seat": seat, "name": h.name, "kind": h.kind, "connected": connected}
        if connected:  # neither away nor to be handed over
            return view
        handover = self.may_hand_over(seat)
        if handover:
            view["handover"] = True
        if seat in self.away_at:
            view["away_since"] = self.away_at[seat]
            if not handover and self.phase == "playing":
                view["handover_at"] = self.away_at[seat] + self.handover_seconds
        return view

    def spectators_view(self) -> dict[str, Any]:
        """How many connections watch without a seat, and the names they gave
        (as ``app.protocol.SpectatorsView`` writes it). A name a seated player
        goes by, or one kept for computer players (``computer_like``), is
        left out (the spectator is counted, unnamed): "watching: Ann" beside
        Ann's seat read as Ann watching herself, after someone else was
        refused her name. Spectators connected to other processes count too
        (``remote_spectators``), and the names are sorted (by
        :func:`app.protocol.name_key`, then as written), so that every process
        lists the same."""
        watching = [c for c in self.connections if c.seat is None]
        names = [n for c in watching if (n := self.watch_names.get(c)) is not None]
        remote = self.remote_spectators
        if remote:
            names += [n for n in remote if n is not None]
        if names:  # most rooms have none: nothing more to do with every state
            seated = {name_key(h.name) for _, h in self.table.holders if h.name is not None}
            names = sorted((n for n in names if name_key(n) not in seated and not computer_like(n)),
                           key=lambda n: (name_key(n), n))
        return {"count": len(watching) + len(remote), "names": names[:SPECTATOR_NAMES]}

    def chat_view(self) -> dict[str, Any]:
        """Whether spectators may chat now (as ``app.protocol.ChatView``
        writes it)."""
        if not self.table.setting(SPECTATOR_CHAT):
            return {"spectators": "off"}
        if self.muted_by is not None:
            return {"spectators": "muted", "muted_by": self.muted_by}
        return {"spectators": "on"}

    def state_text(self, seat: str | None) -> str:
        """The state frame for one seat (or a spectator) as JSON text."""
        return self.state_frames({seat})[seat]

    def send_state(self, conn: Connection) -> None:
        """Queue a fresh state for one connection."""
        text = self.state_text(conn.seat)
        if conn in self._patch_bases:
            self._patch_bases[conn] = text
        conn.push(text)

    def take_patches(self, conn: Connection) -> None:
        """``conn`` asks for patch frames (``app.patch``) from now on: it is
        sent a full state at once, the base of the first patch."""
        self._patch_bases[conn] = ""
        self.send_state(conn)

    def _push_patch(self, conn: Connection, new: str) -> None:
        """Queue for ``conn``, a connection that takes patches, the patch from
        the last state it was sent to ``new`` (a state frame with every
        sentence), or ``new`` itself where that is no longer."""
        patch = state_patch(self._patch_bases[conn], new)
        self._patch_bases[conn] = new
        conn.push(new if patch is None else patch)

    def broadcast(self) -> None:
        """Queue the current state for every connection, each with its view.
        Every connection has had the sentences of the log entries that the
        last broadcast of this deal carried (or its first, full state), so
        only the new entries carry theirs."""
        key, sent = self._texts_sent
        deal = self.table.deal_started
        texts_from = sent if key == deal else 0
        frames = self.state_frames({c.seat for c in self.connections}, texts_from)
        self._texts_sent = (deal, len(self.table.log))
        # Connections that take patches are diffed against frames with every
        # sentence in (what they hold).
        bases = self._patch_bases
        patched = {c.seat for c in bases}
        full = frames if texts_from == 0 or not patched else self.state_frames(patched)
        fresh, self._fresh = self._fresh or (), None
        for conn in self.connections:
            if conn in bases:
                self._push_patch(conn, full[conn.seat])
            elif texts_from and conn in fresh:
                conn.push(self.state_text(conn.seat))
            else:
                conn.push(frames[conn.seat])
        self._presence_sent = _presence_key(self._spectators_framed)

    def spectators_changed(self) -> None:
        """The spectators have changed: send a ``spectators`` frame to every
        connection in :data:`PRESENCE_DELAY` seconds, unless a state has told
        them by then (at once outside an event loop)."""
        if self._presence_timer is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._send_presence()
            return
        self._presence_timer = loop.call_later(PRESENCE_DELAY, self._send_presence)

    def _send_presence(self) -> None:
        self._presence_timer = None
        view = self.spectators_view()
        key = _presence_key(view)
        if key == self._presence_sent or self.closed:
            return
        self._presence_sent = key
        text = dump(SpectatorsFrame(**view))
        for conn in self.connections:
            conn.push(text)

    def refuse(self, conn: Connection, error: RoomError) -> None:
        """Tell ``conn`` why its action was refused, then send it a fresh state."""
        conn.push(error_text(error.code, error.message))
        self.send_state(conn)

    # ---- connections (presence: no version) ---------------------------------------------
    def attach(self, conn: Connection) -> None:
        """A new connection, as a spectator: it receives the state at once,
        then the room's last :data:`app.protocol.CHAT_HISTORY` chat messages;
        the others learn of a new spectator."""
        conn.seat = None
        self.connections.add(conn)
        self.visited = True
        self.idle_since = None
        if self.presence is not None:
            self.presence.attached(self, conn)
        self.send_state(conn)
        for message in self.chat_log:
            conn.push(dump(message))
        # The next spectators frame goes out even if everyone else was last
        # told the same: this connection's state may say otherwise (a page
        # reloaded within PRESENCE_DELAY, its name not yet given again, was
        # left showing no name).
        self._presence_sent = None
        self.spectators_changed()

    def detach(self, conn: Connection, now: float | None = None) -> None:
        """A connection has closed. If it held a seat, the holder shows as
        disconnected (a presence change: no version bump)."""
        self.connections.discard(conn)
        self.watch_names.pop(conn, None)
        self._chat_times.pop(conn, None)
        self._patch_bases.pop(conn, None)
        if self._fresh:
            self._fresh.discard(conn)
        seat, conn.seat = conn.seat, None
        held = seat is not None and self.seat_conn.get(seat) is conn
        if self.presence is not None:
            self.presence.detached(self, conn, seat if held else None)
        if seat is not None and held:
            del self.seat_conn[seat]
            self.mark_away(seat, self.clock() if now is None else now, time.time())
            self.broadcast()
        else:
            self.spectators_changed()
        if not self.connections:
            self.idle_since = self.clock() if now is None else now

    def watch(self, conn: Connection, name: str | None) -> None:
        """``conn`` shows as ``name`` (already cleaned) while it watches, or
        with no name (``None``). Presence: no version."""
        if self.watch_names.get(conn) == name:
            return  # nothing to tell (a page may say its name again and again)
        if name is None:
            self.watch_names.pop(conn, None)
        else:
            self.watch_names[conn] = name
        if self.presence is not None:
            self.presence.named(self, conn, name)
        self.spectators_changed()

    def mark_away(self, seat: str, since: float, at: float) -> None:
        """``seat``'s person lost their connection at ``since`` (:attr:`clock`
        seconds: for the handover) and ``at`` (Unix seconds: for the views)."""
        self.away_since[seat] = since
        self.away_at[seat] = at

    def mark_back(self, seat: str) -> None:
        """``seat`` is no longer away (taken again, freed, or held elsewhere)."""
        self.away_since.pop(seat, None)
        self.away_at.pop(seat, None)

    def _sit(self, conn: Connection, seat: str) -> None:
        """``conn`` is connected to ``seat`` (live only)."""
        self.seat_conn[seat] = conn
        self.mark_back(seat)
        conn.seat = seat
        if self.presence is not None:
            self.presence.seated(self, conn, seat)

    def _unsit(self, seat: str) -> None:
        conn = self.seat_conn.pop(seat, None)
        if conn is not None:
            conn.seat = None
            if self.presence is not None:
                self.presence.unseated(self, conn, seat)
        self.mark_back(seat)

    # ---- seating ------------------------------------------------------------------------
    def join(self, conn: Connection, seat: str | None, name: str) -> None:
        """``conn`` takes ``seat`` (any free seat when ``None``) under ``name``
        (already cleaned). Sends it ``joined`` with its token, then the state to
        everyone.

        Raises ``bad_seat``, ``seat_taken``, ``room_full`` or ``already_seated``,
        checked in that order.
        """
        free = self.free_seats()
        if seat is not None:
            self._check_seat(seat)
            holder = self.table.holder(seat)
            if holder is not None and self.seat_conn.get(seat) is not conn:
                extra = " The room is full: you are watching as a spectator." if not free else ""
                raise RoomError("seat_taken", f"seat {seat} is taken by {holder.name}.{extra}")
        elif not free:
            raise RoomError("room_full", "the room is full: you are watching as a spectator")
        if conn.seat is not None:
            raise RoomError("already_seated", f"you already sit at {conn.seat}")
        same = name_key(name)
        taken = next((h.name for _, h in self.table.holders
                      if h.name is not None and name_key(h.name) == same), None)
        if taken is not None:  # named as the table shows it ("Ann", not "Ａｎｎ")
            raise RoomError("name_taken", f"someone at this table is already called {taken}: choose"
                            " another name, so that the table can tell you apart")
        if computer_like(name):
            raise RoomError("name_taken", "a name that ends in a level in brackets, like"
                            " “(strong)”, is kept for the computer players: choose another name,"
                            " so that nobody takes you for one")
        seat = seat if seat is not None else free[0]
        token = new_token()

        def then() -> None:
            self._sit(conn, seat)
            conn.push(dump(JoinedFrame(seat=seat, token=token)))

        self._apply({"t": "join", "seat": seat, "name": name, "token_hash": token_hash(token)}, then)

    def new_token(self, conn: Connection) -> None:
        """``conn``'s seat gets a new token, sent to ``conn`` alone in a
        ``joined`` frame; the old token seats nobody any more (a new seat
        link). A change of the seating: version + 1. Raises ``not_seated``."""
        seat = self._seated(conn)
        token = new_token()
        self._apply({"t": "new_token", "seat": seat, "token_hash": token_hash(token)},
                    lambda: conn.push(dump(JoinedFrame(seat=seat, token=token))))

    def seat_of_token(self, token: str) -> str | None:
        """The seat ``token`` holds in this room, or ``None``."""
        wanted = token_hash(token)
        return next(
            (s for s, h in self.table.holders
             if h.token_hash is not None and secrets.compare_digest(h.token_hash, wanted)),
            None,
        )

    def resume(self, conn: Connection, token: str) -> None:
        """``conn`` takes back the seat ``token`` was issued for. A connection
        that held it before gets ``replaced`` and becomes a spectator. Not a
        seating change, so the version stays, unless a computer player was
        holding the seat for its human: the human gets it back at once
        (version + 1), or after the computer's move if the seat is awaited.

        Raises ``already_seated`` (``conn`` holds another seat) or ``bad_token``.
        """
        seat = self.seat_of_token(token)
        if conn.seat is not None and conn.seat != seat:
            raise RoomError("already_seated", f"you already sit at {conn.seat}")
        if seat is None:
            raise RoomError("bad_token", "this token holds no seat in this room")
        joined = dump(JoinedFrame(seat=seat, token=token))
        old = self.seat_conn.get(seat)
        if old is conn:
            conn.push(joined)
            self.send_state(conn)
            return
        if old is not None:
            old.seat = None
            self.spectators_changed()
            old.push(error_text("replaced", f"seat {seat} was taken back by another connection;"
                                " you are now watching as a spectator"))
        self._sit(conn, seat)
        self.idle_since = None
        conn.push(joined)
        back = self._hand_back_seats()
        if back or old is None:  # the state that tells of it carries every sentence
            self._fresh = {*(self._fresh or ()), conn}
        if back:
            # Saved like any action; if it cannot be saved the seat is still
            # theirs, and the hand-back is tried again after the next move.
            action = {"t": "hand_back", "seats": back}
            self._stage(self.table.apply(action), action, lambda: None, quiet=True)
        elif old is not None:
            self.send_state(old)
            self.send_state(conn)
        else:
            self.broadcast()

    def _hand_back_seats(self) -> list[str]:
        """The seats a computer player holds for a human who is connected again,
        unless the seat is awaited right now (the computer player finishes that
        turn first: "they get their seat back at the next turn")."""
        awaited = set(self.game.to_move(self.match.state)) if self.phase == "playing" else set()
        return [seat for seat, h in self.table.holders
                if h.stand_in and seat in self.seat_conn and seat not in awaited]

    def leave(self, conn: Connection) -> None:
        """``conn`` gives up its seat. Raises ``not_seated``, or ``not_playing``
        during a deal."""
        seat = self._seated(conn)
        if self.phase == "playing":
            raise RoomError("not_playing", "you cannot leave during a deal: the seat is needed until"
                            " the deal ends")
        self._apply({"t": "leave", "seat": seat}, lambda: self._unsit(seat))

    def add_bot(self, conn: Connection, seat: str, level: str, now: float | None = None) -> None:
        """A computer player of ``level`` takes ``seat`` for ``conn``'s table:
        a free seat, or a human's seat that :meth:`may_hand_over` (the human
        keeps their token and gets the seat back when they resume). Version + 1.

        Raises ``bad_seat``, ``seat_taken`` (held, and not to be handed over),
        ``not_seated`` (``conn`` holds no seat) or ``rate_limited`` (no
        computer player plays here yet, and the server may have no more rooms
        with computer players in use: :attr:`admit_computers`), checked in
        that order.
        """
        self._check_seat(seat)
        holder = self.table.holder(seat)
        if holder is not None and not self.may_hand_over(seat, now):
            raise RoomError("seat_taken", self._why_taken(seat, holder, now))
        self._seated(conn)
        if self.admit_computers is not None and not any(h.computer_plays for _, h in self.table.holders):
            self.admit_computers(self, getattr(conn, "address", None))
        self._apply({"t": "add_bot", "seat": seat, "level": level})

    def _why_taken(self, seat: str, holder: SeatHolder, now: float | None) -> str:
        if holder.computer_plays:
            return f"seat {seat} is already played by a computer player"
        if self.connected(seat):
            return f"seat {seat} is taken by {holder.name}"
        if self.phase != "playing":
            return (f"seat {seat} is held by {holder.name}, who is away; a seat can be handed to a"
                    " computer player only in the middle of a deal")
        now = self.clock() if now is None else now
        since = self.away_since.get(seat)
        away = 0.0 if since is None else now - since
        return (f"seat {seat} is held by {holder.name}, who has been away for {_seconds(away)}; the"
                f" seat can be handed to a computer player after {_seconds(self.handover_seconds)}")

    def remove_bot(self, conn: Connection, seat: str) -> None:
        """Free the seat of the computer player at ``seat`` (a computer standing
        in for an absent human frees it too: that human's token is void).
        Version + 1.

        Raises ``bad_seat`` (no such seat, or no computer player there),
        ``seat_taken`` (a human plays it), ``not_seated`` or ``not_playing``
        (during a deal), checked in that order.
        """
        self._check_seat(seat)
        holder = self.table.holder(seat)
        if holder is None:
            raise RoomError("bad_seat", f"seat {seat} is free: there is no computer player to remove")
        if not holder.computer_plays:
            raise RoomError("seat_taken", f"seat {seat} is held by {holder.name}, not a computer player")
        self._seated(conn)
        if self.phase == "playing":
            raise RoomError("not_playing", "a computer player cannot leave during a deal: remove it"
                            " when the deal is over")
        self._apply({"t": "remove_bot", "seat": seat}, lambda: self._unsit(seat))

    def _check_seat(self, seat: str) -> None:
        if seat not in self.seats:
            raise RoomError("bad_seat", f"there is no seat {seat[:20]!r}: the seats are "
                            + ", ".join(self.seats))

    def _seated(self, conn: Connection) -> str:
        if conn.seat is None:
            raise RoomError("not_seated", "you are watching: join a seat first")
        return conn.seat

    def _not_playing(self, wanted: Phase) -> RoomError:
        phase = self.phase
        if phase == "waiting":
            return RoomError("not_playing", "waiting for every seat to be taken")
        what = {"playing": "a deal is in play", "deal_over": "the deal is over",
                "match_over": "the match is over"}[phase]
        doing = {"playing": "moves", "deal_over": "the next deal",
                 "match_over": "a rematch"}[wanted]
        return RoomError("not_playing", f"{what}: this is not the time for {doing}")

    # ---- play ---------------------------------------------------------------------------
    def move(self, conn: Connection, move: str, version: int) -> None:
        """``conn``'s seat plays ``move``, made on the state of ``version``.

        On the current version the move is judged on its legality. On an older
        one it is accepted only if it is legal now, the current deal had begun
        by then, and the seat has had no move accepted since; otherwise
        ``stale_version`` (``docs/protocol.md``, "Versions and simultaneous
        moves").

        A pass on a version from before the server's pass for the seat, when
        that pass is the seat's last move (``docs/protocol.md``, "Forced
        passes": the person pressed Pass just as the server played it), is
        that very move, played already: ``conn`` is sent the state, and
        nothing else happens.

        Raises ``not_seated``, ``not_playing``, ``not_your_turn`` (also while
        a computer player finishes the turn of a seat handed back to ``conn``),
        ``stale_version``, ``malformed_move`` or ``illegal_move``, in that order.
        """
        seat = self._seated(conn)
        if move == PASS and version < self.version and self.table.passed_for(seat, version):
            self.send_state(conn)
            return
        self._judge(seat, move, version, computer=False)

    def must_pass(self, seat: str) -> bool:
        """True if the server should pass for ``seat`` now: a deal is in play,
        the room passes for its players (the ``auto_pass`` option), a person
        plays ``seat``, it is awaited, and a pass is its only legal move."""
        holder = self.table.holder(seat)
        return (self.phase == "playing" and self.table.setting(AUTO_PASS)
                and holder is not None and holder.kind == "human" and not holder.computer_plays
                and seat in self.game.to_move(self.match.state)
                and self.legal_moves(seat) == (PASS,))

    def forced_pass(self, seat: str, version: int) -> None:
        """The server passes for the person at ``seat``, whose only legal move
        on the state of ``version`` is a pass: the checks and effects of
        :meth:`move`, and the log says that the server played it.

        Raises ``not_playing`` if the room does not pass for its players,
        ``not_seated`` if no person plays ``seat``, ``illegal_move`` if the
        seat has another move, then as :meth:`move`.
        """
        if not self.table.setting(AUTO_PASS):
            raise RoomError("not_playing", "this room does not pass for its players")
        holder = self.table.holder(seat)
        if holder is None or holder.kind != "human" or holder.computer_plays:
            raise RoomError("not_seated", f"no person plays seat {seat}")
        if (self.phase == "playing" and seat in self.game.to_move(self.match.state)
                and not self.must_pass(seat)):
            raise RoomError("illegal_move", f"seat {seat} has a move other than a pass")
        self._judge(seat, PASS, version, computer=False, forced=True)

    def computer_move(self, seat: str, move: str, version: int) -> None:
        """The computer player at ``seat`` plays ``move``, chosen on the state of
        ``version``: exactly the checks and effects of :meth:`move`.

        Raises ``not_seated`` (no computer player plays ``seat``), then as
        :meth:`move`.
        """
        if not self.computer_plays(seat):
            raise RoomError("not_seated", f"no computer player plays seat {seat}")
        self._judge(seat, move, version, computer=True)

    def _judge(self, seat: str, move: str, version: int, computer: bool,
               forced: bool = False) -> None:
        if self.phase != "playing":
            raise self._not_playing("playing")
        awaited = self.game.to_move(self.match.state)
        if seat not in awaited:
            raise RoomError("not_your_turn", f"it is {' and '.join(awaited)}'s turn, not yours")
        if self.computer_plays(seat) != computer:
            raise RoomError("not_your_turn", "a computer player is finishing this turn for you: your"
                            " seat is yours again from the next turn")
        stale_message = (
            f"that move was made on version {version}, but the game has moved on to version"
            f" {self.version}: here is the state now" if version < self.version else
            f"that move names version {version}, which the game has not reached: it is at version"
            f" {self.version}, here is the state now")
        if version != self.version and (
                version > self.version or version < self.deal_started
                or self.table.last_move_of(seat) > version):
            raise RoomError("stale_version", stale_message)
        extra = {"forced": True} if forced else {}
        try:
            table = self._play(seat, move, extra)
        except RoomError:
            if version != self.version:
                raise RoomError("stale_version", stale_message) from None
            raise
        back = [s for s, h in table.holders
                if h.stand_in and self.connected(s)
                and (table.phase != "playing" or s not in self.game.to_move(table.match.state))]
        action = {"t": "move", "seat": seat, "move": move, "hand_back": back, **extra}
        self._stage(table.hand_back(back), action, lambda: None)

    def _play(self, seat: str, move: str, extra: Mapping[str, Any]) -> Table:
        try:
            return self.table.apply({"t": "move", "seat": seat, "move": move, **extra})
        except MalformedMove as exc:
            raise RoomError("malformed_move", str(exc)) from None
        except (IllegalMove, MoveError) as exc:
            raise RoomError("illegal_move", str(exc)) from None
        except Exception:
            log.exception("the engine failed on move %r by %s in room %s", move[:40], seat, self.id)
            raise RoomError("malformed_move", "this move could not be read") from None

    # ---- between deals ------------------------------------------------------------------
    def _ready_marks(self) -> set[str]:
        """The seats whose people have said they are ready, between this deal
        and the next (``Table.ready``: forgotten once a deal or a match is
        dealt)."""
        return set(self.table.ready)

    def _readiness(self, marks: set[str], now: float | None = None
                   ) -> tuple[list[str], list[str], list[str]]:
        """The held seats as ``(ready, missing, away)`` given ``marks``
        (see :class:`app.protocol.ReadyView`)."""
        now = self.clock() if now is None else now
        ready: list[str] = []
        missing: list[str] = []
        away: list[str] = []
        for seat, h in self.table.holders:
            if h.computer_plays or seat in marks:
                ready.append(seat)
                continue
            since = self.away_since.get(seat)
            gone = (not self.connected(seat) and since is not None
                    and now - since >= self.ready_away_seconds)
            (away if gone else missing).append(seat)
        return ready, missing, away

    def ready_view(self, now: float | None = None) -> dict[str, Any] | None:
        """Who is ready for the next deal or match, between deals (as
        ``app.protocol.ReadyView`` writes it); else ``None``."""
        if self.phase not in BETWEEN_DEALS:
            return None
        ready, missing, away = self._readiness(self._ready_marks(), now)
        return {"ready": ready, "missing": missing, "away": away, "wait_away": self.ready_away_seconds}

    def all_ready(self, marks: set[str] | None = None, now: float | None = None) -> bool:
        """True if the table may go on now (between deals): at least one
        person has said they are ready (given ``marks``, by default those
        said), and every other person has too, or has been away for
        :attr:`ready_away_seconds`; and no seat is free (after the match a
        seat someone left stays ``match_over``: the one who takes it presses
        too, as between deals; break-it pass: one press dealt a new match
        with a seat empty, and the newcomer was dealt in unasked)."""
        if self.phase not in BETWEEN_DEALS or len(self.table.holders) < len(self.seats):
            return False
        marks = self._ready_marks() if marks is None else marks
        _, missing, _ = self._readiness(marks, now)
        people = {s for s, h in self.table.holders if not h.computer_plays}
        return not missing and bool(people & marks)

    def ready(self, conn: Connection, version: int) -> None:
        """``conn``'s seat is ready to go on, on the state of ``version``: a
        ``ready`` action (version + 1), or, when that makes the table ready
        (:meth:`all_ready`), the next deal (or the next match in
        ``match_over``) at once instead. Saying it again changes nothing and
        sends ``conn`` the state.

        ``version`` may be any version since the deal ended (others' presses
        and seating changes raise it meanwhile: the press was made on this
        break's result).

        A press made during the break just over (a double click, or two
        players pressing at once) that arrives once the next deal has begun
        has had its effect: ``conn`` is sent the state, not an error.

        Raises ``not_seated``, ``not_playing`` (not between deals) or
        ``stale_version``, in that order."""
        seat = self._seated(conn)
        if self.phase not in BETWEEN_DEALS:
            table = self.table
            if self.phase == "playing" and table.ended_at <= version < table.deal_started:
                self.send_state(conn)
                return
            raise self._not_playing("deal_over")
        if not self.table.ended_at <= version <= self.version:
            self._check_current(version)
        marks = self._ready_marks()
        if seat in marks or self.computer_plays(seat):
            self.send_state(conn)
        elif self.all_ready(marks | {seat}):
            self._go_on(self.version)
        else:
            self._apply({"t": "ready", "seat": seat})

    def go_on_if_ready(self, version: int | None = None, announce: bool = False) -> None:
        """Deal the next deal (or match) if the table is ready on the state of
        ``version`` (the current one if ``None``); else, with ``announce``,
        send everyone the state (someone has been away long enough to be
        left out). Never raises a refusal for a table that is not ready."""
        if version is not None and version != self.version:
            return
        if self.all_ready():
            self._go_on(self.version)
        elif announce and self.phase in BETWEEN_DEALS:
            self.broadcast()

    def _go_on(self, version: int) -> None:
        if self.phase == "match_over":
            self._rematch(version)
        else:
            self._next_deal(version)

    def next_deal(self, conn: Connection, version: int) -> None:
        """``conn``'s seat deals the next deal at once, without the ready
        step: ``next_deal`` as ``shared/PROTOCOL.md`` defines it, for clients
        that do not know ``ready`` (the room page sends ``ready``). Raises
        ``not_seated``, ``not_playing`` (not ``deal_over``) or
        ``stale_version`` (``version`` is not current)."""
        self._seated(conn)
        self._next_deal(version)

    def computer_continue(self, version: int) -> None:
        """A computer player presses "Next deal" (``deal_over``) or "Rematch"
        (``match_over``) on the state of ``version``, with the checks of
        :meth:`next_deal` and :meth:`rematch`. Raises ``not_seated`` unless a
        computer player holds a seat, then ``not_playing`` or ``stale_version``."""
        if not any(h.computer_plays for _, h in self.table.holders):
            raise RoomError("not_seated", "no computer player sits in this room")
        if self.phase == "match_over":
            self._rematch(version)
        else:
            self._next_deal(version)

    def _next_deal(self, version: int) -> None:
        if self.phase != "deal_over":
            raise self._not_playing("deal_over")
        self._check_current(version)
        self._apply({"t": "next_deal"})

    def rematch(self, conn: Connection, version: int) -> None:
        """``conn``'s seat starts a new match with the same seats at once,
        without the ready step (``shared/PROTOCOL.md``, as :meth:`next_deal`).
        The new match is dealt from a fresh random seed (never derived from a
        seed already shown, even in a seeded room). Raises ``not_seated``,
        ``not_playing`` (not ``match_over``) or ``stale_version``."""
        self._seated(conn)
        self._rematch(version)

    def _rematch(self, version: int) -> None:
        if self.phase != "match_over":
            raise self._not_playing("match_over")
        self._check_current(version)
        # Always a fresh random seed: the seed of the match just ended is shown
        # to everyone, so nothing derived from it may deal the next one.
        self._apply({"t": "rematch", "seed": secrets.randbits(63), "match": new_match_id(),
                     "began": time.time()})

    # ---- chat -------------------------------------------------------------------------
    def keep_chat(self, message: ChatMessage) -> bool:
        """Add ``message`` to :attr:`chat_log`, which keeps the last
        :data:`CHAT_HISTORY` (the oldest goes), and send it to every
        connection; False (nothing done) if it is kept already (read back
        from the storage first, :meth:`take_notes`)."""
        if message in self.chat_log:
            return False
        self.chat_log.append(message)
        if len(self.chat_log) > CHAT_HISTORY:
            del self.chat_log[0]
        frame = dump(message)
        for c in self.connections:
            c.push(frame)
        return True

    def take_notes(self, notes: Iterable[Note]) -> None:
        """Bring the chat and the spectators' mute up to the room's stored
        ``notes`` (oldest first), some of which another server process may
        have written (``app.bus``, ``"n {room}"``): each of the last
        :data:`CHAT_HISTORY` chat messages not kept yet is kept and sent to
        every connection (:meth:`keep_chat`); a changed mute is sent to
        everyone as the state."""
        chats = [n for n in notes if n.kind == "chat"][-CHAT_HISTORY:]
        mutes = [n for n in notes if n.kind == "mute"]
        kept = [self.keep_chat(ChatMessage(sender=note.data.get("from"), seat=note.data.get("seat"),
                                           text=str(note.data.get("text", "")), at=note.at))
                for note in chats]
        if any(kept):  # another process's message may be older than one kept here
            self.chat_log.sort(key=lambda m: m.at)
        if mutes:
            by = mutes[-1].data.get("by")
            muted_by = None if by is None else str(by)
            if muted_by != self.muted_by:
                self.muted_by = muted_by
                if self.connections:
                    self.broadcast()

    def chat(self, conn: Connection, text: str, now: float | None = None) -> None:
        """``conn`` writes ``text`` (already cleaned, ``app.protocol.clean_chat``)
        in the room's chat: stored as a note, then sent to every connection as
        a ``chat`` frame. No version.

        Raises ``rate_limited`` (more than :data:`app.protocol.CHAT_RATE`
        messages in :data:`app.protocol.CHAT_SECONDS` from this seat, or this
        spectator), then for a spectator ``not_seated`` (the room's
        ``spectator_chat`` option is off) or ``muted`` (a player has muted the
        spectators)."""
        now = self.clock() if now is None else now
        seat = conn.seat
        times = self._chat_times.setdefault(conn if seat is None else seat, [])
        trim(times, now, CHAT_SECONDS)
        if len(times) >= CHAT_RATE:
            raise RoomError("rate_limited", f"at most {CHAT_RATE} chat messages in any"
                            f" {CHAT_SECONDS:g} seconds: wait a moment")
        if seat is None:
            if not self.table.setting(SPECTATOR_CHAT):
                raise RoomError("not_seated", "in this room only the players write in the chat;"
                                " spectators read it")
            if self.muted_by is not None:
                raise RoomError("muted", f"{self.muted_by} has muted the spectators' chat")
            sender = self.watch_names.get(conn)
        else:
            holder = self.table.holder(seat)
            sender = holder.name if holder is not None else None
        times.append(now)
        at = round(time.time(), 3)
        message = ChatMessage(sender=sender, seat=seat, text=text, at=at)

        def then() -> None:
            self.keep_chat(message)

        self._note("chat", {"from": sender, "seat": seat, "text": text}, then, at=at)

    def mute_spectators(self, conn: Connection, mute: bool) -> None:
        """A seated player mutes (``mute``) or unmutes the spectators' chat,
        for the whole room: stored as a note, and everyone gets the state
        (same version). Asking for what is already so just sends ``conn`` the
        state. Raises ``not_seated``."""
        seat = self._seated(conn)
        if (self.muted_by is not None) == mute:
            self.send_state(conn)
            return
        holder = self.table.holder(seat)
        by = (holder.name if holder is not None else seat) if mute else None

        def then() -> None:
            self.muted_by = by
            self.broadcast()

        self._note("mute", {"by": by, "seat": seat}, then)

    def _check_current(self, version: int) -> None:
        if version != self.version:
            raise RoomError("stale_version", f"that was asked on version {version}, but the room is at"
                            f" version {self.version}: here is the state now")


def _follow_left(left: dict[str, str], action: Action, before: Table) -> None:
    """Keep ``left`` (free seat → the name of who gave it up) with ``action``
    committed on ``before``: a ``leave`` names who gave the seat up; a
    ``join`` or ``add_bot`` on the seat forgets it."""
    seat = action.get("seat")
    if not isinstance(seat, str):
        return
    if action.get("t") == "leave":
        holder = before.holder(seat)
        left[seat] = holder.name if holder is not None else seat
    elif action.get("t") in ("join", "add_bot"):
        left.pop(seat, None)


def _log_entries(entries: tuple[tuple[str, str, str, str], ...], sentences: bool
                 ) -> list[dict[str, str]]:
    """Log entries (seat, move, sentence, by) as a state frame's ``log``
    writes them: with their sentence and who made the move (``by``, when
    known), or with neither (``docs/protocol.md``, "log")."""
    if sentences:
        return [{"seat": s, "move": m, "text": t, "by": b} if b else {"seat": s, "move": m, "text": t}
                for s, m, t, b in entries]
    return [{"seat": s, "move": m} for s, m, _, _ in entries]


_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_LATIN1 = re.compile(r"[\x80-\xff]")

_LATIN1_LEADS = (b"\xc2", b"\xc3")
"""The UTF-8 lead bytes of U+0080 to U+00FF, which Python's
``backslashreplace`` writes as ``\\xNN``, not as JSON does."""

_ASTRAL_LEADS = (b"\xf0", b"\xf1", b"\xf2", b"\xf3", b"\xf4")
"""The UTF-8 lead bytes of U+10000 and beyond, which ``backslashreplace``
writes as ``\\UNNNNNNNN``, not as JSON does (a surrogate pair)."""


def _escape(found: re.Match[str]) -> str:
    """A character outside ASCII as a JSON escape (two, a surrogate pair,
    beyond the Basic Multilingual Plane)."""
    code = ord(found.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 | code >> 10:04x}\\u{0xDC00 | code & 0x3FF:04x}"


def _encode(obj: Any) -> str:
    """Compact JSON text in ASCII, every other character escaped (orjson:
    about ten times as fast as the standard library's encoder on a state
    frame). A frame is joined from several such texts, then encoded as
    UTF-8 once per connection: one character outside ASCII (a suit symbol
    in a log sentence) would make Python keep the whole frame at two bytes
    a character, and that join and encoding cost three times as much."""
    data = orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS)
    if data.isascii():
        return data.decode("ascii")
    text = data.decode()
    if any(lead in data for lead in _ASTRAL_LEADS):
        return _NON_ASCII.sub(_escape, text)
    if any(lead in data for lead in _LATIN1_LEADS):
        # A few distinct characters at most (the × of a score's breakdown),
        # each replaced throughout by its escape.
        for char in set(_LATIN1.findall(text)):
            text = text.replace(char, f"\\u{ord(char):04x}")
    # Characters from U+0100 to U+FFFF (an en dash, the suit symbols):
    # Python's own escapes of those are JSON's, and four times as quick.
    return text.encode("ascii", "backslashreplace").decode("ascii")


_YOU: dict[str | None, str] = {None: '"you":null,'}
"""A state frame's ``you`` for each seat met so far (the games' seat names)."""


def _you(seat: str | None) -> str:
    """``seat`` as a state frame's ``you``, kept in :data:`_YOU`."""
    text = _YOU[seat] = f'"you":{_encode(seat)},'
    return text


def _presence_key(view: dict[str, Any]) -> tuple[int, tuple[str, ...]]:
    """What a spectators view says, as a tuple of strings and a number: what
    a room keeps of the last one it sent, to compare with the next (a
    tuple of those is no object for the garbage collector to walk, a dict
    and a list would be)."""
    return view["count"], tuple(view["names"])
