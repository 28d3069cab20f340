"""A client that stops answering (no close frame, no pong) is shown as
disconnected within 15 s: the server pings every 5 s and gives up 5 s after
an unanswered ping (the ``Makefile``'s ``UVICORN_WS``, also in the
``Dockerfile``). The other way round, a client that cannot see those pings
(a page) sends a ``ping`` frame and gets a ``pong`` at once, and nothing
else happens in the room."""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path

from liveserver import (
    FrameReader,
    after_headers,
    client_frame,
    live_server,
    next_reply,
    next_state,
    raw_handshake,
)
from roomtest import make_client, play_one, table
from websockets.sync.client import connect

from app.protocol import PING_TEXT, PONG_TEXT
from app.ws import _Reader
from bench.server import makefile_flags

ROOT = Path(__file__).resolve().parents[2]
SEEN_GONE_SECONDS = 15.0


def _flag(flags: list[str], name: str) -> float:
    return float(flags[flags.index(name) + 1])


def test_the_ping_settings_see_a_silent_client_within_15_s() -> None:
    flags = makefile_flags()
    interval, timeout = _flag(flags, "--ws-ping-interval"), _flag(flags, "--ws-ping-timeout")
    assert interval + timeout < SEEN_GONE_SECONDS
    assert interval < 60 / 2  # an idle socket talks to a proxy with a 60 s read timeout
    cmd = re.search(r"^CMD \[(.*?)\]$", (ROOT / "Dockerfile").read_text(), re.MULTILINE | re.DOTALL)
    assert cmd is not None
    docker = json.loads("[" + cmd.group(1).replace("\\\n", "") + "]")
    assert docker[docker.index("--ws-ping-interval") + 1] == f"{interval:g}"
    assert docker[docker.index("--ws-ping-timeout") + 1] == f"{timeout:g}"
    assert all(flag in docker for flag in flags)


def test_a_client_that_stops_answering_is_seen_gone_within_15_s() -> None:
    with live_server() as live:
        room = live.new_room()
        with connect(f"{live.ws_base}/ws/{room}") as watcher:
            next_state(watcher)
            sock, answer = raw_handshake(live.port, f"/ws/{room}")
            reader = FrameReader(sock, after_headers(answer))
            assert reader.next() is not None  # its first state
            join = {"type": "join", "seat": "red", "name": "Gone"}
            sock.sendall(client_frame(1, json.dumps(join).encode()))
            seats = []
            while not any(s.get("name") == "Gone" and s["connected"] for s in seats):
                seats = next_state(watcher)["view"]["seats"]
            silent = time.monotonic()  # from now on it reads nothing and answers no ping
            while True:
                seats = next_state(watcher, timeout=SEEN_GONE_SECONDS)["view"]["seats"]
                red = next(s for s in seats if s["seat"] == "red")
                if not red["connected"]:
                    break
            took = time.monotonic() - silent
            sock.close()
        assert took < SEEN_GONE_SECONDS, took
        # and a client that answers stays connected past a few pings
        with connect(f"{live.ws_base}/ws/{room}") as alive:
            next_state(alive)
            time.sleep(_flag(makefile_flags(), "--ws-ping-interval") * 2.5)
            alive.send(json.dumps({"type": "leave"}))
            assert next_reply(alive)["code"] == "not_seated"


def test_a_ping_frame_is_answered_with_a_pong_to_its_sender_alone() -> None:
    with make_client() as client, table(client, "get-stuck", spectators=1) as (_, players, (watcher,)):
        first = players[0].last
        assert first is not None
        version = first["version"]
        for peer in (watcher, players[1]):
            peer.send(type="ping")
            assert peer.recv() == {"type": "pong"}
        # The room did not move, and nobody else heard of the pings: the
        # next frame anyone gets is the state after a move (state() fails
        # on any other frame).
        assert play_one(players, [watcher])["version"] == version + 1


def test_a_ping_behind_a_frame_still_being_handled_is_answered_at_once() -> None:
    """While a frame waits (a move whose save is slow: Redis may take up to
    20 s to confirm), a ping that comes after it is answered at once rather
    than after it, so that the page does not take a slow save for a dead
    path; any other frame waits its turn. (The room page writes a ping as
    exactly ``PING_TEXT``.)"""
    pushed: list[str] = []

    class Conn:
        def push(self, text: str) -> None:
            pushed.append(text)

    async def scenario() -> None:
        reader = _Reader(None, Conn(), None, None, None)  # type: ignore[arg-type]
        reader.done = asyncio.get_running_loop().create_future()
        blocker = asyncio.Event()
        reader.task = asyncio.ensure_future(blocker.wait())  # a frame being handled
        reader.hold = lambda busy: None
        reader.put({"type": "websocket.receive", "text": PING_TEXT})
        assert pushed == [PONG_TEXT] and reader.backlog == []
        move = {"type": "websocket.receive", "text": '{"type":"move","move":"c4","version":3}'}
        reader.put(move)
        assert reader.backlog == [move] and pushed == [PONG_TEXT]
        blocker.set()
        await reader.task

    asyncio.run(scenario())
    assert json.loads(PING_TEXT) == {"type": "ping"} and json.loads(PONG_TEXT) == {"type": "pong"}
