"""How long a server with many stored rooms takes to be ready.

Fills an SQLite database with ``--rooms`` rooms (1,000 by default) of every
game in turn, each with its seats taken and ``--moves`` random legal moves
played (some with computer players, a few of computer players only, some
with a finished match), written through the server's own storage
(``app.storage.sqlite``). Then starts the server on it (uvicorn on a free
loopback port) ``--repeat`` times and times, from the moment the process is
started: ``/healthz`` answering, then a stored room opening (its page, then
its websocket's first state: the room is loaded from the database on first
use). The same start on an empty database is timed too, to tell the rooms'
share from Python's own start, and the server's CPU time is read from /proc
(on a busy machine, the wall-clock times include waiting for a core).

Prints the median and worst of each; the target is a server ready, room
open, within 2 s.

Usage: ``python bench/startup.py [--rooms 1000] [--moves 40] [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import json
import os
import random
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import websockets

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.storage import Entry, RoomMeta, SqliteStorage  # noqa: E402
from app.table import Action, Table, token_hash  # noqa: E402
from bench.latency import free_port, start_server  # noqa: E402
from engine.registry import GAMES  # noqa: E402

TARGET_SECONDS = 2.0


def record(room_id: str, game_id: str, rng: random.Random, moves: int, bots: str) -> list[Action]:
    """The actions of one room: created (with computer players for ``bots``
    ``"others"`` or ``"all"``), every other seat joined, then up to ``moves``
    random legal moves, next deals included."""
    game = GAMES[game_id]
    seats = game.seats(game.check_options({}))
    levels = {s: "easy" for s in (seats[1:] if bots == "others" else seats if bots == "all" else ())}
    created = time.time() - rng.uniform(0, 86400)
    actions = [Table.create_action(room_id, game_id, {}, rng.getrandbits(63), created, levels)]
    table = Table.new(actions[0])
    for seat in seats:
        if seat not in levels:
            actions.append({"t": "join", "seat": seat, "name": f"Player {seat}",
                            "token_hash": token_hash(f"{room_id}-{seat}")})
            table = table.apply(actions[-1])
    for _ in range(moves):
        if table.phase == "deal_over":
            action: Action = {"t": "next_deal"}
        elif table.phase == "playing":
            seat = rng.choice(list(game.to_move(table.match.state)))
            move = rng.choice(game.legal_moves(table.match.state, seat))
            action = {"t": "move", "seat": seat, "move": move, "hand_back": []}
        else:
            break
        actions.append(action)
        table = table.apply(action)
    return actions


def meta(table: Table, at: float) -> RoomMeta:
    """The stored meta of ``table`` after an action at ``at``."""
    phase = table.phase
    return RoomMeta(table.id, table.game_id, table.created, at, at, table.version, phase, opened=True,
                    finished=at if phase == "match_over" else None, computer_only=table.computer_only)


async def fill(path: Path, rooms: int, moves: int, seed: int) -> list[str]:
    """Store ``rooms`` played rooms in the database at ``path``; their ids."""
    rng = random.Random(seed)
    storage = SqliteStorage(path)
    await storage.open()
    ids: list[str] = []
    last: asyncio.Future[None] | concurrent.futures.Future[None] | None = None
    games = list(GAMES)
    for i in range(rooms):
        room_id = f"bench{i:011d}"
        bots = "all" if i % 50 == 7 else "others" if i % 4 == 1 else "none"
        actions = record(room_id, games[i % len(games)], rng, rng.randint(moves // 2, moves * 3 // 2), bots)
        table = Table.new(actions[0])
        writes = [storage.create(meta(table, table.created), Entry(0, table.created, actions[0]))]
        for action in actions[1:]:
            table = table.apply(action)
            at = table.created + table.version
            writes.append(storage.append(meta(table, at), Entry(table.version, at, action)))
        last = writes[-1]
        ids.append(room_id)
        if i % 50 == 49:
            await asyncio.wrap_future(last)
    if last is not None:
        await asyncio.wrap_future(last)
    await storage.close()
    return ids


async def first_state(url: str) -> dict[str, Any]:
    async with websockets.connect(url) as ws:
        frame: dict[str, Any] = json.loads(await ws.recv())
        return frame


def cpu_seconds(pid: int) -> float:
    """CPU time (user and system) process ``pid`` has used so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start(database: Path, room_id: str | None) -> tuple[float, float, float]:
    """Seconds from starting the server to ``/healthz`` answering, to
    ``room_id``'s page and first state, and the server's CPU seconds by
    then (the last two 0 without a room)."""
    port = free_port()
    began = time.perf_counter()
    proc = start_server(port, {"CARDBOARD_DATABASE": str(database)})
    ready = time.perf_counter() - began
    try:
        if room_id is None:
            return ready, 0.0, cpu_seconds(proc.pid)
        base = f"http://127.0.0.1:{port}"
        with urllib.request.urlopen(f"{base}/r/{room_id}", timeout=10) as r:
            assert r.status == 200
        frame = asyncio.run(first_state(f"ws://127.0.0.1:{port}/ws/{room_id}"))
        assert frame["type"] == "state" and frame["room"] == room_id, frame
        return ready, time.perf_counter() - began, cpu_seconds(proc.pid)
    finally:
        proc.terminate()
        proc.wait(30)


def line(name: str, samples: list[float]) -> str:
    return f"{name}: median {statistics.median(samples):.2f} s, worst {max(samples):.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rooms", type=int, default=1000)
    parser.add_argument("--moves", type=int, default=40, help="moves per room, on average")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as where:
        full, empty = Path(where) / "rooms.db", Path(where) / "empty.db"
        began = time.perf_counter()
        ids = asyncio.run(fill(full, args.rooms, args.moves, args.seed))
        size = full.stat().st_size / 2**20
        print(f"filled {args.rooms} rooms ({size:.1f} MiB) in {time.perf_counter() - began:.1f} s",
              flush=True)
        rng = random.Random(args.seed)
        bare, bare_cpu, ready, opened, cpu = [], [], [], [], []
        for _ in range(args.repeat):
            b, _, c = start(empty, None)
            bare.append(b)
            bare_cpu.append(c)
            r, o, c = start(full, rng.choice(ids))
            ready.append(r)
            opened.append(o)
            cpu.append(c)
    print(line("empty database, /healthz answers", bare))
    print(line("  its server's CPU time by then", bare_cpu))
    print(line(f"{args.rooms} rooms, /healthz answers", ready))
    print(line(f"{args.rooms} rooms, a stored room's page and first state", opened))
    print(line("  its server's CPU time by then", cpu))
    worst = statistics.median(opened)
    print(f"ready with a room open in {worst:.2f} s (median; target {TARGET_SECONDS:g} s):"
          f" {'met' if worst <= TARGET_SECONDS else 'MISSED'}")


if __name__ == "__main__":
    main()
