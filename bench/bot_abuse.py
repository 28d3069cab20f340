"""How long a person's computer opponent takes to answer while others keep
the server's computer players busy.

Starts a real server (uvicorn on loopback, a free port, rooms in memory) with
the usual computer-player settings: a strong player thinks 1 s per move
(``CARDBOARD_BOT_SECONDS``), in one worker process per CPU. One person plays
Get Stuck against a strong computer player over a websocket; a *reply* is
the time from sending the person's move to receiving the state with the
computer's answer (its natural pause of 0.6 to 1.2 s included). Replies are
measured first on an idle server, then while ``--rooms`` rooms of Suitors
for four (four strong computer players each) are watched by spectators in
another process, so that their computers think without a break.

One address creates all those rooms, so the cap on rooms with computer
players per address (``CARDBOARD_BOT_ROOMS_PER_ADDRESS``, 10 by default) is
raised to let them all in: what is measured is the searches' queue, where a
person's room goes first (``docs/protocol.md``, "Fair use").

Prints the median and the maximum reply, in seconds, for both runs, and how
many frames the rooms of computers sent meanwhile.

Usage: ``python bench/bot_abuse.py [--replies 20] [--rooms 30]
[--root PATH]``; ``--root`` serves the app of another checkout (for example
an older commit exported with ``git archive``), to compare.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import random
import statistics
import sys
import time
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path

import websockets

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.latency import next_state, post_room, report, run_watchers  # noqa: E402
from bench.server import free_port, start_server, stop_server  # noqa: E402

SUITORS_FOR_FOUR = {"game": "suitors", "options": {"players": 4},
                    "bots": {"level": "strong", "seats": "all"}}
"""A room of four strong computer players, as the abuse creates them."""


async def replies(base: str, count: int, rng: random.Random) -> list[float]:
    """Seconds from each of the person's moves to the computer's answer, for
    ``count`` answers, in a room of Get Stuck against a strong computer
    player (new deals and matches as needed)."""
    made = post_room(base, {"game": "get-stuck", "options": {"deals": 20},
                            "bots": {"level": "strong", "seats": "others"}})
    me = made["seat"]
    out: list[float] = []
    async with websockets.connect(base.replace("http", "ws") + f"/ws/{made['room']}") as ws:
        await next_state(ws)
        await ws.send(json.dumps({"type": "join", "seat": me, "name": "Person"}))
        sent: tuple[float, int] | None = None  # when the last move went, and its log index
        answered = -1  # the last version the person acted on
        while len(out) < count:
            state = await next_state(ws)
            if state["you"] != me or state["version"] <= answered:
                continue
            log = state["view"]["log"]
            if sent is not None and any(e["seat"] != me for e in log[sent[1] + 1:]):
                out.append(time.perf_counter() - sent[0])
                sent = None
            if state["phase"] in ("deal_over", "match_over"):
                kind = "next_deal" if state["phase"] == "deal_over" else "rematch"
                await ws.send(json.dumps({"type": kind, "version": state["version"]}))
                answered, sent = state["version"], None
            elif state["legal_moves"]:
                move = rng.choice(state["legal_moves"])
                sent = (time.perf_counter(), len(log))
                await ws.send(json.dumps({"type": "move", "move": move, "version": state["version"]}))
                answered = state["version"]
    return out


def line(name: str, samples: list[float]) -> str:
    """One row of the table: ``name``, the count, the median and the maximum."""
    return f"{name:<44}{len(samples):>8}{statistics.median(samples):>10.2f}{max(samples):>10.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replies", type=int, default=20, help="computer replies measured per run")
    parser.add_argument("--rooms", type=int, default=30, help="rooms of four strong computer players")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose app is served")
    args = parser.parse_args()

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {"CARDBOARD_DATABASE": ":memory:", "CARDBOARD_BOT_ROOMS_PER_ADDRESS": str(args.rooms + 1),
           "CARDBOARD_BOT_ROOMS": str(args.rooms + 10), "CARDBOARD_ROOM_CREATE_BURST": str(args.rooms + 10),
           "CARDBOARD_WS_PER_ADDRESS": str(args.rooms + 20)}
    rng = random.Random(1)
    server = start_server(port, env, root=args.root)
    try:
        idle = asyncio.run(replies(base, args.replies, rng))
        rooms = [post_room(base, SUITORS_FOR_FOUR)["room"] for _ in range(args.rooms)]
        frames: Synchronized[int] = multiprocessing.Value("q", 0)
        watchers = multiprocessing.Process(target=run_watchers, args=(base, rooms, frames), daemon=True)
        watchers.start()
        deadline = time.monotonic() + 60
        while frames.value < 2 * args.rooms and time.monotonic() < deadline:
            time.sleep(0.2)  # every room is watched and its computers are thinking
        before, start = frames.value, time.monotonic()
        busy = asyncio.run(replies(base, args.replies, rng))
        sent, elapsed = frames.value - before, time.monotonic() - start
        watchers.terminate()
        watchers.join()
    finally:
        stop_server(server)

    report(f"server from {args.root}; strong computer players, 1 s per move, one worker process"
           " per CPU", f"{'computer reply to a person (s)':<44}{'replies':>8}{'median':>10}{'max':>10}",
           [line("idle server", idle), line(f"{args.rooms} watched rooms of 4 strong computers", busy)],
           sent, elapsed)


if __name__ == "__main__":
    main()
