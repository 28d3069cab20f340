"""Random play through the public engine interface, one core.

Prints, for each game in the registry, whole deals per second and moves per
second. Usage: ``python bench/engine.py [seconds-per-game] [game-id ...]``.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.registry import GAMES


def random_deal(game_id: str, seed: int, rng: random.Random) -> int:
    """Play one deal of ``game_id`` from ``seed`` with uniformly random legal
    moves; return the number of moves made."""
    game = GAMES[game_id]
    options = game.check_options({})
    state = game.deal(seed, options, game.starter(options, seed, 0))
    moves = 0
    while True:
        awaited = game.to_move(state)
        if not awaited:
            return moves
        seat = awaited[0]
        state = game.apply(state, seat, rng.choice(game.legal_moves(state, seat)))
        moves += 1


def bench(game_id: str, seconds: float) -> tuple[float, float]:
    """Deals per second and moves per second over about ``seconds``."""
    rng = random.Random(1)
    deals = moves = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        moves += random_deal(game_id, deals, rng)
        deals += 1
    return deals / elapsed, moves / elapsed


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    ids = sys.argv[2:] or list(GAMES)
    print(f"{'game':<20}{'deals/s':>12}{'moves/s':>14}")
    for gid in ids:
        dps, mps = bench(gid, seconds)
        print(f"{gid:<20}{dps:>12,.0f}{mps:>14,.0f}")


if __name__ == "__main__":
    main()
