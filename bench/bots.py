"""How fast the computer players think: MCTS iterations per second per game.

For each game in the registry it plays ``--positions`` seeded deals with
uniformly random moves up to a few depths (the opening, a few moves in, the
middle), then runs the generic searcher (:class:`engine.bots.mcts.Searcher`
with the game's own settings from :data:`engine.bots.PROFILES`, as the
medium and strong levels use it) for ``--iterations`` iterations from each
position. Time is CPU time of this process (``time.process_time``), so that
other work on the machine counts less; each game is measured ``--repeat``
times and the best run is printed, with the median beside it.

``--profile GAME`` prints instead where one game's search spends its time
(cProfile, sorted by own time).

Usage: ``python bench/bots.py [--iterations 300] [--positions 6] [--repeat 3]
[--profile GAME] [game-id ...]``
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.bots import profile
from engine.bots.mcts import Budget, Searcher
from engine.cards import derive_seed
from engine.registry import GAMES, get_game

DEPTHS = (0, 4, 20)
"""Random moves played from the deal before searching (cut short at the end)."""


def positions(game_id: str, count: int) -> list[tuple[Any, str]]:
    """``count`` positions per depth of :data:`DEPTHS`, each with the seat to
    search for (the first awaited one); deals that end sooner are skipped."""
    game = get_game(game_id)
    opts = game.check_options({})
    out = []
    for k in range(count):
        seed = derive_seed(k, "bench-bots", game_id)
        rng = random.Random(seed)
        for depth in DEPTHS:
            state = game.deal(seed, opts, game.starter(opts, seed, 0))
            for _ in range(depth):
                awaited = game.to_move(state)
                if not awaited:
                    break
                for seat in awaited:
                    moves = game.legal_moves(state, seat)
                    state = game.apply(state, seat, moves[rng.randrange(len(moves))])
            awaited = game.to_move(state)
            if awaited and len(game.legal_moves(state, awaited[0])) > 1:
                out.append((state, awaited[0]))
    return out


def search_all(game_id: str, cases: list[tuple[Any, str]], iterations: int) -> float:
    """Search every case for ``iterations`` iterations; return the CPU seconds."""
    game = get_game(game_id)
    prof = profile(game_id)
    start = time.process_time()
    for i, (state, seat) in enumerate(cases):
        searcher = Searcher(game, seat, random.Random(i), prof.reward, prof.policy,
                            prof.evaluate, prof.rollout_depth, prof.c)
        searcher.search(state, Budget(None, iterations))
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("games_ids", nargs="*", metavar="game-id", help="games (default: all)")
    parser.add_argument("--iterations", type=int, default=300, help="iterations per search")
    parser.add_argument("--positions", type=int, default=6, help="deals (positions per depth)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per game (best is printed)")
    parser.add_argument("--profile", metavar="GAME", help="profile one game's search instead")
    args = parser.parse_args()
    if args.profile:
        cases = positions(args.profile, args.positions)
        prof = cProfile.Profile()
        prof.runcall(search_all, args.profile, cases, args.iterations)
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        return
    ids = args.games_ids or list(GAMES)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{args.iterations} iterations per search, CPU time; load average {load}")
    print(f"{'game':<20}{'positions':>10}{'best it/s':>12}{'median it/s':>13}")
    for gid in ids:
        cases = positions(gid, args.positions)
        rates = [len(cases) * args.iterations / search_all(gid, cases, args.iterations)
                 for _ in range(args.repeat)]
        print(f"{gid:<20}{len(cases):>10}{max(rates):>12,.0f}{statistics.median(rates):>13,.0f}")


if __name__ == "__main__":
    main()
