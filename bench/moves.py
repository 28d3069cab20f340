"""What one move costs the server, in process, without sockets or noise.

Holds ``--rooms`` rooms of ``--game`` (default 1,250 rooms of Get Stuck for
Four, the load test's largest load) in one process, each with a connection
per seat that keeps the last frame it was pushed, rooms kept in a SQLite
file (``--memory``: in memory), the server's garbage-collector policy
installed (:mod:`app.collector`). It then plays ``--moves`` uniformly random
legal moves through the commit point (:meth:`app.rooms.Room.act`: judge,
store, state frames for every seat), each in a random room, dealing on and
starting rematches as the load client does, and prints:

* CPU µs per move (the whole process, collections included);
* the garbage collector's pauses, per generation: how many, median and
  largest (ms), and their total in µs per move. A pause stops every socket
  of the server, so the largest ones and how often they come are what a
  move's 99th percentile round trip sees;
* the tracked objects that each move leaves alive until the room's next
  move (what the young and middle collections walk), counted once on a
  sample of moves.

The load benchmark (``python -m bench.load``) measures the same through
sockets; this one isolates the server's own work.

Usage: ``python -m bench.moves [--rooms 1250] [--moves 40000] [--game
get-stuck-4] [--memory] [--seed 1]``
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from app.collector import Collector
from app.rooms import Room
from app.storage.base import Storage
from app.storage.memory import MemoryStorage
from app.storage.sqlite import SqliteStorage


class Keeping:
    """A connection that keeps the last frame it was pushed
    (``app.rooms.Connection``)."""

    def __init__(self) -> None:
        self.seat: str | None = None
        self.last = ""

    def push(self, text: str) -> None:
        self.last = text


class Pauses:
    """The collector's pauses by generation (ms), from ``gc.callbacks``."""

    def __init__(self) -> None:
        self.ms: dict[int, list[float]] = {0: [], 1: [], 2: []}
        self._start = 0.0
        self.on = False

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        elif self.on:
            self.ms[info["generation"]].append((time.perf_counter() - self._start) * 1000)


async def seat_all(room: Room) -> list[Keeping]:
    """A connection in every seat of ``room``."""
    conns = []
    for seat in room.seats:
        conn = Keeping()
        room.attach(conn)
        await room.act(lambda c=conn, s=seat: room.join(c, s, f"P{s}"))  # type: ignore[misc]
        conns.append(conn)
    return conns


async def play_one(room: Room, conns: list[Keeping], rnd: random.Random) -> bool:
    """One action in ``room``: a move of a seat to move, else the next deal
    or a rematch. True if it was a move."""
    phase = room.phase
    if phase == "deal_over":
        await room.act(lambda: room.next_deal(conns[0], room.version), conns[0])
        return False
    if phase == "match_over":
        await room.act(lambda: room.rematch(conns[0], room.version), conns[0])
        return False
    for conn in conns:
        assert conn.seat is not None
        legal = room.legal_moves(conn.seat)
        if legal:
            move = rnd.choice(legal)
            await room.act(lambda c=conn, m=move: room.move(c, m, room.version), conn)  # type: ignore[misc]
            return True
    return False


def survivors(rooms: list[tuple[Room, list[Keeping]]], rnd: random.Random, sample: int) -> float:
    """Tracked objects left alive per move, over ``sample`` moves in
    distinct rooms (everything older frozen first)."""
    async def go() -> int:
        moved = 0
        for room, conns in rnd.sample(rooms, sample):
            moved += await play_one(room, conns, rnd)
        return moved

    gc.collect()
    gc.freeze()
    try:
        moved = asyncio.get_event_loop().run_until_complete(go())
        return sum(len(gc.get_objects(g)) for g in range(3)) / max(1, moved)
    finally:
        gc.unfreeze()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=1250)
    parser.add_argument("--moves", type=int, default=40000)
    parser.add_argument("--game", default="get-stuck-4")
    parser.add_argument("--memory", action="store_true")
    parser.add_argument("--seed", type=int, default=1)
    opts = parser.parse_args()
    rnd = random.Random(opts.seed)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    with tempfile.TemporaryDirectory() as tmp:
        journal: Storage = MemoryStorage() if opts.memory else SqliteStorage(Path(tmp) / "moves.db")
        loop.run_until_complete(journal.open())

        async def build() -> list[tuple[Room, list[Keeping]]]:
            out = []
            for _ in range(opts.rooms):
                room = Room.create(opts.game, {}, journal=journal)
                await room.commit()
                out.append((room, await seat_all(room)))
            return out

        rooms = loop.run_until_complete(build())
        collector = Collector(600.0)
        collector.install()
        pauses = Pauses()
        gc.callbacks.append(pauses)

        async def play(n: int) -> int:
            moved = 0
            while moved < n:
                room, conns = rooms[rnd.randrange(len(rooms))]
                moved += await play_one(room, conns, rnd)
            return moved

        loop.run_until_complete(play(opts.moves // 4))  # warm up: every room a few moves in
        pauses.on = True
        cpu = time.process_time()
        moved = loop.run_until_complete(play(opts.moves))
        cpu = time.process_time() - cpu
        pauses.on = False
        left = survivors(rooms, rnd, min(200, len(rooms)))
        gc.callbacks.remove(pauses)
        collector.uninstall()
        loop.run_until_complete(journal.close())
    loop.close()
    print(f"{opts.game}: {opts.rooms} rooms, {moved} moves ({'memory' if opts.memory else 'sqlite'})")
    print(f"CPU per move            {cpu / moved * 1e6:8.1f} µs")
    for g, ms in pauses.ms.items():
        if ms:
            print(f"gen {g} pauses           {len(ms):5d}  median {statistics.median(ms):6.2f} ms"
                  f"  max {max(ms):6.2f} ms  {sum(ms) * 1000 / moved:6.1f} µs/move")
        else:
            print(f"gen {g} pauses               0")
    print(f"tracked objects left    {left:8.1f} per move")


if __name__ == "__main__":
    main()
