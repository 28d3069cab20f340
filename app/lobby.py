"""The lobby: the games on offer, room creation (with computer players if
asked), finding a room (live in this process, or rebuilt from storage), and
the sweep that frees idle rooms.

Rooms live in two places: the durable ``storage`` (:mod:`app.storage`) keeps
every room's record; ``store`` holds the rooms this process has loaded, each
with its connections and lock. A room is loaded on first use (a page, a
socket, a computer player's turn), so a server with many rooms in its
database starts at once.

Several server processes may serve the same rooms from one Redis: ``bus``
(:mod:`app.bus`) keeps the rooms loaded here up to date with what the others
commit, shares presence, computer players' claims and the room creation
limit between them.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from app.bots import Bots, Thinker
from app.bus import make_bus
from app.limits import address_key
from app.logs import get_logger
from app.protocol import DEFAULT_LEVEL, FrameError
from app.rooms import Room, RoomError
from app.settings import Settings
from app.storage import Storage, StorageDamaged, StorageError, StoredRoom, make_storage
from app.store import MemoryRoomStore, RoomStore
from app.table import ROOM_OPTIONS, BadRecord, Table, check_room_options, computer_seats
from engine.base import SEED_OPTION
from engine.registry import GAMES, get_game

log = get_logger(__name__)

EVICT_AGE = 300.0
"""Seconds a room is protected from eviction after its creation, opened or not."""

ROOM_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")
"""What a room id looks like; anything else is no room, without a look-up."""

COMPUTERS_RETRY = 60.0
"""Seconds a client refused a room with computer players is told to wait."""


class LobbyFull(Exception):
    """No room can be created: the server holds ``max_rooms`` already."""


class TooManyRooms(Exception):
    """This client address has created rooms too fast; ``retry_after`` is in
    seconds."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Unavailable(Exception):
    """The storage cannot be used just now."""


class ComputersBusy(Exception):
    """No room with computer players can be created now: this client address
    (``per_address``: answered 429) or the whole server (503) already has as
    many of them in use as it may; ``retry_after`` is in seconds."""

    def __init__(self, message: str, per_address: bool, retry_after: float = COMPUTERS_RETRY) -> None:
        super().__init__(message)
        self.per_address = per_address
        self.retry_after = retry_after


class CreationLimiter:
    """Room creation per client address, as a token bucket: ``burst`` rooms at
    once, then one every ``3600 / per_hour`` seconds. Addresses are forgotten
    once their bucket is full again."""

    def __init__(self, burst: int, per_hour: float) -> None:
        self.burst = burst
        self.rate = per_hour / 3600.0
        self._buckets: dict[str, tuple[float, float]] = {}

    def take(self, address: str, now: float) -> float:
        """Take one room for ``address``; 0 if allowed, else the seconds to
        wait before the next one is."""
        tokens, then = self._buckets.get(address, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - then) * self.rate)
        if tokens < 1.0:
            self._buckets[address] = (tokens, now)
            return (1.0 - tokens) / self.rate if self.rate > 0 else float("inf")
        self._buckets[address] = (tokens - 1.0, now)
        if len(self._buckets) > 10_000:
            self._forget(now)
        return 0.0

    def give_back(self, address: str) -> None:
        """Return the room taken for ``address`` when none was made after all
        (the server was full, or the storage failed)."""
        if address in self._buckets:
            tokens, then = self._buckets[address]
            self._buckets[address] = (min(float(self.burst), tokens + 1.0), then)

    def _forget(self, now: float) -> None:
        full = [a for a, (t, then) in self._buckets.items()
                if t + (now - then) * self.rate >= self.burst]
        for address in full:
            del self._buckets[address]


class Lobby:
    """The server's rooms: ``storage`` (durable; by default the one the
    settings name), ``store`` (the rooms loaded in this process), ``bus``
    (the other processes sharing the storage, if any), the games on offer
    (``settings.games``) and the computer players (``bots``, thinking with
    ``thinker`` if given). ``clock`` (monotonic seconds,
    ``time.monotonic`` by default; see :class:`app.bots.Bots` for its
    ``sleep``) keeps the rooms' and the computer players' time: idle and
    away times, handing over, pauses."""

    def __init__(self, settings: Settings, storage: Storage | None = None,
                 thinker: Thinker | None = None, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self.storage: Storage = storage if storage is not None else make_storage(settings)
        self.store: RoomStore = MemoryRoomStore()
        self.clock = clock
        self.bus = make_bus(settings, self.storage)
        self.bots = Bots(settings, self.store, thinker, self._close_stored, self.bus, clock=clock)
        self.limiter = CreationLimiter(settings.room_create_burst, settings.room_create_per_hour)
        self._creators: dict[str, str] = {}
        """Room id → the client address (``app.limits.address_key``) that
        created it with computer players, while it is loaded."""
        self._starting: dict[str | None, int] = {}
        """Address key → rooms with computer players it is creating now."""
        self._making = 0
        """Rooms this process is making and has not stored yet (:meth:`_create`)."""
        self._counting = asyncio.Lock()
        self._loading: dict[str, asyncio.Future[Room | None]] = {}
        self.wall = time.time
        """The wall clock (Unix seconds) for room ages; tests replace it."""

    # ---- start and stop -----------------------------------------------------------------
    async def open(self) -> None:
        """Open the storage (raises ``StorageError`` with a message for the
        person starting the server), then load, in the background, the rooms
        whose computer players were playing a deal among themselves."""
        await self.storage.open()
        await self.bus.open(self)
        asyncio.get_running_loop().create_task(self._resume_computers())

    async def _resume_computers(self) -> None:
        try:
            metas = await self.storage.rooms()
        except StorageError as exc:
            log.error("cannot list the stored rooms: %s", exc)
            return
        for meta in metas:
            if meta.computer_only and meta.phase == "playing":
                await self.room(meta.id)

    async def close(self) -> None:
        """Stop the computer players, then finish every write and close the
        storage (server shutdown)."""
        await self.bots.close()
        await self.bus.close()
        await self.storage.close()

    # ---- games --------------------------------------------------------------------------
    def games(self) -> list[dict[str, Any]]:
        """The games on offer, as ``GET /api/games`` lists them: ``id``,
        ``title``, ``seats`` (with default options) and ``options`` (name →
        description, ``seed`` and the settings of rooms of the game,
        :data:`app.table.ROOM_OPTIONS`, included)."""
        return [self.game_info(g) for g in self.settings.games]

    def game_info(self, game_id: str) -> dict[str, Any]:
        """One game's entry of :meth:`games`: ``id``, ``title``, ``seats`` and
        ``options``, then what the game declares of itself
        (``engine.base.GameInfo.traits``: players, hidden information,
        simultaneous and secret moves, layout, board module, deal noun).
        Raises ``KeyError`` if unknown."""
        game = get_game(game_id)
        options = {o.name: o.description for o in game.info.options}
        options[SEED_OPTION.name] = SEED_OPTION.description
        for option in ROOM_OPTIONS:
            if option.offered(game):
                options[option.name] = option.description
        return {
            "id": game.info.id,
            "title": game.info.title,
            "seats": list(game.seats(game.check_options({}))),
            "options": options,
            **game.info.traits(),
        }

    def offers(self, game_id: str) -> bool:
        """True if ``game_id`` is on offer here."""
        return game_id in self.settings.games

    # ---- rooms --------------------------------------------------------------------------
    async def create_room(self, game_id: str, raw_options: dict[str, Any],
                          bot_seats: str | Sequence[str] | None = None, bot_level: str = DEFAULT_LEVEL,
                          client: str | None = None, deal: tuple[int, str] | None = None,
                          bot_levels: Mapping[str, str] | None = None) -> Room:
        """A new room, stored before it is returned. ``bot_seats`` seats
        computer players of ``bot_level`` at once: ``"others"`` (every seat
        but the first, which is left for the creator), ``"all"`` or a list of
        seats; ``bot_levels`` gives some of them another level (seat → level).
        ``client`` is the creator's address, for the per-address limits.
        ``deal`` (``(deal seed, starter)``) deals an earlier deal again as
        deal 1 ("Play this deal again").

        Raises ``KeyError`` for a game not on offer, ``OptionError`` for a bad
        option, seat or deal, :class:`ComputersBusy` when ``client`` or the server
        has ``bot_rooms_per_address`` or ``bot_rooms`` rooms with computer
        players in use (:meth:`computer_rooms`), :class:`TooManyRooms` when ``client`` creates
        too fast, :class:`LobbyFull` beyond ``max_rooms``,
        :class:`Unavailable` if the storage fails."""
        if not self.offers(game_id):
            what = "is not played on this server" if game_id in GAMES else "is not a game"
            raise KeyError(f"{game_id!r} {what}; the games here are {', '.join(self.settings.games)}")
        game = get_game(game_id)
        # Checked before anything is counted: a refused request uses up no
        # part of the address's allowance.
        options, _, _ = check_room_options(game, raw_options)
        bots = None
        if bot_seats is not None:
            bots = computer_seats(game.seats(options), bot_seats, bot_level, bot_levels)
        if deal is not None:
            Table.create_action("-", game_id, raw_options, 0, 0.0, deal=deal)
        creator = address_key(client) if client is not None else None
        if bots is not None:
            self._check_computers(creator)
            # Counted from the check on, with no wait between: requests at
            # once cannot all pass it (the wait for the creation limit is a
            # round trip to Redis).
            self._starting[creator] = self._starting.get(creator, 0) + 1
        try:
            if client is not None:
                try:
                    shared = await self.bus.creation_wait(client)
                except StorageError as exc:
                    raise Unavailable(str(exc)) from None
                wait = self.limiter.take(client, time.monotonic()) if shared is None else shared
                if wait > 0:
                    raise TooManyRooms(f"this address has created many rooms in a short time; try"
                                       f" again in {wait:.0f} seconds", wait)
            try:
                room = await self._create(game_id, raw_options, bots, deal)
            except (LobbyFull, Unavailable):
                if client is not None:  # no room made: the allowance is not used up
                    await self._refund(client)
                raise
        finally:
            if bots is not None:
                self._starting[creator] -= 1
                if not self._starting[creator]:
                    del self._starting[creator]
        if bots is not None and creator is not None:
            self._creators[room.id] = creator
        self._add(room)
        self.bots.poke(room)
        return room

    async def _refund(self, client: str) -> None:
        """Give ``client`` back the room creation it was charged for (the
        shared limit's with Redis, else this process's)."""
        try:
            shared = await self.bus.creation_refund(client)
        except StorageError as exc:
            log.warning("could not give back a room creation to %s: %s", client, exc)
            return
        if not shared:
            self.limiter.give_back(client)

    async def _create(self, game_id: str, raw_options: dict[str, Any], bots: dict[str, str] | None,
                      deal: tuple[int, str] | None) -> Room:
        """The room made and stored, within ``max_rooms``: the open rooms in
        storage and those this process is making count (requests at once
        cannot all pass the count), and with several processes a room made
        past the limit because another made one at the same moment is closed
        again (:class:`LobbyFull`).
        Raises :class:`Unavailable` if the storage fails."""
        limit = self.settings.max_rooms
        async with self._counting:  # one count at a time, each then holding its place at once
            try:
                full = await self.storage.count_open() + self._making >= limit and not await self._evict()
            except StorageError as exc:
                raise Unavailable(str(exc)) from None
            if full:
                raise LobbyFull(f"the server already holds {limit} rooms; try again later")
            self._making += 1
        try:
            room = Room.create(game_id, raw_options, journal=self.storage, bots=bots, deal=deal,
                               now=self.clock())
            await room.commit()
            # With several processes (a shared presence), another may have
            # made one at the same moment; one process counted it all above.
            if self.bus.presence is not None and await self.storage.count_open() > limit:
                await self.storage.close_room(room.id)
                raise LobbyFull(f"the server already holds {limit} rooms; try again later")
        except StorageError as exc:
            raise Unavailable(str(exc)) from None
        except FrameError as exc:
            raise Unavailable(exc.message) from None
        finally:
            self._making -= 1
        return room

    def computer_rooms(self) -> dict[str | None, int]:
        """How many loaded rooms have computer players in use, by the address
        that created them (``None``: rooms loaded from storage, or given
        computer players over the websocket); the sum is the server's. In
        use: their computer players may think now or soon, because they hold
        every seat and a deal is in play (the room plays it out; between
        deals nobody watching, it only waits to be freed), or someone is connected,
        or nobody has opened the room yet and it was created within
        :data:`EVICT_AGE` (rooms being created count too). A room of people
        who have all left is not counted: its computer players think no
        more; nor is one nobody opened in its first minutes (break-it pass:
        such rooms held the caps for the 24 hours until the idle sweep)."""
        counts = dict(self._starting)
        fresh = self.wall() - EVICT_AGE
        for room_id in self.store.ids():
            room = self.store.get(room_id)
            if room is None or room.closed or not any(h.computer_plays for _, h in room.table.holders):
                continue
            unopened = not room.visited and room.table.created > fresh
            if (room.computer_only and room.phase == "playing") or room.watched or unopened:
                creator = self._creators.get(room_id)
                counts[creator] = counts.get(creator, 0) + 1
        for room_id in [r for r in self._creators if self.store.get(r) is None]:
            del self._creators[room_id]
        return counts

    def _check_computers(self, creator: str | None) -> None:
        """Raise :class:`ComputersBusy` if ``creator`` (an address key) or the
        whole server may not have one more room with computer players in use."""
        counts = self.computer_rooms()
        per_address, overall = self.settings.bot_rooms_per_address, self.settings.bot_rooms
        if creator is not None and counts.get(creator, 0) >= per_address:
            raise ComputersBusy(
                f"this address already has {_rooms(per_address)} with computer players in use (being"
                " played or watched, or just made and not opened yet); close the page of one of them,"
                " or wait for a room of computer players to finish its deal, then try again",
                per_address=True)
        if sum(counts.values()) >= overall:
            raise ComputersBusy(
                f"the server's computer players are all busy ({_rooms(overall)} with computer players"
                f" {'is' if overall == 1 else 'are'} in use); try again in a few minutes, or play against"
                " people", per_address=False)

    def _admit_computers(self, room: Room, address: str | None) -> None:
        """A computer player is to sit in ``room``, where none plays yet, at
        the request of ``address`` (an address key): the same caps as for a
        room created with computer players (:meth:`_check_computers`),
        refused as ``rate_limited``; the room then counts as that address's."""
        try:
            self._check_computers(address)
        except ComputersBusy as exc:
            raise RoomError("rate_limited", str(exc)) from None
        if address is not None:
            self._creators[room.id] = address

    def _add(self, room: Room) -> None:
        room.handover_seconds = self.settings.handover_seconds
        room.ready_away_seconds = self.settings.ready_away_seconds
        room.clock = self.clock
        room.on_commit = self.bots.poke
        room.admit_computers = self._admit_computers
        room.presence = self.bus.presence
        self.store.add(room)

    async def _evict(self) -> bool:
        """Free the oldest room that nobody ever opened and that is older than
        :data:`EVICT_AGE`, to make space for a new one (so a flood of
        created-but-unused rooms cannot lock everyone out). False if there is
        none."""
        cutoff = self.wall() - EVICT_AGE
        unopened = [m for m in await self.storage.rooms() if not m.opened and m.created < cutoff]
        for meta in sorted(unopened, key=lambda m: m.created):
            live = self.store.get(meta.id)
            if live is not None and (live.visited or live.connections):
                continue
            if live is not None:
                self.bots.free(live)
            await self.storage.close_room(meta.id)
            return True
        return False

    async def room(self, room_id: str) -> Room | None:
        """The room with this id, loaded from storage if this process has not
        loaded it yet; ``None`` if there is no such room or it is closed.
        Raises :class:`Unavailable` if the storage fails."""
        live = self.store.get(room_id)
        if live is not None:
            return None if live.closed else live
        if not ROOM_ID.fullmatch(room_id):
            return None
        loading = self._loading.get(room_id)
        if loading is None:
            loading = self._loading[room_id] = asyncio.ensure_future(self._load(room_id))
            loading.add_done_callback(lambda _: self._loading.pop(room_id, None))
        return await asyncio.shield(loading)

    async def stored(self, room_id: str) -> StoredRoom | None:
        """What the storage keeps of room ``room_id``, or ``None`` if nothing,
        or if that is damaged (no retry would read it: the log says why).
        Raises :class:`Unavailable` if the storage fails."""
        try:
            return await self.storage.load(room_id)
        except StorageDamaged as exc:
            log.error("room %s: its stored record cannot be read: %s", room_id, exc)
            return None
        except StorageError as exc:
            raise Unavailable(str(exc)) from None

    async def _load(self, room_id: str) -> Room | None:
        stored = await self.stored(room_id)
        if stored is None or stored.meta.closed:
            return None
        try:
            # In a thread: a room of a long history takes seconds to replay
            # (250,000 versions: about 5 s), which on the event loop would
            # hold up every room of the server (break-it pass).
            room = await asyncio.to_thread(Room.rebuild, stored, self.storage, now=self.clock())
        except BadRecord as exc:
            log.error("room %s cannot be rebuilt from its record: %s", room_id, exc)
            return None
        self._add(room)
        await self.bus.loaded(room)
        self.bots.poke(room)
        return room

    def touch(self, room: Room) -> None:
        """Note in storage that a connection to ``room`` opened or closed now."""
        task = asyncio.get_running_loop().create_task(
            self.storage.touch(room.id, time.time(), room.visited))
        task.add_done_callback(_quiet)

    def _close_stored(self, room_id: str) -> None:
        """A room was freed (``Bots.free``): end it in storage too, kept as
        history if a match of it finished."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        loop.create_task(self.storage.close_room(room_id)).add_done_callback(_quiet)

    async def sweep(self, now: float | None = None, wall: float | None = None) -> list[str]:
        """Free every loaded room that has had no connection for
        ``room_idle_hours`` (``now``: the lobby's clock by default), and in
        storage every room unused that long (``wall``: ``time.time()``),
        keeping finished matches ``keep_days``. Returns the ids freed."""
        now = self.clock() if now is None else now
        wall = time.time() if wall is None else wall
        limit = self.settings.room_idle_seconds
        freed = []
        for room_id in self.store.ids():
            room = self.store.get(room_id)
            if room is None or room.idle_since is None or now - room.idle_since < limit:
                continue
            async with room.lock:
                if room.connections or room.idle_since is None or now - room.idle_since < limit:
                    continue
                self.bots.free(room)
                freed.append(room_id)
        live = frozenset(self.store.ids())
        try:
            freed += await self.storage.purge(wall - limit, wall - self.settings.keep_days * 86400.0,
                                              live)
        except StorageError as exc:
            log.error("the idle sweep could not reach the storage: %s", exc)
        return freed


def _quiet(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("a background storage write failed: %s", task.exception())


def _rooms(n: int) -> str:
    """``n`` rooms, in words: "1 room", "2 rooms"."""
    return f"{n:,} room" if n == 1 else f"{n:,} rooms"
