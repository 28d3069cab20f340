"""Connection limits: websockets per client address (``app/limits.py``) and
the deadline for a whole HTTP request (``app/handshake.py``), each shown
refusing an attacker while a normal game plays on."""

from __future__ import annotations

import contextlib
import json
import socket
import time
import urllib.request

import pytest
from liveserver import Live, live_server, play_get_stuck, raw_handshake
from roomtest import make_client, new_room
from starlette.websockets import WebSocketDisconnect
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from app.limits import CLOSE_TOO_MANY_CONNECTIONS, AddressLimits, address_key
from app.settings import Settings

ATTACKER = {"X-Forwarded-For": "203.0.113.5"}
PLAYER = {"X-Forwarded-For": "198.51.100.7"}


def test_address_limits_at_once_and_per_minute() -> None:
    now = [0.0]
    limits = AddressLimits(at_once=2, per_minute=3, clock=lambda: now[0])
    assert limits.open("a") is None and limits.open("a") is None
    refusal = limits.open("a")
    assert refusal is not None and "at most 2 open at once" in refusal
    assert limits.open("b") is None  # another address is not affected
    limits.close("a")
    assert limits.open("a") is None  # the third of the minute
    limits.close("a")
    refusal = limits.open("a")
    assert refusal is not None and "at most 3 a minute" in refusal
    now[0] = 59.9
    assert limits.open("a") is not None
    now[0] = 60.0  # the first two leave the minute
    assert limits.open("a") is None


def test_address_limits_forget_quiet_addresses() -> None:
    now = [0.0]
    limits = AddressLimits(at_once=5, per_minute=5, clock=lambda: now[0])
    for i in range(1100):
        assert limits.open(f"10.0.{i // 256}.{i % 256}") is None
    now[0] = 61.0
    for i in range(1100):
        limits.close(f"10.0.{i // 256}.{i % 256}")
    assert len(limits) < 1100


def test_address_key_groups_ipv6_by_64() -> None:
    assert address_key("192.0.2.7") == "192.0.2.7"
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:bbbb::9") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key("::ffff:192.0.2.7") == "192.0.2.7"
    assert address_key("testclient") == "testclient"
    assert address_key(None) == "?"


def test_a_connection_beyond_the_limit_is_told_and_closed() -> None:
    with make_client(Settings(ws_per_address=2)) as client:
        room = new_room(client)
        with client.websocket_connect(f"/ws/{room}") as a, client.websocket_connect(f"/ws/{room}") as b:
            assert a.receive_json()["type"] == b.receive_json()["type"] == "state"
            with client.websocket_connect(f"/ws/{room}") as c:
                err = c.receive_json()
                assert err["type"] == "error" and err["code"] == "rate_limited"
                assert "at most 2 open at once" in err["message"]
                with pytest.raises(WebSocketDisconnect) as closed:
                    c.receive_json()
                assert closed.value.code == CLOSE_TOO_MANY_CONNECTIONS
        # both closed: there is room again
        with client.websocket_connect(f"/ws/{room}") as d:
            assert d.receive_json()["type"] == "state"


def _refused(live: Live, room: str, headers: dict[str, str]) -> tuple[str, int]:
    with connect(f"{live.ws_base}/ws/{room}", additional_headers=headers) as ws:
        frame = json.loads(ws.recv(timeout=5))
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=5)
    assert closed.value.rcvd is not None
    return frame["code"], closed.value.rcvd.code


def test_a_real_server_limits_one_address_and_not_another() -> None:
    with live_server({"CARDBOARD_WS_PER_ADDRESS": "5", "CARDBOARD_WS_PER_MINUTE": "8"}) as live:
        room = live.new_room()
        with contextlib.ExitStack() as stack:
            held = [stack.enter_context(connect(f"{live.ws_base}/ws/{room}", additional_headers=ATTACKER))
                    for _ in range(5)]
            assert all(json.loads(ws.recv(timeout=5))["type"] == "state" for ws in held)
            assert _refused(live, room, ATTACKER) == ("rate_limited", CLOSE_TOO_MANY_CONNECTIONS)
            assert play_get_stuck(live, moves=4, headers=PLAYER) >= 4  # another address plays on
        # 5 held, 1 refused (not counted): 3 more this minute, then refused
        for _ in range(3):
            with connect(f"{live.ws_base}/ws/{room}", additional_headers=ATTACKER) as ws:
                assert json.loads(ws.recv(timeout=5))["type"] == "state"
        assert _refused(live, room, ATTACKER) == ("rate_limited", CLOSE_TOO_MANY_CONNECTIONS)
        assert "WebSocket /ws/…" in live.log()


# ---- the request deadline -------------------------------------------------------------------

def _closed_within(sock: socket.socket, seconds: float) -> float:
    """Seconds until the server closed ``sock`` (reads and drops anything
    it sends); fails if it is still open after ``seconds``."""
    start = time.monotonic()
    sock.settimeout(seconds)
    with contextlib.suppress(ConnectionResetError):
        while sock.recv(65536):
            pass
    return time.monotonic() - start


def test_half_sent_and_silent_connections_are_closed_while_a_game_plays() -> None:
    with live_server({"CARDBOARD_HANDSHAKE_SECONDS": "1", "CARDBOARD_WS_PER_MINUTE": "1000"}) as live:
        room = live.new_room()
        start = time.monotonic()
        half = []
        for i in range(300):
            s = socket.create_connection(("127.0.0.1", live.port), timeout=5)
            if i % 3:
                s.sendall(f"GET /ws/{room} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n".encode())
            half.append(s)
        body = socket.create_connection(("127.0.0.1", live.port), timeout=5)
        body.sendall(b"POST /api/rooms HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"game\"")
        # a websocket opened before the deadline stays open past it
        with connect(f"{live.ws_base}/ws/{room}") as ws:
            assert json.loads(ws.recv(timeout=5))["type"] == "state"
            assert play_get_stuck(live, moves=4) >= 4
            for s in [*half, body]:
                _closed_within(s, 5)
                s.close()
            took = time.monotonic() - start
            assert took < 5, took
            time.sleep(max(0.0, 1.5 - took))
            ws.send(json.dumps({"type": "leave"}))
            assert json.loads(ws.recv(timeout=5))["code"] == "not_seated"
        with urllib.request.urlopen(live.base + "/healthz", timeout=2) as r:
            assert r.status == 200


def test_a_keep_alive_connection_must_finish_its_next_request_in_time() -> None:
    with live_server({"CARDBOARD_HANDSHAKE_SECONDS": "1"}) as live:
        s = socket.create_connection(("127.0.0.1", live.port), timeout=5)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert s.recv(4096).startswith(b"HTTP/1.1 200")
        s.sendall(b"GET /healthz HTTP/1.1\r\n")  # and no more, which once cancelled every timer
        assert _closed_within(s, 4) < 3
        s.close()
        sock, answer = raw_handshake(live.port, f"/ws/{live.new_room()}")
        assert answer.startswith(b"HTTP/1.1 101")
        sock.close()
