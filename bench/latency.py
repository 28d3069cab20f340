"""Round trip of a person's move while other rooms hold only computer players.

Starts a real server (uvicorn on loopback, a free port) and plays Get Stuck
in one room with two websocket clients: each move's round trip is the time
from sending the ``move`` frame to receiving the state it produced. It is
measured first on an idle server, then while ``--rooms`` other rooms (10 by
default, games of the registry in turn) hold only computer players of
``--level`` playing each other, each watched by a spectator so that they go
on from deal to deal. The spectators run in a separate process, so that
their reading does not slow the measuring client.

Prints the median, 95th percentile and maximum round trip in milliseconds
for both runs, and how many computer moves were made during the loaded run.

Usage: ``python bench/latency.py [--moves 300] [--rooms 10] [--level strong]
[--bot-seconds 1.0] [--pool process|thread]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import sys
import time
import urllib.request
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path
from typing import Any

import websockets

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.server import free_port, start_server  # noqa: E402
from engine.registry import GAMES  # noqa: E402

GAP = 0.02
"""Seconds between two measured moves."""


def post_room(base: str, body: dict[str, Any]) -> dict[str, Any]:
    """``POST /api/rooms`` with ``body``; the answer."""
    req = urllib.request.Request(base + "/api/rooms", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        answer: dict[str, Any] = json.load(r)
        return answer


async def next_state(ws: Any) -> dict[str, Any]:
    """The next ``state`` frame on ``ws`` (other frames are skipped)."""
    while True:
        frame: dict[str, Any] = json.loads(await ws.recv())
        if frame["type"] == "state":
            return frame


async def round_trips(base: str, moves: int) -> list[float]:
    """Seconds from sending each of ``moves`` moves to receiving its state,
    in a Get Stuck room of two clients (new deals and matches as needed)."""
    room = post_room(base, {"game": "get-stuck", "options": {"deals": 20}})["room"]
    url = base.replace("http", "ws") + f"/ws/{room}"
    out: list[float] = []
    async with websockets.connect(url) as red, websockets.connect(url) as black:
        last = {red: await next_state(red), black: await next_state(black)}
        for ws, seat in ((red, "red"), (black, "black")):
            await ws.send(json.dumps({"type": "join", "seat": seat, "name": seat}))
            for peer in (red, black):
                last[peer] = await next_state(peer)
        while len(out) < moves:
            state = last[red]
            if state["phase"] in ("deal_over", "match_over"):
                # Both players say they are ready: the second press deals.
                for ws in (red, black):
                    await ws.send(json.dumps({"type": "ready", "version": state["version"]}))
                for peer in (red, black):
                    while last[peer]["version"] <= state["version"]:
                        last[peer] = await next_state(peer)
                continue
            else:
                mover = red if last[red]["legal_moves"] else black
                move = last[mover]["legal_moves"][0]
                start = time.perf_counter()
                await mover.send(json.dumps({"type": "move", "move": move, "version": state["version"]}))
                last[mover] = await next_state(mover)
                out.append(time.perf_counter() - start)
            for peer in (red, black):
                if last[peer]["version"] <= state["version"]:
                    last[peer] = await next_state(peer)
            await asyncio.sleep(GAP)
    return out


def run_load(base: str, rooms: int, level: str, frames: Synchronized[int]) -> None:
    """Entry point of the load process: ``rooms`` rooms of computer players
    only, each watched until the process is killed; counts their frames."""
    asyncio.run(_load(base, rooms, level, frames))


async def _load(base: str, rooms: int, level: str, frames: Synchronized[int]) -> None:
    games = list(GAMES)
    made = [post_room(base, {"game": games[i % len(games)], "bots": {"level": level, "seats": "all"}})
            for i in range(rooms)]
    await watch_rooms(base, [m["room"] for m in made], frames)


def run_watchers(base: str, rooms: list[str], frames: Synchronized[int]) -> None:
    """Entry point of a process that watches ``rooms`` (as a spectator of
    each) until it is killed, counting the frames in ``frames``."""
    asyncio.run(watch_rooms(base, rooms, frames))


async def watch_rooms(base: str, rooms: list[str], frames: Synchronized[int]) -> None:
    """Watch every room of ``rooms`` at once, counting their frames."""
    async def watch(room: str) -> None:
        async with websockets.connect(base.replace("http", "ws") + f"/ws/{room}") as ws:
            async for _ in ws:
                with frames.get_lock():
                    frames.value += 1

    await asyncio.gather(*(watch(room) for room in rooms))


def summary(name: str, samples: list[float], percentile: int = 95, width: int = 34) -> str:
    """One line of a table of round trips: ``name``, how many, then the
    median, the ``percentile``-th percentile and the maximum in ms."""
    ms = sorted(s * 1000 for s in samples)
    high = ms[min(len(ms) - 1, round(percentile / 100 * (len(ms) - 1)))]
    return f"{name:<{width}}{len(ms):>6}{statistics.median(ms):>10.2f}{high:>10.2f}{ms[-1]:>10.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=300, help="moves measured per run")
    parser.add_argument("--rooms", type=int, default=10, help="rooms of computer players")
    parser.add_argument("--level", default="strong", help="their level")
    parser.add_argument("--bot-seconds", default="1.0", help="CARDBOARD_BOT_SECONDS")
    parser.add_argument("--pool", default="process", choices=("process", "thread"), help="CARDBOARD_BOT_POOL")
    args = parser.parse_args()

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {"CARDBOARD_BOT_SECONDS": args.bot_seconds, "CARDBOARD_BOT_POOL": args.pool,
           "CARDBOARD_BOT_BETWEEN_DEALS": "0.5",
           "CARDBOARD_BOT_ROOMS_PER_ADDRESS": str(max(10, args.rooms))}  # all from this one address
    server = start_server(port, env)
    try:
        idle = asyncio.run(round_trips(base, args.moves))
        frames: Synchronized[int] = multiprocessing.Value("q", 0)
        load = multiprocessing.Process(target=run_load, args=(base, args.rooms, args.level, frames),
                                       daemon=True)
        load.start()
        deadline = time.monotonic() + 60
        while frames.value < 5 * args.rooms and time.monotonic() < deadline:
            time.sleep(0.2)  # the pool is up and every room is busy
        before, start = frames.value, time.monotonic()
        busy = asyncio.run(round_trips(base, args.moves))
        loaded_frames, elapsed = frames.value - before, time.monotonic() - start
        load.terminate()
        load.join()
    finally:
        server.terminate()
        server.wait(timeout=10)

    report(f"computer players: {args.level}, {args.bot_seconds} s per move, {args.pool} pool",
           f"{'round trip of a move (ms)':<34}{'moves':>6}{'median':>10}{'p95':>10}{'max':>10}",
           [summary("idle server", idle), summary(f"{args.rooms} rooms of computer players", busy)],
           loaded_frames, elapsed)


def report(setup: str, head: str, rows: list[str], frames: int, elapsed: float) -> None:
    """Print the CPUs and ``setup``, the table (``head``, then ``rows``) and
    how many ``frames`` the rooms of computers sent in the ``elapsed``
    seconds of the loaded run."""
    print(f"{os.cpu_count()} CPUs; {setup}")
    print(head)
    for row in rows:
        print(row)
    print(f"during the loaded run: {frames} frames from the computer rooms in {elapsed:.1f} s"
          f" ({frames / max(elapsed, 1e-9):.1f}/s)")


if __name__ == "__main__":
    main()
