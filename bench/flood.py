"""Round trip of a move in one room while a connection floods another.

Starts a real server (uvicorn on loopback, a free port, the ``Makefile``'s
flags) and measures the round trip of a person's move in a Get Stuck room
(``bench/latency.py``'s two clients), first on a quiet server, then while a
separate process floods another room: one websocket at a time sending the
same small frame as fast as it can, reconnecting whenever it is closed, as
an attacker would. The server rate-limits it (300 frames in 10 s), tells it
once, closes it with 1008 after 50 refused frames and refuses its new
connections beyond 120 a minute (close 4429).

Prints the median, 99th percentile and maximum round trip in milliseconds
for both runs, and what the flood sent and how it was closed.

Usage: ``python bench/flood.py [--moves 300] [--root DIR]``; ``--root`` runs
the server from another checkout (e.g. an older commit, to compare) with
that checkout's ``Makefile`` flags.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import sys
import time
from collections import Counter
from multiprocessing.managers import DictProxy
from pathlib import Path
from typing import Any

import websockets

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.latency import post_room, round_trips, summary  # noqa: E402
from bench.server import free_port, makefile_flags, start_server, stop_server  # noqa: E402

FRAME = json.dumps({"type": "move", "move": "a1", "version": 0})
"""What the flood sends: a move from a spectator (refused as ``not_seated``,
with a fresh state, while the rate limit lets it through)."""


def run_flood(base: str, room: str, report: DictProxy[str, Any]) -> None:
    """Entry point of the flood process: flood ``room`` until killed, keeping
    counts in ``report``."""
    asyncio.run(_flood(base.replace("http", "ws") + f"/ws/{room}", report))


async def _flood(url: str, report: DictProxy[str, Any]) -> None:
    closes: Counter[str] = Counter()
    sent = connections = 0
    while True:
        try:
            async with websockets.connect(url, max_queue=None) as ws:
                connections += 1
                while True:
                    await ws.send(FRAME)
                    sent += 1
                    if sent % 500 == 0:
                        report.update(sent=sent, connections=connections, closes=dict(closes))
                        await asyncio.sleep(0)
        except websockets.ConnectionClosed as exc:
            closes[str(exc.rcvd.code if exc.rcvd else "none")] += 1
        except websockets.InvalidStatus as exc:
            closes[f"HTTP {exc.response.status_code}"] += 1
        except OSError:
            closes["refused"] += 1
            await asyncio.sleep(0.01)
        report.update(sent=sent, connections=connections, closes=dict(closes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=300, help="moves measured per run")
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout the server runs from")
    args = parser.parse_args()

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server(port, {}, root=args.root, flags=makefile_flags(args.root))
    try:
        quiet = asyncio.run(round_trips(base, args.moves))
        room = post_room(base, {"game": "get-stuck"})["room"]
        with multiprocessing.Manager() as manager:
            report: DictProxy[str, Any] = manager.dict(sent=0, connections=0, closes={})
            flood = multiprocessing.Process(target=run_flood, args=(base, room, report), daemon=True)
            flood.start()
            while report["sent"] < 1000 and flood.is_alive():
                time.sleep(0.05)  # the flood is under way
            start = time.monotonic()
            flooded = asyncio.run(round_trips(base, args.moves))
            elapsed = time.monotonic() - start
            flood.terminate()
            flood.join()
            done = dict(report)
    finally:
        stop_server(server)

    print(f"server: {args.root}")
    print(f"{'round trip of a move (ms)':<28}{'moves':>6}{'median':>10}{'p99':>10}{'max':>10}")
    print(summary("quiet server", quiet, 99, 28))
    print(summary("another room flooded", flooded, 99, 28))
    print(f"the flood: {done['sent']} frames sent over {done['connections']} connections"
          f" (closes by code: {done['closes']}) in about {elapsed:.1f} s of measuring")


if __name__ == "__main__":
    main()
