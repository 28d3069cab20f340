"""Saturated Get Stuck for Four on one process (SQLite), one process (Redis)
and two processes (Redis), in one run (``docs/scaling.md``).

For each setup it starts the server processes (uvicorn on loopback, free
ports; a ``redis-server`` of its own in a temporary directory, AOF on with
``appendfsync everysec``, as ``docker-compose.scale.yml`` runs it), opens
``--rooms`` rooms of four seats and plays random legal moves as fast as the
server answers (a closed loop: a seat moves as soon as its state awaits it).
With two processes, first the seats of every room alternate between them
(every move crosses the bus: the worst case), then every room sits on one
process, the rooms alternating (as ``deploy/nginx.conf`` routes them). The
client runs in a process of its own.

Prints, per setup, the moves per second over ``--seconds`` (after
``--warmup``), each move's round trip (from sending it to the mover's next
state, median and 99th percentile, in ms) and the CPU the server processes
and Redis used (% of one core). On this 2-core machine client, servers and
Redis share the cores: read the figures as relative.

Then what one move costs Redis itself, with the storage driven directly
(``--cost-rooms`` rooms with a move in flight each, 50 moves a room): Redis's
CPU per move (the append script and one other process's read of the entry),
and the bytes each move adds to the append-only file and to memory.

Usage: ``python bench/scale.py [--rooms 40] [--seconds 10] [--warmup 2]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import websockets

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.latency import free_port, post_room, start_server  # noqa: E402

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def start_redis(directory: Path) -> tuple[subprocess.Popen[bytes], str]:
    """A redis-server on a free port keeping its AOF in ``directory``."""
    port = free_port()
    proc = subprocess.Popen([REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--dir",
                             str(directory), "--appendonly", "yes", "--appendfsync", "everysec",
                             "--save", "", "--logfile", str(directory / "redis.log")])
    deadline = time.monotonic() + 10
    while subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True).stdout != b"PONG\n":
        if time.monotonic() > deadline:
            raise RuntimeError("redis-server did not start")
        time.sleep(0.1)
    return proc, f"redis://127.0.0.1:{port}/0"


async def play(bases: list[str], rooms: int, warmup: float, seconds: float,
               split: bool = True) -> dict[str, Any]:
    """Play ``rooms`` rooms for ``warmup + seconds``; seat ``k`` of room ``i``
    connects to ``bases[k % len(bases)]`` if ``split``, else to
    ``bases[i % len(bases)]``. The figures of the measured part."""
    rng = random.Random(1)
    rtts: list[float] = []
    moves = 0
    loop = asyncio.get_running_loop()
    start = loop.time()
    measure_from, stop_at = start + warmup, start + warmup + seconds
    errors: dict[str, int] = {}

    async def room_loop(index: int) -> None:
        nonlocal moves
        room = post_room(bases[index % len(bases)], {"game": "get-stuck-4"})["room"]
        seats = ["N", "E", "S", "W"]
        where = [bases[(k if split else index) % len(bases)] for k in range(4)]
        sockets = [await websockets.connect(w.replace("http", "ws") + f"/ws/{room}") for w in where]
        for ws, seat in zip(sockets, seats, strict=True):
            await ws.send(json.dumps({"type": "join", "seat": seat, "name": seat}))

        async def seat_loop(k: int, ws: Any) -> None:
            nonlocal moves
            sent: tuple[int, float] | None = None
            async for text in ws:
                frame = json.loads(text)
                if frame["type"] == "error":
                    errors[frame["code"]] = errors.get(frame["code"], 0) + 1
                    sent = None  # refused: the state that follows says what to do
                    continue
                if frame["type"] != "state" or frame["you"] != seats[k]:
                    continue
                now = loop.time()
                version = frame["version"]
                if sent is not None and version > sent[0]:
                    if now >= measure_from and sent[1] >= measure_from and now <= stop_at:
                        rtts.append(now - sent[1])
                        moves += 1
                    sent = None
                if now > stop_at:
                    return
                if sent is not None:
                    continue
                if frame["phase"] == "playing" and frame["legal_moves"]:
                    sent = (version, now)
                    await ws.send(json.dumps({"type": "move", "version": version,
                                              "move": rng.choice(frame["legal_moves"])}))
                elif k == 0 and frame["phase"] in ("deal_over", "match_over"):
                    kind = "next_deal" if frame["phase"] == "deal_over" else "rematch"
                    await ws.send(json.dumps({"type": kind, "version": version}))

        try:
            await asyncio.gather(*(seat_loop(k, ws) for k, ws in enumerate(sockets)))
        finally:
            for ws in sockets:
                await ws.close()

    # A seat stops at the first frame after the window; the others of its
    # room may then wait for nothing: the play ends a little after the window.
    everything = asyncio.gather(*(room_loop(i) for i in range(rooms)))
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(everything, warmup + seconds + 3)
    rtts.sort()
    return {"moves_per_s": moves / seconds,
            "rtt_ms_p50": 1000 * statistics.median(rtts) if rtts else float("nan"),
            "rtt_ms_p99": 1000 * rtts[int(0.99 * (len(rtts) - 1))] if rtts else float("nan"),
            "errors": errors}


def client(bases: list[str], rooms: int, warmup: float, seconds: float, split: bool, out: Any) -> None:
    """The client process: plays, then sends its figures through ``out``."""
    out.send(asyncio.run(play(bases, rooms, warmup, seconds, split)))


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM, then SIGKILL for whatever has not ended 30 s later."""
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            print(f"process {proc.pid} did not stop in 30 s: killed", file=sys.stderr)
            proc.kill()
            proc.wait(10)


def measure(name: str, envs: list[dict[str, str]], args: argparse.Namespace,
            extra_pids: list[int], split: bool = True) -> dict[str, Any]:
    """Start one server per entry of ``envs``, run the client, stop them."""
    ports = [free_port() for _ in envs]
    env_base = {"CARDBOARD_ROOM_CREATE_BURST": "10000", "CARDBOARD_BOT_POOL": "thread"}
    servers = [start_server(p, {**env_base, **e}) for p, e in zip(ports, envs, strict=True)]
    pids = [s.pid for s in servers] + extra_pids
    try:
        receive, send = multiprocessing.Pipe(duplex=False)
        proc = multiprocessing.Process(target=client, args=([f"http://127.0.0.1:{p}" for p in ports],
                                                            args.rooms, args.warmup, args.seconds, split,
                                                            send))
        proc.start()
        time.sleep(args.warmup)
        before = [cpu_seconds(p) for p in pids]
        time.sleep(args.seconds)
        after = [cpu_seconds(p) for p in pids]
        if not receive.poll(args.seconds + 60):
            raise RuntimeError(f"{name}: the client did not finish")
        figures: dict[str, Any] = receive.recv()
        proc.join(10)
        figures["load_average"] = os.getloadavg()[0]
    finally:
        stop(servers)
    used = [100 * (b - a) / args.seconds for a, b in zip(before, after, strict=True)]
    figures["server_cpu_pct"] = [round(u) for u in used[:len(servers)]]
    figures["redis_cpu_pct"] = round(sum(used[len(servers):])) if extra_pids else None
    figures["setup"] = name
    return figures


async def redis_cost(url: str, directory: Path, rooms: int, moves: int = 50) -> dict[str, float]:
    """Redis CPU (µs), AOF bytes and memory bytes per stored move."""
    from app.storage.base import Entry, RoomMeta
    from app.storage.redis import RedisStorage

    store = RedisStorage(url)
    await store.open()
    now = time.time()
    ids = [f"bench{i:06d}" for i in range(rooms)]

    def meta(room: str, version: int) -> RoomMeta:
        return RoomMeta(room, "get-stuck-4", now, now, now, version, "playing")

    for room in ids:
        await asyncio.wrap_future(store.create(meta(room, 0), Entry(0, now, {"t": "create", "id": room})))

    async def cpu() -> float:
        info = await store.client.info("cpu")
        return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])

    async def sizes() -> tuple[int, int]:
        aof = sum(f.stat().st_size for f in (directory / "appendonlydir").iterdir())
        memory = int((await store.client.info("memory"))["used_memory"])
        return aof, memory

    action = {"t": "move", "seat": "N", "move": "c3-d3", "hand_back": []}
    cpu0, (aof0, mem0) = await cpu(), await sizes()
    for version in range(1, moves + 1):
        await asyncio.gather(*(asyncio.wrap_future(store.append(meta(r, version),
                                                                Entry(version, time.time(), action)))
                               for r in ids))
        await asyncio.gather(*(store.since(r, version - 1) for r in ids))
    cpu1 = await cpu()
    await asyncio.sleep(1.2)  # appendfsync everysec
    aof1, mem1 = await sizes()
    await store.close()
    n = rooms * moves
    return {"redis_cpu_us": 1e6 * (cpu1 - cpu0) / n, "aof_bytes": (aof1 - aof0) / n,
            "memory_bytes": (mem1 - mem0) / n}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rooms", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--cost-rooms", type=int, default=200)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stop the servers on the way out
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        results.append(measure("1 process, SQLite", [{"CARDBOARD_DATABASE": f"{tmp}/bench.db"}], args, []))
        redis, url = start_redis(Path(tmp))
        try:
            env = {"CARDBOARD_REDIS_URL": url}
            results.append(measure("1 process, Redis", [env], args, [redis.pid]))
            subprocess.run(["redis-cli", "-u", url, "flushall"], capture_output=True)
            results.append(measure("2 processes, split", [env, env], args, [redis.pid]))
            subprocess.run(["redis-cli", "-u", url, "flushall"], capture_output=True)
            results.append(measure("2 processes, by room", [env, env], args, [redis.pid], split=False))
            subprocess.run(["redis-cli", "-u", url, "flushall"], capture_output=True)
            cost = asyncio.run(redis_cost(url, Path(tmp), args.cost_rooms))
        finally:
            stop([redis])
    print(f"Get Stuck for Four, {args.rooms} rooms of 4 sockets, closed loop, {args.seconds:g} s measured")
    print(f"{'setup':<22} {'moves/s':>8} {'rtt p50 ms':>11} {'rtt p99 ms':>11}  server CPU %   Redis CPU %")
    for r in results:
        print(f"{r['setup']:<22} {r['moves_per_s']:>8.0f} {r['rtt_ms_p50']:>11.2f} {r['rtt_ms_p99']:>11.2f}"
              f"  {'+'.join(map(str, r['server_cpu_pct'])):<13} {r['redis_cpu_pct'] or '-'}"
              + (f"   errors {r['errors']}" if r["errors"] else ""))
    print(f"Redis per stored move ({args.cost_rooms} rooms in flight): {cost['redis_cpu_us']:.0f} µs of"
          f" its CPU (append script + one LRANGE), {cost['aof_bytes']:.0f} bytes of append-only file,"
          f" {cost['memory_bytes']:.0f} bytes of memory")
    loads = ", ".join(f"{r['load_average']:.1f}" for r in results)
    print(f"machine load average (1 min) after each run: {loads}, on {os.cpu_count()} cores")
    print(json.dumps({"setups": results, "redis_per_move": cost}))


if __name__ == "__main__":
    main()
