"""The lobby: the games on offer, room creation (with computer players if
asked) and the idle-room sweep."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from app.bots import Bots, Thinker
from app.protocol import DEFAULT_LEVEL
from app.rooms import Room
from app.settings import Settings
from app.store import MemoryRoomStore, RoomStore
from engine.base import SEED_OPTION, OptionError
from engine.registry import get_game


class LobbyFull(Exception):
    """No room can be created: the server holds ``max_rooms`` already."""


class Lobby:
    """The server's rooms (``store``), the games on offer (``settings.games``)
    and the computer players (``bots``, thinking with ``thinker`` if given)."""

    def __init__(self, settings: Settings, store: RoomStore | None = None,
                 thinker: Thinker | None = None) -> None:
        self.settings = settings
        self.store: RoomStore = store if store is not None else MemoryRoomStore()
        self.bots = Bots(settings, self.store, thinker)

    def games(self) -> list[dict[str, Any]]:
        """The games on offer, as ``GET /api/games`` lists them: ``id``,
        ``title``, ``seats`` (with default options) and ``options`` (name →
        description, ``seed`` included)."""
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

    def create_room(self, game_id: str, raw_options: dict[str, Any],
                    bot_seats: str | Sequence[str] | None = None, bot_level: str = DEFAULT_LEVEL) -> Room:
        """A new room, kept in the store. ``bot_seats`` seats computer players
        of ``bot_level`` at once: ``"others"`` (every seat but the first, which
        is left for the creator), ``"all"`` or a list of seats.

        Raises ``KeyError`` for a game not on offer, ``OptionError`` for a bad
        option or seat, :class:`LobbyFull` beyond ``max_rooms``."""
        if not self.offers(game_id):
            raise KeyError(f"unknown game {game_id!r}; the games here are {', '.join(self.settings.games)}")
        if len(self.store) >= self.settings.max_rooms and not self._evict_unvisited():
            raise LobbyFull(f"the server already holds {self.settings.max_rooms} rooms;"
                            " try again later")
        room = Room.create(game_id, raw_options)
        while self.store.get(room.id) is not None:  # pragma: no cover - 96 random bits
            room = Room.create(game_id, raw_options)
        room.handover_seconds = self.settings.handover_seconds
        if bot_seats is not None:
            room.seat_computers(_bot_seats(room, bot_seats), bot_level)
        self.store.add(room)
        self.bots.poke(room)
        return room

    def _evict_unvisited(self) -> bool:
        """Free the oldest room that nobody ever opened, to make space for a new
        one (so a flood of created-but-unused rooms cannot lock everyone out).
        Returns False if every room has been opened."""
        unvisited = [r for r in map(self.store.get, self.store.ids())
                     if r is not None and not r.visited and not r.connections]
        if not unvisited:
            return False
        self.bots.free(min(unvisited, key=lambda r: r.idle_since or 0.0))
        return True

    async def sweep(self, now: float | None = None) -> list[str]:
        """Free every room that has had no connection for ``room_idle_hours``.
        Returns the ids freed. ``now`` is ``time.monotonic()`` by default."""
        now = time.monotonic() if now is None else now
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
        return freed


def _bot_seats(room: Room, seats: str | Sequence[str]) -> list[str]:
    """The seats ``"others"``, ``"all"`` or a list stand for in ``room``."""
    if seats == "others":
        return list(room.seats[1:])
    if seats == "all":
        return list(room.seats)
    if isinstance(seats, str):
        raise OptionError(f"bots.seats must be 'others', 'all' or a list of seats, not {seats[:20]!r}")
    return list(seats)
