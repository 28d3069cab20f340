"""Random play through the public engine interface, one core.

Prints, for each game in the registry, whole deals per second and moves per
second of uniformly random play. Time is CPU time of this process
(``time.process_time``), so that other work on the machine counts less;
each game is measured ``repeat`` times (default 3) and the best run is
printed, with the median beside it and the load average at the start.
Usage: ``python bench/engine.py [seconds-per-run] [game-id ...]``; set
``BENCH_REPEAT`` for another number of runs.
"""

from __future__ import annotations

import os
import random
import statistics
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
    """Deals per second and moves per second over about ``seconds`` of CPU
    time (the same seeded deals every run)."""
    rng = random.Random(1)
    deals = moves = 0
    start = time.process_time()
    while (elapsed := time.process_time() - start) < seconds:
        moves += random_deal(game_id, deals, rng)
        deals += 1
    return deals / elapsed, moves / elapsed


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    ids = sys.argv[2:] or list(GAMES)
    repeat = int(os.environ.get("BENCH_REPEAT", "3"))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"CPU time, best of {repeat} runs of {seconds:g} s; load average {load}")
    print(f"{'game':<20}{'deals/s':>12}{'median':>10}{'moves/s':>14}")
    for gid in ids:
        runs = [bench(gid, seconds) for _ in range(repeat)]
        best = max(runs)
        print(f"{gid:<20}{best[0]:>12,.0f}{statistics.median(r[0] for r in runs):>10,.0f}"
              f"{best[1]:>14,.0f}")


if __name__ == "__main__":
    main()
