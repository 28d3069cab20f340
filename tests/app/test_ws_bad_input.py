"""Malformed and hostile frames: each gets its error, the connection stays
open and the room is unchanged (the whole state frame is compared)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient
from roomtest import Peer, mover, table

from app.protocol import MAX_FRAME_BYTES, RATE_FRAMES, read_frame
from app.ws import RateLimiter


def refused(peers: list[Peer], watchers: list[Peer], send: Any, code: str) -> dict[str, Any]:
    """Send something from the mover, expect ``code``, then check that every
    connection's state is exactly as before. Returns the error frame."""
    p = mover(peers)
    before = {id(x): x.last for x in [*peers, *watchers]}
    send(p)
    err = p.recv()
    assert err["type"] == "error" and err["code"] == code, err
    for x in [*peers, *watchers]:
        assert x.probe() == before[id(x)]
    return err


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("{", "bad_json"),
        ("", "bad_json"),
        ("not json", "bad_json"),
        ('{"type":"move","move":"c4","version":NaN}', "bad_json"),
        ('{"type":"move","move":"c4","version":Infinity}', "bad_json"),
        ("[" * 30000 + "]" * 30000, "bad_json"),
        ("1" * 5000, "bad_json"),
        ("[1, 2]", "bad_frame"),
        ('"move"', "bad_frame"),
        ("42", "bad_frame"),
        ("null", "bad_frame"),
        ("{}", "bad_field"),
        ('{"type": 5}', "bad_field"),
        ('{"type": null}', "bad_field"),
        ('{"type":"dance"}', "unknown_type"),
        ('{"type":"MOVE","move":"c4","version":2}', "unknown_type"),
        ('{"type":"move","version":2}', "bad_field"),
        ('{"type":"move","move":"c4"}', "bad_field"),
        ('{"type":"move","move":"c4","version":"2"}', "bad_field"),
        ('{"type":"move","move":"c4","version":-1}', "bad_field"),
        ('{"type":"move","move":"c4","version":true}', "bad_field"),
        ('{"type":"move","move":"c4","version":2.5}', "bad_field"),
        ('{"type":"move","move":4,"version":2}', "bad_field"),
        ('{"type":"move","move":null,"version":2}', "bad_field"),
        ('{"type":"next_deal"}', "bad_field"),
        ('{"type":"rematch","version":"x"}', "bad_field"),
        ('{"type":"resume"}', "bad_field"),
        ('{"type":"join","name":"Ann","seat":5}', "bad_field"),
        ('{"type":"join","name":"\\ud800"}', "bad_field"),
        ('{"type":"add_bot"}', "bad_field"),
        ('{"type":"remove_bot","seat":["E"]}', "bad_field"),
    ],
)
def test_bad_text_frames(client: TestClient, text: str, code: str) -> None:
    with table(client, spectators=1) as (_, peers, watchers):
        err = refused(peers, watchers, lambda p: p.send_text(text), code)
        if code == "bad_field":  # it names the field, or says what a name needs
            assert "'" in err["message"] or err["message"] == "a name needs at least one visible character"


def test_a_number_too_long_to_read_is_told_so(client: TestClient) -> None:
    """Valid JSON with a number of 5,000 digits, which Python will not read:
    ``bad_json`` saying what is wrong, not a cut-off line of Python's."""
    with table(client, spectators=1) as (_, peers, watchers):
        text = '{"type":"move","move":"c4","version":%s}' % ("1" * 5000)
        err = refused(peers, watchers, lambda p: p.send_text(text), "bad_json")
        assert err["message"] == ("a number in the frame has more than 4,300 digits; nothing here takes"
                                  " one that long")


def test_binary_frame(client: TestClient) -> None:
    with table(client, spectators=1) as (_, peers, watchers):
        frame = json.dumps({"type": "move", "move": "c4", "version": peers[0].version}).encode()
        err = refused(peers, watchers, lambda p: p.ws.send_bytes(frame), "bad_frame")
        assert "binary" in err["message"]


@pytest.mark.parametrize("size", [MAX_FRAME_BYTES + 1, 10 * MAX_FRAME_BYTES])
def test_oversized_text_frame(client: TestClient, size: int) -> None:
    with table(client, spectators=1) as (_, peers, watchers):
        head = '{"type":"join","name":"'
        text = head + "x" * (size - len(head) - 2) + '"}'
        assert len(text.encode()) == size
        refused(peers, watchers, lambda p: p.send_text(text), "too_large")


def test_oversized_counts_bytes_not_characters(client: TestClient) -> None:
    with table(client) as (_, peers, watchers):
        text = '{"type":"join","name":"' + "é" * (MAX_FRAME_BYTES // 2) + '"}'
        assert len(text) < MAX_FRAME_BYTES < len(text.encode())
        refused(peers, watchers, lambda p: p.send_text(text), "too_large")


def test_oversized_binary_frame(client: TestClient) -> None:
    with table(client) as (_, peers, watchers):
        refused(peers, watchers, lambda p: p.ws.send_bytes(b"x" * (MAX_FRAME_BYTES + 1)), "too_large")


def test_frame_of_exactly_the_limit_is_read(client: TestClient) -> None:
    with table(client) as (_, peers, watchers):
        head = '{"type":"move","version":0,"pad":"'
        text = head + "x" * (MAX_FRAME_BYTES - len(head) - 2) + '"}'
        assert len(text.encode()) == MAX_FRAME_BYTES
        err = refused(peers, watchers, lambda p: p.send_text(text), "bad_field")
        assert "move" in err["message"]


@pytest.mark.parametrize("frame", [
    {"type": "add_bot", "seat": "black"},
    {"type": "add_bot", "seat": "black", "level": "strong"},
    {"type": "remove_bot", "seat": "black"},
])
def test_computer_players_need_a_seat_no_person_holds(client: TestClient, frame: dict) -> None:
    with table(client) as (_, peers, watchers):
        p = mover(peers)
        before = {id(x): x.last for x in [*peers, *watchers]}
        p.send(**frame)
        assert p.error("seat_taken", then_state=True) == before[id(p)]
        for x in [*peers, *watchers]:
            assert x.probe() == before[id(x)]


def test_extra_fields_are_ignored(client: TestClient) -> None:
    with table(client) as (_, peers, _w):
        p = mover(peers)
        assert p.last is not None
        p.send(type="move", move=p.last["legal_moves"][0], version=p.version, note="hi")
        assert p.state()["version"] == p.version


def test_rate_limit(client: TestClient) -> None:
    with table(client, spectators=1) as (_, peers, (w,)):
        before = w.last
        for _ in range(RATE_FRAMES):
            w.send_text("{}")
        for _ in range(RATE_FRAMES):
            assert w.recv()["code"] == "bad_field"
        w.send_text("{")  # rate_limited comes before every other check
        err = w.recv()
        assert err["code"] == "rate_limited" and "300" in err["message"]
        # the other connections are not limited and nothing changed
        for p in peers:
            assert p.probe() == p.last
        assert peers[0].last["version"] == before["version"]  # type: ignore[index]


def test_rate_limiter_window() -> None:
    now = [0.0]
    limiter = RateLimiter(limit=3, window=10.0, clock=lambda: now[0])
    assert [limiter.allow() for _ in range(4)] == [True, True, True, False]
    now[0] = 9.9
    assert not limiter.allow()
    now[0] = 10.0  # the first three leave the window
    assert [limiter.allow() for _ in range(4)] == [True, True, True, False]


def test_read_frame_order() -> None:
    from app.protocol import FrameError

    def code(text: str | None, data: bytes | None = None) -> str:
        with pytest.raises(FrameError) as exc:
            read_frame(text, data)
        return exc.value.code

    big = "{" + " " * MAX_FRAME_BYTES + "}"
    assert code(big) == "too_large"  # before bad_json
    assert code(None, b"\xff" * (MAX_FRAME_BYTES + 1)) == "too_large"
    assert code(None, b"{}") == "bad_frame"
    assert code("[") == "bad_json"
    assert code("[]") == "bad_frame"
    assert code('{"type":"x","version":"y"}') == "unknown_type"  # before bad_field
    assert code('{"type":"move","version":"y"}') == "bad_field"
    frame = read_frame('{"type":"join","name":" Ann ","seat":null}', None)
    assert frame.model_dump() == {"type": "join", "name": "Ann", "seat": None}


def test_a_client_that_stops_reading_is_cut_off() -> None:
    import asyncio

    from app.ws import OUTBOX_FRAMES, WsConnection

    async def run() -> None:
        reading = asyncio.Event()
        received: list[str] = []
        cut: list[bool] = []

        async def send(text: str) -> None:
            await reading.wait()
            received.append(text)

        conn = WsConnection(send, lambda: cut.append(True))
        for i in range(OUTBOX_FRAMES):
            conn.push(str(i))
        assert not conn.too_slow and not cut
        conn.push("one too many")
        assert conn.too_slow and cut == [True]
        conn.push("ignored")  # no error once closed
        reading.set()
        for _ in range(OUTBOX_FRAMES * 2):
            await asyncio.sleep(0)
        assert received == [str(i) for i in range(OUTBOX_FRAMES)]
        assert cut == [True]

    asyncio.run(run())
