"""HTTP request limits (``app/limits.py``): bodies over 16 KiB get 413, the
room request refuses unknown fields, errors quote only short excerpts."""

from __future__ import annotations

import socket
import threading
import time
import urllib.request

import pytest
from fastapi.testclient import TestClient
from liveserver import live_server, play_get_stuck, read_head

from app.limits import EXCERPT_TEXT, EXCERPT_WORD, MAX_BODY_BYTES, excerpt

BODY = b'{"game": "get-stuck"}'


def padded(size: int) -> bytes:
    """A valid room request of exactly ``size`` bytes (JSON with spaces)."""
    return BODY[:-1] + b" " * (size - len(BODY)) + b"}"


def rooms(client: TestClient) -> int:
    return len(client.app.state.lobby.store)  # type: ignore[attr-defined]


def test_a_body_of_16_kib_passes_and_one_byte_more_is_413(client: TestClient) -> None:
    json_type = {"Content-Type": "application/json"}
    ok = client.post("/api/rooms", content=padded(MAX_BODY_BYTES), headers=json_type)
    assert ok.status_code == 201, ok.text
    before = rooms(client)
    big = client.post("/api/rooms", content=padded(MAX_BODY_BYTES + 1), headers=json_type)
    assert big.status_code == 413
    assert big.json() == {"detail": f"the request body is too large: at most {MAX_BODY_BYTES} bytes"}
    assert rooms(client) == before


def test_a_streamed_body_is_counted(client: TestClient) -> None:
    def chunks():  # type: ignore[no-untyped-def]
        for _ in range(40):
            yield b" " * 1024

    r = client.post("/api/rooms", content=chunks(), headers={"Content-Type": "application/json"})
    assert r.status_code == 413


def test_unknown_fields_are_refused(client: TestClient) -> None:
    r = client.post("/api/rooms", json={"game": "get-stuck", "colour": "red"})
    assert r.status_code == 422
    assert r.json()["detail"].startswith("colour:")
    r = client.post("/api/rooms", json={"game": "get-stuck", "bots": {"level": "easy", "speed": 9}})
    assert r.status_code == 422 and "speed" in r.json()["detail"]


@pytest.mark.parametrize("body", [
    {"game": "get-stuck", "options": {"deals": "9" * 12000}},
    {"game": "get-stuck", "options": {"x" * 12000: 1}},
    {"game": "g" * 12000},
    {"game": "get-stuck", "y" * 12000: 1},
    {"game": "get-stuck", "bots": {"seats": ["s" * 12000]}},
])
def test_errors_quote_only_an_excerpt_of_a_bad_value(client: TestClient, body: dict[str, object]) -> None:
    r = client.post("/api/rooms", json=body)
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert len(detail) <= EXCERPT_TEXT
    assert max(len(word) for word in detail.split()) <= EXCERPT_WORD


def test_excerpt() -> None:
    assert excerpt("option 'deals' must be an even number, not 3") == (
        "option 'deals' must be an even number, not 3")
    assert excerpt("not " + "a" * 1000) == "not " + "a" * (EXCERPT_WORD - 3) + "…"
    cut = excerpt("ab " * 1000)
    assert len(cut) == EXCERPT_TEXT and cut.endswith("…")


# ---- a real server ------------------------------------------------------------------------

def _status_line(sock: socket.socket) -> bytes:
    return read_head(sock).split(b"\r\n", 1)[0]


def test_a_real_server_refuses_big_bodies_while_a_game_plays() -> None:
    with live_server() as live:
        head = (f"POST /api/rooms HTTP/1.1\r\nHost: 127.0.0.1:{live.port}\r\n"
                "Content-Type: application/json\r\n").encode()
        # A declared 200 MiB body is refused before any of it is sent.
        declared = socket.create_connection(("127.0.0.1", live.port), timeout=5)
        declared.sendall(head + f"Content-Length: {200 * 1024 * 1024}\r\n\r\n".encode())
        assert _status_line(declared) == b"HTTP/1.1 413 Request Entity Too Large"
        # A chunked body with no end is refused once past 16 KiB, while still
        # streaming: the server does not wait for the end.
        chunked = socket.create_connection(("127.0.0.1", live.port), timeout=5)
        chunked.sendall(head + b"Transfer-Encoding: chunked\r\n\r\n")
        for _ in range(17):
            chunked.sendall(b"400\r\n" + b" " * 1024 + b"\r\n")
        assert _status_line(chunked) == b"HTTP/1.1 413 Request Entity Too Large"

        # Six clients streaming big bodies at once do not stop a game.
        stop = threading.Event()
        cut_off: list[bool] = []

        def stream() -> None:
            with socket.create_connection(("127.0.0.1", live.port), timeout=5) as s:
                s.sendall(head + b"Transfer-Encoding: chunked\r\n\r\n")
                chunk = b"10000\r\n" + b" " * 65536 + b"\r\n"
                try:
                    while not stop.is_set():
                        s.sendall(chunk)
                        time.sleep(0.001)
                except OSError:  # the server answered 413 and closed
                    cut_off.append(True)

        threads = [threading.Thread(target=stream) for _ in range(6)]
        for t in threads:
            t.start()
        try:
            assert play_get_stuck(live, moves=4) >= 4
            with urllib.request.urlopen(live.base + "/healthz", timeout=2) as r:
                assert r.status == 200
        finally:
            stop.set()
            for t in threads:
                t.join(timeout=10)
        assert len(cut_off) == 6
        declared.close()
        chunked.close()
