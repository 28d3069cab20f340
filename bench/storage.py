"""What durability costs: the move round trip and the saturated moves per
second with the SQLite store against the memory store, in one run.

For each store in turn (``memory, sqlite`` repeated ``--repeat`` times, so
that both see the same machine) it starts a fresh server (uvicorn on a free
loopback port; ``CARDBOARD_DATABASE=:memory:`` or a new file in ``--dir``)
and drives it with the load generator ``load.py`` (``--load``; it speaks
``docs/protocol.md``, plays random legal moves of Get Stuck for Four and
times each move from sending it to receiving the state it made):

* **round trip**: ``--rtt-rooms`` rooms whose players think ``--think-ms``
  before each move, a light load: the median and 99th percentile round trip;
* **saturated**: ``--rooms`` rooms whose players move as soon as it is their
  turn: the moves per second the server keeps up.

First, the commit point alone in this process (``Room.act`` on 100 rooms,
no websockets): the CPU time an action costs (the sync thread's
included) and the time one lone move takes to be committed, with memory,
SQLite and SQLite with ``synchronous=FULL``; this depends little on what
else the machine runs.

Prints each run, then the best figure of each store (highest moves/s, lowest
round trip: the runs least disturbed by the rest of the machine) and the
cost of durability against the targets: at most 15 % of the throughput and
0.2 ms of the median round trip. It also prints the server's CPU time per
move under saturation (from /proc, through load.py): on a busy machine the
moves/s depend on what else runs, the CPU time a move costs much less.

Usage: ``python bench/storage.py [--repeat 2] [--duration 15] [--rooms 100]
[--rtt-rooms 20] [--think-ms 300] [--load /work/shared/bench/load.py]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.rooms import Room  # noqa: E402
from app.storage import MemoryStorage, SqliteStorage, Storage  # noqa: E402
from bench.latency import free_port, start_server  # noqa: E402

GAME = "get-stuck-4"
MAX_THROUGHPUT_COST = 0.15
MAX_MEDIAN_COST_MS = 0.2
SERVER_ENV = {
    "CARDBOARD_ROOM_CREATE_BURST": "100000",  # one client address creates every room
    "CARDBOARD_MAX_ROOMS": "100000",
}


def load(script: Path, base: str, pid: int, rooms: int, think_ms: float, duration: float) -> dict[str, Any]:
    """One run of the load generator; its figures (the JSON of its last line)."""
    result = subprocess.run(
        [sys.executable, str(script), "--base", base, "--game", GAME, "--rooms", str(rooms),
         "--think-ms", str(think_ms), "--duration", str(duration), "--server-pid", str(pid)],
        capture_output=True, text=True, timeout=duration * 4 + 120, check=False)
    lines = result.stdout.strip().splitlines()
    if not lines or not lines[-1].startswith("{"):
        raise RuntimeError(f"load.py failed ({result.returncode}):\n{result.stdout[-2000:]}"
                           f"{result.stderr[-2000:]}")
    figures: dict[str, Any] = json.loads(lines[-1])
    if figures.get("errors") or figures.get("unanswered"):
        print(f"  warning: errors {figures.get('errors')}, unanswered {figures.get('unanswered')}")
    return figures


def run(store: str, args: argparse.Namespace, where: Path) -> dict[str, float]:
    """Both loads on a fresh server keeping rooms in ``store``."""
    database = ":memory:" if store == "memory" else str(where / f"bench-{os.getpid()}-{free_port()}.db")
    port = free_port()
    proc = start_server(port, {**SERVER_ENV, "CARDBOARD_DATABASE": database})
    base = f"http://127.0.0.1:{port}"
    try:
        light = load(args.load, base, proc.pid, args.rtt_rooms, args.think_ms, args.duration)
        heavy = load(args.load, base, proc.pid, args.rooms, 0, args.duration)
    finally:
        proc.terminate()
        proc.wait(30)
        if database != ":memory:":
            for suffix in ("", "-wal", "-shm"):
                Path(database + suffix).unlink(missing_ok=True)
    out = {"p50": light["rtt_ms"]["p50"], "p99": light["rtt_ms"]["p99"],
           "light_moves_s": light["moves_per_s"], "moves_s": heavy["moves_per_s"],
           "sat_p50": heavy["rtt_ms"]["p50"], "server_cpu": heavy["server_cpu_pct"],
           "cpu_ms": heavy["server_cpu_pct"] * 10 * heavy["window_s"] / max(1, heavy["moves"])}
    print(f"  {store:6}  round trip p50 {out['p50']:7.2f} ms  p99 {out['p99']:7.2f} ms"
          f" ({out['light_moves_s']:.0f} moves/s offered)   saturated {out['moves_s']:7.1f} moves/s"
          f" (p50 {out['sat_p50']:.1f} ms, server CPU {out['server_cpu']:.0f} %,"
          f" {out['cpu_ms']:.3f} ms of CPU a move)", flush=True)
    return out


class _Conn:
    """A connection that drops its frames (the in-process harness)."""

    def __init__(self) -> None:
        self.seat: str | None = None

    def push(self, text: str) -> None:
        return None


async def _commit_point(storage: Storage, rooms: int, actions: int, seed: int) -> tuple[float, float]:
    """``actions`` random actions over ``rooms`` rooms of Get Stuck for Four
    through ``Room.act`` (all rooms at once), on ``storage``: the CPU
    microseconds an action costs this process (sync thread included), and
    the median seconds one lone move takes to be committed."""
    await storage.open()
    rng = random.Random(seed)
    tables = []
    for i in range(rooms):
        room = Room.create(GAME, {"seed": i}, journal=storage)
        await room.commit()
        conns = [_Conn() for _ in room.seats]
        for c in conns:
            room.attach(c)
            await room.act(partial(room.join, c, None, "P"), c)
        tables.append((room, conns))

    async def play(room: Room, conns: list[_Conn], n: int) -> None:
        for _ in range(n):
            if room.phase == "deal_over":
                await room.act(partial(room.next_deal, conns[0], room.version), conns[0])
                continue
            if room.phase != "playing":
                return
            seat = room.game.to_move(room.match.state)[0]
            conn = next(c for c in conns if c.seat == seat)
            move = rng.choice(room.game.legal_moves(room.match.state, seat))
            await room.act(partial(room.move, conn, move, room.version), conn)

    before = sum(r.version for r, _ in tables)
    cpu = time.process_time()
    await asyncio.gather(*(play(r, c, actions // rooms) for r, c in tables))
    cpu = time.process_time() - cpu
    done = sum(r.version for r, _ in tables) - before
    lone = []
    room, conns = tables[0]
    for _ in range(100):
        began = time.perf_counter()
        await play(room, conns, 1)
        lone.append(time.perf_counter() - began)
    await storage.close()
    return cpu / max(1, done) * 1e6, statistics.median(lone)


def in_process(where: Path, repeat: int) -> None:
    """The commit point alone, without websockets: CPU per action and the
    median time of a lone move, memory against SQLite (NORMAL, then FULL)."""
    print("in process (Room.act on 100 rooms, 6,000 actions; no websockets):", flush=True)
    figures: dict[str, list[tuple[float, float]]] = {"memory": [], "sqlite": [], "sqlite FULL": []}
    for i in range(repeat):
        for name in figures:
            path = where / f"harness-{i}-{name.replace(' ', '-')}.db"
            storage: Storage = (MemoryStorage() if name == "memory"
                                else SqliteStorage(path, "FULL" if "FULL" in name else "NORMAL"))
            figures[name].append(asyncio.run(_commit_point(storage, 100, 6000, i)))
    base = min(c for c, _ in figures["memory"])
    for name, runs in figures.items():
        cpu, lone = min(c for c, _ in runs), min(t for _, t in runs)
        print(f"  {name:11}  {cpu:5.0f} us of CPU an action ({cpu / base - 1:+.0%})   a lone move"
              f" {lone * 1e3:.3f} ms", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--duration", type=float, default=15.0, help="seconds of each load")
    parser.add_argument("--rooms", type=int, default=100, help="rooms of the saturated load")
    parser.add_argument("--rtt-rooms", type=int, default=20, help="rooms of the light load")
    parser.add_argument("--think-ms", type=float, default=300.0, help="think time of the light load")
    parser.add_argument("--load", type=Path, default=Path("/work/shared/bench/load.py"),
                        help="the load generator")
    parser.add_argument("--dir", type=Path, default=None,
                        help="where the SQLite file goes (default: the temporary directory)")
    args = parser.parse_args()
    if not args.load.exists():
        parser.error(f"no load generator at {args.load}: give its path with --load")
    print(f"{GAME}: light load {args.rtt_rooms} rooms thinking {args.think_ms:g} ms, saturated"
          f" {args.rooms} rooms, {args.duration:g} s each, {args.repeat} rounds", flush=True)
    runs: dict[str, list[dict[str, float]]] = {"memory": [], "sqlite": []}
    with tempfile.TemporaryDirectory(dir=args.dir) as where:
        in_process(Path(where), args.repeat)
        for i in range(args.repeat):
            print(f"round {i + 1}", flush=True)
            for store in runs:
                runs[store].append(run(store, args, Path(where)))
    best = {store: {"moves_s": max(r["moves_s"] for r in rs), "p50": min(r["p50"] for r in rs),
                    "p99": min(r["p99"] for r in rs), "cpu_ms": min(r["cpu_ms"] for r in rs)}
            for store, rs in runs.items()}
    mem, sql = best["memory"], best["sqlite"]
    cost = 1 - sql["moves_s"] / mem["moves_s"]
    extra = sql["p50"] - mem["p50"]
    print("best of each store:")
    for store, b in best.items():
        print(f"  {store:6}  {b['moves_s']:7.1f} moves/s saturated ({b['cpu_ms']:.3f} ms of server CPU a"
              f" move)   round trip p50 {b['p50']:.2f} ms  p99 {b['p99']:.2f} ms")
    print(f"durability costs {cost:+.1%} of the throughput (target at most {MAX_THROUGHPUT_COST:.0%}):"
          f" {'met' if cost <= MAX_THROUGHPUT_COST else 'MISSED'}")
    cpu_cost = sql["cpu_ms"] / mem["cpu_ms"] - 1
    print(f"the server's CPU time a move grows by {cpu_cost:+.1%} (what throughput costs on a machine"
          " where the server has a core to itself)")
    print(f"durability adds {extra:+.2f} ms to the median round trip (target at most"
          f" {MAX_MEDIAN_COST_MS} ms): {'met' if extra <= MAX_MEDIAN_COST_MS else 'MISSED'}")


if __name__ == "__main__":
    main()
