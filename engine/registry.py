"""The games by id. ``GAMES[id]`` is the stateless :class:`engine.base.Game`."""

from __future__ import annotations

from engine.base import Game
from engine.getstuck import GetStuck, GetStuckFour
from engine.romeo import RomeoAndJuliet
from engine.stucco import Stucco
from engine.suitors import Suitors

GAMES: dict[str, Game] = {}


def register(game: Game) -> None:
    """Add a game under its ``info.id``. Raises ``ValueError`` on a duplicate id."""
    if game.info.id in GAMES:
        raise ValueError(f"game {game.info.id!r} is registered twice")
    GAMES[game.info.id] = game


def get_game(game_id: str) -> Game:
    """The game with this id. Raises ``KeyError`` naming an unknown id."""
    try:
        return GAMES[game_id]
    except KeyError:
        raise KeyError(f"unknown game {game_id!r}") from None


register(GetStuck())
register(GetStuckFour())
register(RomeoAndJuliet())
register(Suitors())
register(Stucco())
