"""How strong the computer players are, per game in the registry.

For each game it plays ``--games`` deals (default 200) of each pairing:
easy, medium and strong against uniform-random play, then medium against
easy and strong against medium. Deals come in pairs on the same seed with
the sides swapped; the seat or dealer that starts rotates from pair to
pair. A deal counts as a win when the first-named player's side is the sole
winner (draws are printed apart). Then it times the Stucco exact search
proving the value of positions right after the opening (every one of the
32 possible opening cards of ``--stucco-deals`` deals), median and maximum.

The per-move budget is ``--iterations`` of search for the strong level
(medium uses a tenth or less, see ``engine.bots.PROFILES``) or ``--seconds``;
deals run in ``--jobs`` processes.

Usage: ``python bench/strength.py [--games 200] [--iterations 300]
[--seconds S] [--jobs 2] [--stucco-deals 20] [--pairings strong-random,...]
[game-id ...]``
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.bots import choose_move
from engine.bots import stucco as stucco_bot
from engine.cards import derive_seed
from engine.registry import GAMES, get_game

PAIRINGS = (
    ("easy", "random"),
    ("medium", "random"),
    ("strong", "random"),
    ("medium", "easy"),
    ("strong", "medium"),
)
"""(player, opponent) pairings, each printed as the player's win rate."""


def play(task: tuple[str, str, str, int, float | None, int | None]) -> tuple[str, str, str, int]:
    """Play deal ``index`` of ``game_id`` between levels ``a`` and ``b``
    ("random" for uniform play). Returns ``(game_id, a, b, result)`` with
    result 1 if ``a``'s side won alone, -1 if ``b``'s did, 0 for a draw."""
    game_id, a, b, index, seconds, iterations = task
    game = get_game(game_id)
    opts = game.check_options({})
    pair, swap = divmod(index, 2)
    seed = derive_seed(pair, "strength", game_id)
    state = game.deal(seed, opts, game.starter(opts, 0, pair))
    sides = game.sides(opts)
    a_side = sides[swap % len(sides)][0]
    level = {seat: a if side == a_side else b for side, seats in sides for seat in seats}
    rng = random.Random(derive_seed(seed, "moves", swap))
    while awaited := game.to_move(state):
        chosen = []
        for seat in awaited:
            if level[seat] == "random":
                moves = game.legal_moves(state, seat)
                chosen.append((seat, moves[rng.randrange(len(moves))]))
            else:
                seed_move = rng.getrandbits(32)
                move = choose_move(game_id, state, seat, level[seat], seconds, seed_move, iterations)
                chosen.append((seat, move))
        for seat, move in chosen:
            state = game.apply(state, seat, move)
    outcome = game.outcome(state)
    assert outcome is not None
    if not outcome.winners or len(outcome.winners) > 1:
        return game_id, a, b, 0
    return game_id, a, b, 1 if outcome.winners[0] == a_side else -1


def stucco_times(deals: int) -> list[float]:
    """Seconds the exact search takes to prove each position right after
    the opening (fresh table each time), over ``deals`` deals."""
    game = get_game("stucco")
    times = []
    for k in range(deals):
        state = game.deal(derive_seed(k, "stucco-exact"), {}, "north")
        own = stucco_bot.dealt(state)
        for card in range(32):
            start = time.perf_counter()
            stucco_bot.Solver(own).opening_value(card)
            times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("games_ids", nargs="*", metavar="game-id", help="games (default: all)")
    parser.add_argument("--games", type=int, default=200, help="deals per pairing (even)")
    parser.add_argument("--iterations", type=int, default=None,
                        help="strong's search iterations per move (default 300 without --seconds)")
    parser.add_argument("--seconds", type=float, default=None, help="strong's seconds per move instead")
    parser.add_argument("--jobs", type=int, default=multiprocessing.cpu_count(), help="processes")
    parser.add_argument("--stucco-deals", type=int, default=20, help="deals for the Stucco timing")
    parser.add_argument("--pairings", default="",
                        help="only these pairings, e.g. 'strong-random,strong-medium' (default: all)")
    args = parser.parse_args()
    ids = args.games_ids or list(GAMES)
    pairings: tuple[tuple[str, str], ...] = PAIRINGS
    if args.pairings:
        wanted = {tuple(p.split("-", 1)) for p in args.pairings.split(",")}
        pairings = tuple(p for p in PAIRINGS if p in wanted)
        if len(pairings) != len(wanted):
            parser.error(f"--pairings: choose among {', '.join('-'.join(p) for p in PAIRINGS)}")
    iterations = args.iterations if args.iterations or args.seconds is not None else 300
    budget = " and ".join(
        [f"{args.seconds} s"] * (args.seconds is not None) + [f"{iterations} iterations"] * bool(iterations)
    )
    print(f"budget per move: strong {budget} (medium a tenth or less); {args.games} deals per pairing")
    tasks = [
        (gid, a, b, i, args.seconds, iterations)
        for gid in ids for a, b in pairings for i in range(args.games)
    ]
    results: dict[tuple[str, str, str], list[int]] = {}
    start = time.perf_counter()
    with multiprocessing.Pool(args.jobs) as pool:
        for gid, a, b, r in pool.imap_unordered(play, tasks, chunksize=2):
            results.setdefault((gid, a, b), []).append(r)
    print(f"{'game':<18}{'pairing':<20}{'wins':>8}{'draws':>8}{'losses':>8}{'win rate':>10}")
    for gid in ids:
        for a, b in pairings:
            rs = results[gid, a, b]
            wins, draws, losses = rs.count(1), rs.count(0), rs.count(-1)
            print(f"{gid:<18}{a + ' v ' + b:<20}{wins:>8}{draws:>8}{losses:>8}{wins / len(rs):>10.1%}")
    print(f"(deals took {time.perf_counter() - start:.0f} s with {args.jobs} processes)")
    if "stucco" in ids and args.stucco_deals:
        times = stucco_times(args.stucco_deals)
        print(f"Stucco exact search after the opening, {len(times)} positions:"
              f" median {statistics.median(times) * 1000:.1f} ms, max {max(times) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
