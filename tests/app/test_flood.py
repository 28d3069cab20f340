"""A connection that floods: told once that it is rate limited, then closed
with 1008 (``app/limits.py`` ``FloodGuard``, ``app/ws.py``), while other rooms
play on."""

from __future__ import annotations

import json
import threading

import pytest
from fastapi.testclient import TestClient
from liveserver import live_server, play_get_stuck
from roomtest import connect, new_room
from starlette.websockets import WebSocketDisconnect
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as ws_connect

from app.limits import (
    CLOSE_FLOOD,
    CLOSE_TOO_MANY_CONNECTIONS,
    FLOOD_COOLDOWN,
    FLOOD_FRAMES,
    AddressLimits,
    FloodGuard,
    Verdict,
)
from app.protocol import RATE_FRAMES

ATTACKER = {"X-Forwarded-For": "203.0.113.9"}
PLAYER = {"X-Forwarded-For": "198.51.100.20"}


def test_flood_guard() -> None:
    now = [0.0]
    guard = FloodGuard(limit=4, window=10.0, clock=lambda: now[0])
    assert [guard.refused() for _ in range(3)] == [Verdict.TELL, Verdict.DROP, Verdict.DROP]
    guard.accepted()
    assert guard.refused() is Verdict.CLOSE  # the fourth refusal in 10 s
    now[0] = 20.0
    guard = FloodGuard(limit=4, window=10.0, clock=lambda: now[0])
    assert guard.refused() is Verdict.TELL
    guard.accepted()
    assert guard.refused() is Verdict.TELL  # told again after an accepted frame


def test_a_flooding_address_is_barred_for_a_while() -> None:
    now = [0.0]
    limits = AddressLimits(at_once=5, per_minute=100, clock=lambda: now[0])
    limits.bar("a")
    refusal = limits.open("a")
    assert refusal is not None and "flooded" in refusal and f"{FLOOD_COOLDOWN:.0f} s" in refusal
    assert limits.open("b") is None
    now[0] = FLOOD_COOLDOWN
    assert limits.open("a") is None


def test_a_flooding_connection_is_told_once_then_closed(client: TestClient) -> None:
    room = new_room(client)
    with connect(client, room) as calm, connect(client, room) as flood:
        for _ in range(RATE_FRAMES + FLOOD_FRAMES):
            flood.send_text("{}")
        for _ in range(RATE_FRAMES):
            assert flood.recv()["code"] == "bad_field"
        assert flood.recv()["code"] == "rate_limited"  # one error, not one per refused frame
        with pytest.raises(WebSocketDisconnect) as closed:
            flood.recv()
        assert closed.value.code == CLOSE_FLOOD
        calm.probe()  # the other connection is fine


def test_a_real_server_closes_a_flood_while_another_room_plays() -> None:
    with live_server() as live:
        room = live.new_room()
        outcome: dict[str, object] = {}

        def flood() -> None:
            with ws_connect(f"{live.ws_base}/ws/{room}", max_queue=None,  # reads all it is sent
                            additional_headers=ATTACKER) as ws:
                ws.recv(timeout=5)
                frame = json.dumps({"type": "move", "move": "a1", "version": 0})
                with pytest.raises(ConnectionClosed) as closed:
                    for _ in range(100_000):
                        ws.send(frame)
                outcome["close"] = closed.value.rcvd.code if closed.value.rcvd else None
                codes: list[str] = []
                with pytest.raises(ConnectionClosed):  # what came before the close
                    while True:
                        reply = json.loads(ws.recv(timeout=10))
                        codes.append(reply.get("code", reply["type"]))
                outcome["codes"] = codes

        t = threading.Thread(target=flood)
        t.start()
        try:
            assert play_get_stuck(live, moves=6, headers=PLAYER) >= 6
        finally:
            t.join(timeout=30)
        # the flood's address may not come back for a while; others may
        with ws_connect(f"{live.ws_base}/ws/{room}", additional_headers=ATTACKER) as ws:
            err = json.loads(ws.recv(timeout=5))
            assert err["code"] == "rate_limited" and "flooded" in err["message"]
            with pytest.raises(ConnectionClosed) as closed:
                ws.recv(timeout=5)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == CLOSE_TOO_MANY_CONNECTIONS
        assert play_get_stuck(live, moves=2, headers=PLAYER) >= 2
        assert outcome["close"] == CLOSE_FLOOD
        codes = outcome["codes"]
        assert isinstance(codes, list) and codes.count("rate_limited") == 1
        assert codes.count("not_seated") == RATE_FRAMES
