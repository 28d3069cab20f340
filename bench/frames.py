"""Bytes sent per move over all of a room's connections, with whole state
frames and with patches (``docs/protocol.md``, "Patches").

For each game (default: all), plays up to ``--deals`` deals of one match
(fewer if the match ends first) with uniformly random
legal moves (a fixed seed) in a room whose every seat is held, plus one
spectator, twice: once with connections that take whole states only, once
with connections that asked for patches. Prints, per move, the bytes of every
frame the room sent (all connections together), and the ratio.

Usage: ``python -m bench.frames [--deals 4] [game-id ...]``
"""

from __future__ import annotations

import argparse
import random

from app.rooms import Room
from engine.registry import GAMES


class Counting:
    """A connection that counts what it is sent (``app.rooms.Connection``)."""

    def __init__(self) -> None:
        self.seat: str | None = None
        self.bytes = 0
        self.frames = 0

    def push(self, text: str) -> None:
        self.bytes += len(text.encode())
        self.frames += 1


def play(game_id: str, deals: int, patches: bool) -> tuple[int, int]:
    """Moves played and bytes sent in ``deals`` random deals of ``game_id``."""
    room = Room.create(game_id, {"seed": 11})
    conns = [Counting() for _ in range(len(room.seats) + 1)]
    for i, conn in enumerate(conns):
        room.attach(conn)
        if patches:
            room.take_patches(conn)
        if i < len(room.seats):
            room.join(conn, None, f"P{i}")
    seated = {c.seat: c for c in conns if c.seat is not None}
    start = sum(c.bytes for c in conns)
    rng = random.Random(5)
    moves = 0
    for _ in range(deals):
        while room.phase == "playing":
            seat = rng.choice(list(room.game.to_move(room.match.state)))
            move = rng.choice(list(room.game.legal_moves(room.match.state, seat)))
            room.move(seated[seat], move, room.version)
            moves += 1
        if room.phase != "deal_over":
            break  # the match is over (a rematch would be dealt at random)
        room.next_deal(conns[0], room.version)
    return moves, sum(c.bytes for c in conns) - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=4)
    parser.add_argument("games", nargs="*", default=list(GAMES))
    opts = parser.parse_args()
    print(f"{'game':<18} {'moves':>6} {'whole B/move':>13} {'patches B/move':>15} {'ratio':>6}")
    for game_id in opts.games:
        moves, whole = play(game_id, opts.deals, False)
        moves_p, patched = play(game_id, opts.deals, True)
        assert moves == moves_p
        print(f"{game_id:<18} {moves:>6} {whole / moves:>13,.0f} {patched / moves:>15,.0f}"
              f" {patched / whole:>6.2f}")


if __name__ == "__main__":
    main()
