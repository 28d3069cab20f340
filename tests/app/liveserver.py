"""Helpers for tests against a real uvicorn subprocess (started as ``make run``
starts it, see ``bench/server.py``): the server with its log, a raw
websocket over a plain socket (to send what no client library would), and a
short game of Get Stuck played over websockets."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import socket
import struct
import tempfile
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

from bench.server import free_port, start_server, stop_server


@dataclass
class Live:
    """A running server: ``base`` is ``http://127.0.0.1:<port>``."""

    base: str
    port: int
    log_path: Path

    @property
    def ws_base(self) -> str:
        return self.base.replace("http://", "ws://")

    def log(self) -> str:
        """Everything the server has logged so far."""
        return self.log_path.read_text(errors="replace")

    def new_room(self, game: str = "get-stuck", headers: dict[str, str] | None = None) -> str:
        """A new room's id."""
        req = urllib.request.Request(self.base + "/api/rooms", data=json.dumps({"game": game}).encode(),
                                     headers={"Content-Type": "application/json", **(headers or {})})
        with urllib.request.urlopen(req, timeout=10) as r:
            return str(json.load(r)["room"])


@contextlib.contextmanager
def live_server(env: dict[str, str] | None = None) -> Iterator[Live]:
    """A server with ``env`` added to its environment, logging at info level
    to a file, stopped at the end."""
    fd, name = tempfile.mkstemp(prefix="cardboard-", suffix=".log")
    os.close(fd)
    path = Path(name)
    port = free_port()
    with path.open("wb") as log:
        proc = start_server(port, env or {}, log=log, log_level="info")
        try:
            yield Live(f"http://127.0.0.1:{port}", port, path)
        finally:
            stop_server(proc)
    path.unlink(missing_ok=True)


# ---- a websocket by hand ------------------------------------------------------------------

def raw_handshake(port: int, path: str, headers: dict[str, str] | None = None,
                  timeout: float = 10.0) -> tuple[socket.socket, bytes]:
    """Open a websocket to ``path`` over a plain socket; return the socket
    and what the server answered up to the end of its HTTP headers (the
    status line first). Frames that followed at once stay in the socket,
    except any bytes already read past the headers, which are returned too."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    key = base64.b64encode(os.urandom(16)).decode()
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    sock.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                  f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                  f"{extra}\r\n").encode())
    return sock, read_head(sock)


def read_head(sock: socket.socket) -> bytes:
    """What the server sends on ``sock`` up to the end of its HTTP headers
    (all of it if it closes first), and any bytes read past them."""
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = sock.recv(65536)
        if not chunk:
            break
        answer += chunk
    return answer


def client_frame(opcode: int, payload: bytes) -> bytes:
    """One masked websocket frame from a client (1 text, 2 binary, 8 close,
    10 pong), final."""
    mask = os.urandom(4)
    n = len(payload)
    head = bytes([0x80 | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + struct.pack(">H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack(">Q", n)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


Frame = tuple[int, bytes]


class FrameReader:
    """Reads server frames (opcode, payload) from a raw websocket ``sock``,
    starting with bytes already read (``buffered``)."""

    def __init__(self, sock: socket.socket, buffered: bytes = b"") -> None:
        self.sock = sock
        self.data = buffered

    def next(self) -> Frame | None:
        """The next frame, or ``None`` if the socket ended. Raises
        ``TimeoutError`` if the socket's timeout passes."""
        while True:
            frame, self.data = _split_frame(self.data)
            if frame is not None:
                return frame
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.data += chunk

    def until_close(self) -> tuple[list[Frame], int | None]:
        """The frames up to the server's close frame, and its close code
        (``None`` if the socket ended with no close frame)."""
        frames: list[Frame] = []
        while (frame := self.next()) is not None:
            frames.append(frame)
            if frame[0] == 8:
                return frames, struct.unpack(">H", frame[1][:2])[0] if len(frame[1]) >= 2 else None
        return frames, None


def _split_frame(data: bytes) -> tuple[Frame | None, bytes]:
    if len(data) < 2:
        return None, data
    opcode, n, at = data[0] & 0x0F, data[1] & 0x7F, 2
    if n == 126:
        if len(data) < 4:
            return None, data
        n, at = struct.unpack(">H", data[2:4])[0], 4
    elif n == 127:
        if len(data) < 10:
            return None, data
        n, at = struct.unpack(">Q", data[2:10])[0], 10
    if len(data) < at + n:
        return None, data
    return (opcode, data[at:at + n]), data[at + n:]


def after_headers(answer: bytes) -> bytes:
    """The bytes of a :func:`raw_handshake` answer past its HTTP headers."""
    return answer.split(b"\r\n\r\n", 1)[1]


# ---- a normal game --------------------------------------------------------------------------

def next_state(ws: ClientConnection, timeout: float = 10.0) -> dict[str, Any]:
    """The next ``state`` frame (other frames are skipped)."""
    while True:
        frame: dict[str, Any] = json.loads(ws.recv(timeout=timeout))
        if frame["type"] == "state":
            return frame


def next_reply(ws: ClientConnection, timeout: float = 5.0) -> dict[str, Any]:
    """The next frame that is not a ``spectators`` frame (presence, which
    comes a moment after someone comes or goes, whenever that is)."""
    while True:
        frame: dict[str, Any] = json.loads(ws.recv(timeout=timeout))
        if frame["type"] != "spectators":
            return frame


def play_get_stuck(live: Live, moves: int = 4, headers: dict[str, str] | None = None) -> int:
    """Play ``moves`` moves of a new Get Stuck room, two seated clients
    sending ``headers`` with their handshake; return the last version. Fails
    (an exception) if the server refuses or is too slow (10 s a frame)."""
    room = live.new_room(headers=headers)
    url = f"{live.ws_base}/ws/{room}"
    with connect(url, additional_headers=headers) as red, connect(url, additional_headers=headers) as black:
        last = {"red": next_state(red), "black": next_state(black)}
        socks = {"red": red, "black": black}
        for version, (seat, ws) in enumerate(socks.items(), start=1):
            ws.send(json.dumps({"type": "join", "seat": seat, "name": seat}))
            for s, peer in socks.items():
                last[s] = state_of(peer, version)
        for _ in range(moves):
            mover = last["red"]["to_move"][0]
            state = last[mover]
            socks[mover].send(json.dumps({"type": "move", "move": state["legal_moves"][0],
                                          "version": state["version"]}))
            for s, peer in socks.items():
                last[s] = state_of(peer, state["version"] + 1)
        return int(last["red"]["version"])


def state_of(ws: ClientConnection, version: int) -> dict[str, Any]:
    """The next state of ``version``; states of older versions (presence:
    someone connected or left) are skipped, a newer one fails."""
    while True:
        state = next_state(ws)
        assert state["version"] <= version, (state["version"], version)
        if state["version"] == version:
            return state
