"""What one match holds in memory, per game in the registry.

For each game it starts an :class:`engine.match.Match` (default options, a
fixed seed), plays ``--moves`` uniformly random legal moves (dealing the next
deal when one ends), and then measures what the match keeps alive:

* ``objects``: the objects reachable from the match (through
  ``gc.get_referents``) that the garbage collector tracks, i.e. the
  containers a full collection has to visit, after a ``gc.collect()`` (which
  untracks tuples and dicts that only hold atomic values, as a long-running
  server's collections do). Objects the match shares with every other match
  are left out: everything reachable from the engine's modules (tables,
  boards, interned cards), classes, functions and modules;
* ``all objects``: the same walk counting every object, tracked or not;
* ``bytes``: ``sys.getsizeof`` summed over that walk (every object once);
* ``traced``: the bytes ``tracemalloc`` sees allocated and still alive
  after ten matches are built and played, divided by ten (ten matches played
  before, so that the caches all matches share are warm; what they still
  add is shared out among the ten).

Then it holds ``--rooms`` matches (default 1,250, as many as the load
test's rooms) of each game at once and prints how many objects the collector
tracks in the whole process and how long a full collection takes (CPU
time, best of three).

Usage: ``python bench/memory.py [--moves 20] [--rooms 1250] [game-id ...]``
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
import tracemalloc
import types
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.match import Match
from engine.registry import GAMES

_OPAQUE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
           types.MethodType, types.CodeType)


def shared_ids() -> set[int]:
    """Ids of every object reachable from the engine's modules: what all
    matches share and so not what one match costs."""
    roots = [m for name, m in sys.modules.items() if name == "engine" or name.startswith("engine.")]
    seen: set[int] = set()
    stack: list[Any] = [vars(m) for m in roots]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, types.ModuleType):
            continue
        stack.extend(gc.get_referents(obj))
    return seen


def walk(root: Any, shared: set[int]) -> tuple[int, int, int]:
    """(tracked objects, all objects, bytes) reachable from ``root`` and not
    in ``shared``; classes, functions and modules are not entered."""
    seen: set[int] = set()
    tracked = count = size = 0
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or id(obj) in shared or isinstance(obj, _OPAQUE):
            continue
        seen.add(id(obj))
        count += 1
        size += sys.getsizeof(obj)
        if gc.is_tracked(obj):
            tracked += 1
        stack.extend(gc.get_referents(obj))
    return tracked, count, size


def played(game_id: str, seed: int, moves: int) -> Match:
    """A match of ``game_id`` after ``moves`` random legal moves (fewer if
    the match ends first)."""
    game = GAMES[game_id]
    match = Match.new(game_id, game.check_options({}), seed)
    rng = random.Random(seed)
    for _ in range(moves):
        if match.deal_over:
            if match.over:
                break
            match = match.next_deal()
        seat = game.to_move(match.state)[0]
        legal = game.legal_moves(match.state, seat)
        match = match.play(seat, legal[rng.randrange(len(legal))])
    return match


def measure(game_id: str, moves: int, matches: int = 10) -> tuple[int, int, int, int]:
    """(tracked objects, all objects, bytes, traced bytes) of one match; the
    traced bytes are those of ``matches`` matches kept alive together,
    divided by their number (after as many matches played before, so that
    the caches they all share are warm)."""
    for k in range(matches):
        played(game_id, 1000 + k, moves)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    kept = [played(game_id, 2 + k, moves) for k in range(matches)]
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    traced = sum(d.size_diff for d in after.compare_to(before, "filename")) - sys.getsizeof(kept)
    tracked, count, size = walk(kept[0], shared_ids())
    return tracked, count, size, traced // matches


def full_collection(game_id: str, moves: int, rooms: int) -> tuple[int, float]:
    """With ``rooms`` matches of ``game_id`` alive (``moves`` random moves
    each): the objects the collector tracks in the whole process, and the
    best of three full collections in milliseconds of CPU time."""
    kept = [played(game_id, k, moves) for k in range(rooms)]
    gc.collect()
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        gc.collect()
        best = min(best, time.process_time() - start)
    tracked = len(gc.get_objects())
    del kept
    return tracked, best * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("games_ids", nargs="*", metavar="game-id", help="games (default: all)")
    parser.add_argument("--moves", type=int, default=20, help="random moves played")
    parser.add_argument("--rooms", type=int, default=1250,
                        help="matches held at once for the full-collection timing (0: skip)")
    args = parser.parse_args()
    print(f"one match after {args.moves} random moves")
    print(f"{'game':<20}{'objects':>9}{'all objects':>13}{'bytes':>9}{'traced':>9}")
    ids = args.games_ids or list(GAMES)
    for gid in ids:
        tracked, count, size, traced = measure(gid, args.moves)
        print(f"{gid:<20}{tracked:>9}{count:>13}{size:>9,}{traced:>9,}")
    if args.rooms:
        gc.collect()
        base = len(gc.get_objects())
        print(f"{args.rooms} matches alive at once: tracked objects in the process"
              f" ({base:,} without them) and a full collection")
        for gid in ids:
            tracked, ms = full_collection(gid, args.moves, args.rooms)
            print(f"{gid:<20}{tracked:>9,} objects {ms:>8.1f} ms")


if __name__ == "__main__":
    main()
